// Package floor is the database write floor barberd's creates are compared
// with: the essential SQL of one booking, run directly on the database
// through database/sql (lib/pq or modernc SQLite), with no HTTP, GraphQL,
// ent or validation in between.
//
// One create is one transaction on barberd's real tables, so their indexes,
// constraints, foreign keys and the no-overlap guarantee (an exclusion
// constraint on PostgreSQL, a trigger on SQLite) all count:
//
//  1. BEGIN (on SQLite barberd's DSN makes it BEGIN IMMEDIATE: the write lock)
//  2. the idempotency check: the key's appointment with the external reference
//  3. on PostgreSQL, the barber's lock: SELECT ... FOR UPDATE
//  4. the conflict check: the barber's reservations and time off overlapping
//     the slot, in one statement
//  5. the customer upsert on (account_id, phone), RETURNING its id
//  6. the appointment
//  7. its reservation
//  8. the appointment.created notification, with a JSON snapshot
//  9. the notification's delivery to the one subscribed key
//  10. COMMIT
//
// A retryable error (store.Retry: serialization failure, deadlock, busy
// SQLite) retries the whole transaction as barberd's own transactions are
// retried: up to 6 attempts with the same growing, jittered backoff.
//
// Each Create books a distinct slot: creates go round the target's barbers,
// each booked slot after slot, so a floor run never conflicts with itself.
package floor

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/pulid"
	"barberd/graph/store"
)

// maxAttempts is barberd's bound on a transaction's attempts (store's
// maxTxAttempts).
const maxAttempts = 6

// ErrSlotTaken is returned by Create when the conflict check finds the slot
// busy; a floor run on distinct slots never meets it.
var ErrSlotTaken = errors.New("floor: the slot is not free")

// ErrReferenceUsed is returned by Create when the idempotency check finds
// the external reference used before.
var ErrReferenceUsed = errors.New("floor: external reference used before")

// The statements of one create, in PostgreSQL form. Every placeholder
// appears once and in order, so the SQLite form is the same text with "?"
// (but for sqlConflicts, whose SQLite form is sqlConflictsSQLite).
const (
	sqlIdempotency = `SELECT id FROM appointments WHERE api_key_id = $1 AND external_reference = $2`
	sqlLockBarber  = `SELECT id FROM barbers WHERE id = $1 FOR UPDATE`
	// As barberd reads them: on PostgreSQL, reservations through the
	// no-overlap constraint's index (graph's scheduleRows).
	sqlConflicts = `SELECT starts_at, ends_at FROM reservations
WHERE barber_id = $1 AND tstzrange(starts_at, ends_at, '[)') && tstzrange($3, $2, '[)') AND (expires_at IS NULL OR expires_at > $4)` +
		sqlTimeOffConflicts
	sqlCustomer = `INSERT INTO customers (id, created_at, updated_at, name, phone, account_id)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (account_id, phone) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
RETURNING id`
	sqlAppointment = `INSERT INTO appointments (id, created_at, updated_at, external_reference, status, starts_at, ends_at,
source, version, account_id, unit_id, service_id, barber_id, customer_id, client_name, client_phone, api_key_id)
VALUES ($1, $2, $3, $4, 'confirmed', $5, $6, 'api', 1, $7, $8, $9, $10, $11, $12, $13, $14)`
	sqlReservation = `INSERT INTO reservations (id, starts_at, ends_at, account_id, barber_id, appointment_id)
VALUES ($1, $2, $3, $4, $5, $6)`
	sqlNotification = `INSERT INTO notifications (id, type, source, appointment, created_at, account_id, appointment_id)
VALUES ($1, 'appointment.created', 'api', $2, $3, $4, $5)`
	sqlDelivery = `INSERT INTO deliveries (id, account_id, api_key_id, notification_id) VALUES ($1, $2, $3, $4)`
)

// Statements returns the statements of one create in the dialect's form,
// in the order a create runs them (the barber lock only on PostgreSQL),
// between BEGIN and COMMIT.
func Statements(dia string) []string {
	q := queriesFor(dia)
	out := []string{q.idempotency}
	if q.lockBarber != "" {
		out = append(out, q.lockBarber)
	}
	return append(out, q.conflicts, q.customer, q.appointment, q.reservation, q.notification, q.delivery)
}

type queries struct {
	idempotency, lockBarber, conflicts, customer, appointment, reservation, notification, delivery string
}

// sqlConflictsSQLite is sqlConflicts without PostgreSQL's ranges.
const sqlConflictsSQLite = `SELECT starts_at, ends_at FROM reservations
WHERE barber_id = $1 AND starts_at < $2 AND ends_at > $3 AND (expires_at IS NULL OR expires_at > $4)` +
	sqlTimeOffConflicts

// sqlTimeOffConflicts is the time-off half of both forms of sqlConflicts.
const sqlTimeOffConflicts = `
UNION ALL
SELECT starts_at, ends_at FROM time_offs
WHERE barber_id = $5 AND starts_at < $6 AND ends_at > $7`

var placeholder = regexp.MustCompile(`\$[0-9]+`)

func queriesFor(dia string) queries {
	q := queries{
		idempotency: sqlIdempotency, lockBarber: sqlLockBarber, conflicts: sqlConflicts, customer: sqlCustomer,
		appointment: sqlAppointment, reservation: sqlReservation, notification: sqlNotification, delivery: sqlDelivery,
	}
	if dia == dialect.Postgres {
		return q
	}
	// SQLite has no row locks: BEGIN IMMEDIATE already holds the write lock.
	q.lockBarber = ""
	q.conflicts = sqlConflictsSQLite
	for _, s := range []*string{&q.idempotency, &q.conflicts, &q.customer, &q.appointment, &q.reservation, &q.notification, &q.delivery} {
		*s = placeholder.ReplaceAllString(*s, "?")
	}
	return q
}

// Target is what a floor's creates reference: rows that exist, as they
// would for a real create.
type Target struct {
	AccountID string
	UnitID    string
	ServiceID string
	// APIKeyID is the key that creates the appointments and the one key
	// subscribed to the account's notifications.
	APIKeyID string
	// BarberIDs are booked in turn, each slot after slot.
	BarberIDs []string
	// Start is the first slot of every barber.
	Start time.Time
	// Duration is the appointment's; Buffer follows it, reserved too.
	Duration, Buffer time.Duration
	// Phones are the customers' phones, in turn: an existing customer has
	// its name brought up to date. Without any, every create has a
	// customer of its own (+4915 and nine digits).
	Phones []string
}

// Floor runs creates on a target. It is safe for concurrent use.
type Floor struct {
	db      *sql.DB
	dialect string
	t       Target
	q       queries
	w       writeQueries
	barber  map[string]int // index in t.BarberIDs, by id
	moves   []atomic.Int64 // Reschedule's slots taken, by barber index
	run     string         // tells this floor's external references apart
	next    atomic.Int64   // creates started
	scratch bool           // the target is a scratch account Close removes
}

// New returns a floor creating on t through db, a database of the given
// dialect (dialect.SQLite or dialect.Postgres) opened as barberd opens it
// (store.Open). Close does not remove what it wrote.
func New(db *sql.DB, dia string, t Target) (*Floor, error) {
	switch {
	case dia != dialect.SQLite && dia != dialect.Postgres:
		return nil, fmt.Errorf("floor: unknown dialect %q", dia)
	case t.AccountID == "" || t.UnitID == "" || t.ServiceID == "" || t.APIKeyID == "" || len(t.BarberIDs) == 0:
		return nil, errors.New("floor: the target needs an account, unit, service, API key and barbers")
	case t.Duration <= 0 || t.Buffer < 0:
		return nil, errors.New("floor: the target needs a positive duration")
	}
	t.Start = t.Start.UTC().Truncate(time.Minute)
	t.BarberIDs = append([]string(nil), t.BarberIDs...)
	t.Phones = append([]string(nil), t.Phones...)
	f := &Floor{db: db, dialect: dia, t: t, q: queriesFor(dia), w: writeQueriesFor(dia), run: randomHex(4),
		barber: map[string]int{}, moves: make([]atomic.Int64, len(t.BarberIDs))}
	for i, id := range t.BarberIDs {
		f.barber[id] = i
	}
	return f, nil
}

// Target returns what the floor creates on.
func (f *Floor) Target() Target { return f.t }

// Creates returns how many creates were started.
func (f *Floor) Creates() int64 { return f.next.Load() }

// now is barberd's clock: UTC at microsecond precision (ent/schema.Now).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Create books the next distinct slot, as one transaction, retried like
// barberd's.
func (f *Floor) Create(ctx context.Context) error { return f.create(ctx, nil) }

// create is Create, saying what it booked in out (when not nil).
func (f *Floor) create(ctx context.Context, out *Booking) error {
	n, barberID, start := f.slot()
	c := create{
		barberID: barberID,
		start:    start,
		ref:      fmt.Sprintf("floor-%s-%d", f.run, n),
		name:     fmt.Sprintf("Floor Client %d", n),
	}
	if len(f.t.Phones) > 0 {
		c.phone = f.t.Phones[n%int64(len(f.t.Phones))]
	} else {
		c.phone = fmt.Sprintf("+4915%09d", n%1_000_000_000)
	}
	err := f.retry(ctx, func(tx *sql.Tx) error { return f.try(ctx, tx, &c) })
	if err == nil && out != nil {
		*out = Booking{ID: c.id, BarberID: c.barberID, Start: c.start}
	}
	return err
}

// create is what one Create books.
type create struct {
	id          string // the appointment's, once inserted
	barberID    string
	start       time.Time
	ref         string
	name, phone string
}

// snapshot is the appointment as the notification records it: the shape
// (not every field) of barberd's REST v1 appointment.
type snapshot struct {
	ID                string    `json:"id"`
	Status            string    `json:"status"`
	UnitID            string    `json:"unit_id"`
	ServiceID         string    `json:"service_id"`
	BarberID          string    `json:"barber_id"`
	StartsAtUTC       time.Time `json:"starts_at_utc"`
	EndsAtUTC         time.Time `json:"ends_at_utc"`
	DurationMinutes   int       `json:"duration_minutes"`
	Client            client    `json:"client"`
	ExternalReference string    `json:"external_reference"`
	CreatedAt         time.Time `json:"created_at"`
}

type client struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Phone string `json:"phone"`
}

// try is what one attempt at a create's transaction runs in tx.
func (f *Floor) try(ctx context.Context, tx *sql.Tx, c *create) error {
	t, q := &f.t, &f.q
	var prior string
	switch err := tx.QueryRowContext(ctx, q.idempotency, t.APIKeyID, c.ref).Scan(&prior); {
	case err == nil:
		return ErrReferenceUsed
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if err := f.lockBarber(ctx, tx, c.barberID); err != nil {
		return err
	}
	at := now()
	end := c.start.Add(t.Duration)
	busyUntil := end.Add(t.Buffer)
	if err := f.conflicts(ctx, tx, c.barberID, c.start, busyUntil, at); err != nil {
		return err
	}
	var customerID string
	err := tx.QueryRowContext(ctx, q.customer, pulid.New("cli"), at, at, c.name, c.phone, t.AccountID).Scan(&customerID)
	if err != nil {
		return err
	}
	aptID := pulid.New("apt")
	c.id = aptID
	if _, err = tx.ExecContext(ctx, q.appointment, aptID, at, at, c.ref, c.start, end,
		t.AccountID, t.UnitID, t.ServiceID, c.barberID, customerID, c.name, c.phone, t.APIKeyID); err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, q.reservation, pulid.New("rsv"), c.start, busyUntil, t.AccountID, c.barberID, aptID); err != nil {
		return err
	}
	snap, err := json.Marshal(snapshot{
		ID: aptID, Status: "confirmed", UnitID: t.UnitID, ServiceID: t.ServiceID, BarberID: c.barberID,
		StartsAtUTC: c.start, EndsAtUTC: end, DurationMinutes: int(t.Duration / time.Minute),
		Client:            client{ID: customerID, Name: c.name, Phone: c.phone},
		ExternalReference: c.ref, CreatedAt: at,
	})
	if err != nil {
		return err
	}
	ntfID := pulid.New("ntf")
	// []byte, as ent passes a JSON field.
	if _, err = tx.ExecContext(ctx, q.notification, ntfID, snap, at, t.AccountID, aptID); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, q.delivery, pulid.New("dlv"), t.AccountID, t.APIKeyID, ntfID)
	return err
}

// conflicts runs the conflict check: ErrSlotTaken when the barber has a
// blocking reservation or time off overlapping [start, end).
func (f *Floor) conflicts(ctx context.Context, tx *sql.Tx, barberID string, start, end, at time.Time) error {
	rows, err := tx.QueryContext(ctx, f.q.conflicts, barberID, end, start, at, barberID, end, start)
	if err != nil {
		return err
	}
	defer rows.Close()
	busy := 0
	for rows.Next() {
		var s, e any
		if err := rows.Scan(&s, &e); err != nil {
			return err
		}
		busy++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if busy > 0 {
		return ErrSlotTaken
	}
	return rows.Close()
}

// Scratch creates a scratch account of its own (a unit, a 30-minute
// service, the given number of barbers and an API key, inserted directly)
// and returns a floor creating on it. Creates go round the barbers, so
// concurrent creates wait for one another's barber lock as often as creates
// going round as many barbers elsewhere do. Close deletes every row of the
// account.
func Scratch(ctx context.Context, db *sql.DB, dia string, barbers int) (*Floor, error) {
	t := Target{
		AccountID: pulid.New("acc"), UnitID: pulid.New("unt"), ServiceID: pulid.New("svc"), APIKeyID: pulid.New("key"),
		// Tomorrow, on the hour: a barber's slots follow one another from there.
		Start:    time.Now().UTC().Truncate(time.Hour).Add(24 * time.Hour),
		Duration: 30 * time.Minute,
	}
	for range max(barbers, 1) {
		t.BarberIDs = append(t.BarberIDs, pulid.New("brb"))
	}
	f, err := New(db, dia, t)
	if err != nil {
		return nil, err
	}
	f.scratch = true
	if err := f.setUp(ctx); err != nil {
		_ = f.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("floor: set up: %w", err)
	}
	return f, nil
}

// setUp inserts the scratch account's rows, in one transaction.
func (f *Floor) setUp(ctx context.Context) error {
	t := &f.t
	at := now()
	bind := func(s string) string {
		if f.dialect == dialect.Postgres {
			return s
		}
		return placeholder.ReplaceAllString(s, "?")
	}
	scopes, _ := json.Marshal([]string{"appointments:read", "appointments:write", "notifications:read"})
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	type row struct {
		q    string
		args []any
	}
	rows := []row{
		{`INSERT INTO accounts (id, created_at, updated_at, name) VALUES ($1, $2, $3, $4)`,
			[]any{t.AccountID, at, at, "barberbench floor " + f.run}},
		{`INSERT INTO units (id, created_at, updated_at, name, timezone, address, phone, active,
			slot_step_minutes, min_lead_minutes, horizon_days, account_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			[]any{t.UnitID, at, at, "Floor unit", "UTC", "", "", true, 15, 0, 3650, t.AccountID}},
		{`INSERT INTO services (id, created_at, updated_at, name, description, duration_minutes, buffer_minutes,
			price_amount, price_currency, active, bookable_online, account_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			[]any{t.ServiceID, at, at, "Floor haircut", "", int(t.Duration / time.Minute), int(t.Buffer / time.Minute), 2500, "EUR", true, true, t.AccountID}},
		{`INSERT INTO api_keys (id, created_at, updated_at, name, prefix, secret_hash, scopes, account_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			[]any{t.APIKeyID, at, at, "barberbench floor", "floor", hex.EncodeToString(secret), scopes, t.AccountID}},
	}
	for i, id := range t.BarberIDs {
		rows = append(rows, row{`INSERT INTO barbers (id, created_at, updated_at, name, active, account_id) VALUES ($1, $2, $3, $4, $5, $6)`,
			[]any{id, at, at, fmt.Sprintf("Floor Barber %02d", i), true, t.AccountID}})
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	for _, r := range rows {
		if _, err := tx.ExecContext(ctx, bind(r.q), r.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// scratchTables are the tables a scratch account has rows in, in an order
// that deletes them without breaking a foreign key.
var scratchTables = []string{
	"deliveries", "notifications", "openings", "reservations", "appointments", "holds", "time_offs",
	"customers", "api_keys", "barbers", "services", "units",
}

// teardownIndexes are the foreign keys, referring to a row tearDown
// deletes, that have no index of their own to be checked by.
var teardownIndexes = []string{
	"notifications (appointment_id)", "waitlist_entries (appointment_id)", "appointments (customer_id)",
}

// Close removes a scratch floor's account and every row of it. A floor
// from New writes into its target and leaves what it wrote.
func (f *Floor) Close(ctx context.Context) error {
	if !f.scratch {
		return nil
	}
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if err = f.tearDown(ctx); err == nil || store.Classify(err) != store.Retry {
			break
		}
		time.Sleep(time.Duration(attempt*attempt) * 5 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("floor: tear down: %w", err)
	}
	f.scratch = false
	return nil
}

func (f *Floor) tearDown(ctx context.Context) error {
	arg := "$1"
	if f.dialect != dialect.Postgres {
		arg = "?"
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if f.dialect == dialect.Postgres {
		// The server's reminder job may insert a notification of one of
		// these appointments while the deletes run; locking them first
		// makes it wait, and then find them gone, instead of breaking the
		// delete of the appointments with a notification committed since
		// the notifications were deleted.
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM appointments WHERE account_id = "+arg+" FOR UPDATE", f.t.AccountID); err != nil {
			return fmt.Errorf("appointments: %w", err)
		}
		// Each deleted appointment and customer makes PostgreSQL look up
		// the rows that refer to it by columns barberd never searches
		// and so leaves unindexed (a notification's appointment, an
		// appointment's customer): a scan of the whole table per row, all
		// accounts' rows, which took minutes after a long run. Indexes
		// built in this transaction, and dropped before it commits, make
		// them lookups; no other transaction ever sees them.
		for i, on := range teardownIndexes {
			q := fmt.Sprintf("CREATE INDEX barberbench_teardown_%d ON %s", i, on)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("index %s: %w", on, err)
			}
		}
	}
	for _, table := range scratchTables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE account_id = "+arg, f.t.AccountID); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM accounts WHERE id = "+arg, f.t.AccountID); err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	if f.dialect == dialect.Postgres {
		for i := range teardownIndexes {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("DROP INDEX barberbench_teardown_%d", i)); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
