package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/reservation"
)

// A hold or an appointment and the reservation of its time are two rows
// and, on PostgreSQL, one statement (DB.InsertReserved). ent still builds
// the hold's or the appointment's INSERT (its ids, defaults and checks):
// the transaction records it instead of sending it (recordingTx), and the
// reservation's insert carries it in a WITH. Why not two ent creates: each
// is a round trip, and every hold and every booking pays both while it
// holds the barber's lock.

// Reserve is the reservation of a hold's or an appointment's time.
type Reserve struct {
	AccountID, BarberID   string
	StartsAt, EndsAt      time.Time  // the buffer after an appointment included
	ExpiresAt             *time.Time // a hold's
	HoldID, AppointmentID *string
}

// InsertReserved writes a hold or an appointment, with save (its ent
// create's Save on the context it is given, which says what the row
// reserves), and the reservation of its time: on PostgreSQL in one
// statement, where save's INSERT is recorded and sent in a WITH before the
// reservation's; elsewhere one after the other.
func (db *DB) InsertReserved(ctx context.Context, tx *ent.Tx, save func(context.Context) (Reserve, error)) error {
	if db.Dialect != dialect.Postgres {
		if guarding(ctx) != nil {
			return errors.New("store: a guarded insert needs PostgreSQL")
		}
		r, err := save(ctx)
		if err != nil {
			return err
		}
		return createReservation(ctx, tx, r)
	}
	var r Reserve
	rec, err := recordStatement(ctx, func(ctx context.Context) (err error) {
		r, err = save(ctx)
		return err
	})
	if err != nil {
		return err
	}
	g := guarding(ctx)
	var ctes string
	var a sqlArgs
	if g != nil {
		if ctes, a, err = g.entries(ctx, rec, r); err != nil {
			return err
		}
	} else {
		a = sqlArgs(rec.args)
		// Names of their own: the statement that carries them has a w.
		ctes = `saved AS (` + rec.query + `),
reserved AS (` + insertReservation(&a, r, "") + `)`
	}
	if c := carrying(ctx); c.free() {
		c.ctes, c.args, c.guard = ctes, a, g
		return nil
	}
	return (&Carried{ctes: ctes, args: a, guard: g}).Flush(ctx, tx)
}

// createReservation writes r's reservation through ent, a statement of its
// own (SQLite).
func createReservation(ctx context.Context, tx *ent.Tx, r Reserve) error {
	return tx.Reservation.Create().SetAccountID(r.AccountID).SetBarberID(r.BarberID).
		SetStartsAt(r.StartsAt).SetEndsAt(r.EndsAt).SetNillableExpiresAt(r.ExpiresAt).
		SetNillableHoldID(r.HoldID).SetNillableAppointmentID(r.AppointmentID).Exec(ctx)
}

// insertReservation is the INSERT of r's reservation, its values bound to
// a; after, when not "", is a WITH entry whose rows the insert reads to
// the end first (all of them, as an aggregate does), so that what that
// entry writes comes before it.
func insertReservation(a *sqlArgs, r Reserve, after string) string {
	if after == "" {
		return insertReservationFrom(a, r, "")
	}
	return insertReservationFrom(a, r, `(SELECT count(*) FROM `+after+`) AS first`)
}

// insertReservationFrom is the INSERT of r's reservation, its values bound
// to a, selected from from (one row for one reservation), or, when from is
// "", its VALUES.
func insertReservationFrom(a *sqlArgs, r Reserve, from string) string {
	values := a.add(reservation.DefaultID()) + `::text, ` + a.add(r.AccountID) + `::text, ` + a.add(r.BarberID) + `::text, ` +
		a.add(r.StartsAt) + `::timestamptz, ` + a.add(r.EndsAt) + `::timestamptz, ` + a.add(nullTime(r.ExpiresAt)) + `::timestamptz, ` +
		a.add(nullString(r.HoldID)) + `::text, ` + a.add(nullString(r.AppointmentID)) + `::text`
	insert := `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, expires_at, hold_id, appointment_id)
`
	if from == "" {
		return insert + `VALUES (` + values + `)`
	}
	return insert + `SELECT ` + values + ` FROM ` + from
}

// Carried is a statement kept to be sent with the next one that can carry
// it (PostgreSQL): a booking's appointment and reservation ride in the
// WITH of its notification's statement (InsertNotification), one round
// trip fewer while the booking holds its barber's lock; a guarded one
// (Guarded) takes that lock there. Flush sends it alone if nothing did.
type Carried struct {
	ctes  string  // the statement as WITH entries; "" once sent, or none kept
	args  sqlArgs // their arguments, $1 on
	guard *Guard  // a guarded insert's (Guarded), which the carrying statement reports to
}

// carryKey is the context key of the *Carried that InsertReserved fills
// instead of sending its statement.
type carryKey struct{}

// Carry returns a context under which InsertReserved keeps its statement
// in the returned Carried instead of sending it (PostgreSQL; elsewhere it
// sends it, and the Carried stays empty). The caller sends it with the
// notification that follows, or with Flush.
func Carry(ctx context.Context) (context.Context, *Carried) {
	c := &Carried{}
	return context.WithValue(ctx, carryKey{}, c), c
}

// CarryExec runs exec, an ent statement that writes rows and reads none
// back (an update's Exec), so that it rides in ctx's Carried (Carry) on
// PostgreSQL: recorded, not sent, it goes in the WITH of the next
// statement that carries, before the rows it writes are read. Elsewhere,
// or when ctx carries nothing or carries a statement already, it is sent.
func (db *DB) CarryExec(ctx context.Context, exec func(context.Context) error) error {
	c := carrying(ctx)
	if db.Dialect != dialect.Postgres || !c.free() {
		return exec(ctx)
	}
	rec, err := recordStatement(ctx, exec)
	if err != nil {
		return err
	}
	c.ctes, c.args = `changed AS (`+rec.query+`)`, sqlArgs(rec.args)
	return nil
}

// free reports whether c keeps no statement yet (a nil c keeps none ever).
func (c *Carried) free() bool { return c != nil && c.ctes == "" }

// carrying is the Carried of ctx (Carry), or nil.
func carrying(ctx context.Context) *Carried {
	c, _ := ctx.Value(carryKey{}).(*Carried)
	return c
}

// take hands the kept statement's WITH entries and arguments to the
// statement that carries them, once, with its guard (nil: none), which
// that statement reports to (Guard.columns, Guard.done).
func (c *Carried) take() (string, sqlArgs, *Guard) {
	if c == nil || c.ctes == "" {
		return "", nil, nil
	}
	ctes, args, g := c.ctes, c.args, c.guard
	c.ctes, c.args, c.guard = "", nil, nil
	return ctes, args, g
}

// Flush sends the kept statement, if no statement carried it.
func (c *Carried) Flush(ctx context.Context, q Queryer) error {
	ctes, a, g := c.take()
	switch {
	case ctes == "":
		return nil
	case g != nil:
		return g.send(ctx, q, ctes, a)
	}
	return sendWith(ctx, q, ctes, a)
}

// sendWith sends a statement made of WITH entries alone (each a
// data-modifying statement, which runs whatever the statement selects).
func sendWith(ctx context.Context, q Queryer, ctes string, a sqlArgs) error {
	_, err := queryRows(ctx, q, `WITH `+ctes+` SELECT 1`, a, func(rows *sql.Rows) (struct{}, error) { return struct{}{}, drained(rows) })
	return err
}

// recordKey is the context key of the *recorded that a transaction's next
// statement fills instead of being sent.
type recordKey struct{}

// recorded is the statement an ent create sent on a context that records.
type recorded struct {
	query string
	args  []any
}

// recordStatement runs run (an ent create's Save or an update's Exec, one statement)
// on a context that records its statement instead of sending it, and
// returns the statement.
func recordStatement(ctx context.Context, run func(context.Context) error) (recorded, error) {
	rec := &recorded{}
	if err := run(context.WithValue(ctx, recordKey{}, rec)); err != nil {
		return recorded{}, err
	}
	if rec.query == "" {
		return recorded{}, errors.New("store: the ent statement recorded none")
	}
	return *rec, nil
}

// recordingDriver is a driver whose transactions record statements
// (recordingTx).
type recordingDriver struct{ dialect.Driver }

func (d recordingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return recordingTx{tx}, nil
}

// recordingTx records, instead of sending, the one Exec made on a context
// that records; another statement there is a mistake, and fails.
type recordingTx struct{ dialect.Tx }

func (t recordingTx) Exec(ctx context.Context, query string, args, v any) error {
	rec, ok := ctx.Value(recordKey{}).(*recorded)
	if !ok {
		return t.Tx.Exec(ctx, query, args, v)
	}
	a, ok := args.([]any)
	if rec.query != "" || !ok {
		return fmt.Errorf("store: a recorded create sent another statement, or arguments of type %T", args)
	}
	rec.query, rec.args = query, a
	if res, ok := v.(*sql.Result); ok {
		*res = driver.RowsAffected(1)
	}
	return nil
}

func (t recordingTx) Query(ctx context.Context, query string, args, v any) error {
	if _, ok := ctx.Value(recordKey{}).(*recorded); ok {
		return errors.New("store: a recorded create may only insert")
	}
	return t.Tx.Query(ctx, query, args, v)
}

// execQuerier is what ent's ExecContext and QueryContext of a client or a
// transaction ask of its driver; the recording wrappers pass them on.
type execQuerier interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// passOn is the execQuerier under a recording wrapper.
func passOn(x any) (execQuerier, error) {
	eq, ok := x.(execQuerier)
	if !ok {
		return nil, fmt.Errorf("store: %T runs no SQL of its own", x)
	}
	return eq, nil
}

func (d recordingDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	eq, err := passOn(d.Driver)
	if err != nil {
		return nil, err
	}
	return eq.ExecContext(ctx, query, args...)
}

func (d recordingDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	eq, err := passOn(d.Driver)
	if err != nil {
		return nil, err
	}
	return eq.QueryContext(ctx, query, args...)
}

func (t recordingTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	eq, err := passOn(t.Tx)
	if err != nil {
		return nil, err
	}
	return eq.ExecContext(ctx, query, args...)
}

func (t recordingTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	eq, err := passOn(t.Tx)
	if err != nil {
		return nil, err
	}
	return eq.QueryContext(ctx, query, args...)
}
