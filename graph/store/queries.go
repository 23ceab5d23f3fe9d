package store

// The SQL barberd writes by hand, outside migrations: statements on the
// booking path where ent would need more than one round trip for the same
// work. Everything else goes through ent. Each statement says why ent cannot
// do its job, and queries_test.go checks every table and column it names
// against ent's schema, so renaming one in ent/schema fails the tests.
//
// The statements use numbered parameters ($1, $2, ...), which both databases
// take: PostgreSQL natively, and SQLite as its $NNN parameters, which the
// modernc driver binds to the NNN-th argument (a parameter repeated is bound
// once). Identifiers need no quotes in either. The account filter ent's
// tenant interceptor adds to every query is added here by hand
// (tenantFilter). They run on an ent client or transaction (Queryer), so
// they share the caller's transaction.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/ent/notification"
	"barberd/ent/schema"
	"barberd/ent/schema/tenant"
)

// Queryer runs SQL of its own: an ent client or transaction (*ent.Client,
// *ent.Tx).
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// sqlArgs collects the arguments of a statement and names their parameters.
type sqlArgs []any

// add appends an argument and returns its parameter.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// tenantFilter returns the condition (" AND <alias>account_id = ", the
// account bound by bind, or "" for a system context) that keeps a statement to the context's account, as
// ent's tenant interceptor does for its queries. Without an account or a
// system context it fails, as the interceptor does.
func tenantFilter(ctx context.Context, bind func(any) string, alias string) (string, error) {
	id, err := tenantAccount(ctx)
	if id == nil || err != nil {
		return "", err
	}
	return " AND " + alias + "account_id = " + bind(id), nil
}

// tenantAccount is the account ctx is confined to, as a statement's
// value: nil in the system's context, which reaches every account.
func tenantAccount(ctx context.Context) (any, error) {
	if tenant.IsSystem(ctx) {
		return nil, nil
	}
	id, ok := tenant.Account(ctx)
	if !ok {
		return nil, schema.ErrNoTenant
	}
	return id, nil
}

// RowKind is what a ScheduleRow is.
type RowKind int

// Kinds of ScheduleRow.
const (
	RowReservation RowKind = iota + 1
	RowTimeOff
	RowHours
	rowExpired // LockedSchedule's deleted reservations of expired holds
	// RowBookings is a barber's bookings version (VersionedScheduleRows).
	RowBookings
	rowKeyHolds // a key's count riding in the read (RideKeyHolds)
	rowCustomer // a customer's upsert riding in the read (RideCustomer)
)

// ScheduleRow is one row of a barber's day: a blocking reservation, a time
// off, or working hours.
type ScheduleRow struct {
	Kind     RowKind
	ID       string
	BarberID string
	// reservations and time off
	StartsAt, EndsAt time.Time
	ExpiresAt        *time.Time // reservations of holds
	AppointmentID    *string
	HoldID           *string
	// working hours
	Weekday           int // 0 (Sunday) .. 6
	OpensAt, ClosesAt string
	Breaks            []string
	// bookings version (RowBookings)
	Bookings int64
	keyHolds KeyHolds // rowKeyHolds
}

// Of reports whether the row is the reservation of one of the given
// appointments or holds.
func (r ScheduleRow) Of(ids []string) bool {
	for _, id := range ids {
		if (r.AppointmentID != nil && *r.AppointmentID == id) || (r.HoldID != nil && *r.HoldID == id) {
			return true
		}
	}
	return false
}

// ScheduleRows reads in one statement what days of the given barbers at a
// unit need: their working hours on the weekdays (0 Sunday .. 6), their time
// off and their reservations overlapping [from, to), but those of holds
// expired at now.
//
// Why not ent: ent reads one entity type per query, so the same rows would
// cost three round trips (hours, time off, reservations), and every
// availability answer and create pays them; UNION ALL makes it one.
func ScheduleRows(ctx context.Context, c Queryer, dia, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time) ([]ScheduleRow, error) {
	return scheduleRows(ctx, c, dia, unitID, barberIDs, weekdays, from, to, now, false)
}

// VersionedScheduleRows is ScheduleRows with a RowBookings row for each of
// the barbers found: their bookings versions in the statement's snapshot,
// the one its other rows are read in. A cache can keep the days made of the
// rows under those versions without reading them first (package fresh).
func VersionedScheduleRows(ctx context.Context, c Queryer, dia, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time) ([]ScheduleRow, error) {
	return scheduleRows(ctx, c, dia, unitID, barberIDs, weekdays, from, to, now, true)
}

func scheduleRows(ctx context.Context, c Queryer, dia, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time, bookings bool) ([]ScheduleRow, error) {
	out := make([]ScheduleRow, 0, 64)
	err := EachScheduleRow(ctx, c, dia, unitID, barberIDs, weekdays, from, to, now, bookings, func(r *ScheduleRow) error {
		out = append(out, r.clone())
		return nil
	})
	return out, err
}

// EachScheduleRow is ScheduleRows (with bookings, VersionedScheduleRows)
// handing each row to each as it is read, rather than keeping them all:
// the row, and what its pointers point to, are each's until it returns.
// A day's read runs to a hundred rows and more, and its reader keeps none.
func EachScheduleRow(ctx context.Context, c Queryer, dia, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time, bookings bool, each func(*ScheduleRow) error) error {
	var a sqlArgs
	q, err := scheduleQuery(ctx, a.add, dia, unitID, barberIDs, weekdays, from, to, now, bookings)
	if err != nil {
		return err
	}
	ride := ridingKeyHolds(ctx)
	if ride != nil {
		// A guarded hold's key's count (RideKeyHolds) rides in its read.
		count, err := ride.countQuery(ctx, a.add)
		if err != nil {
			return err
		}
		q += `
UNION ALL
SELECT ` + strconv.Itoa(int(rowKeyHolds)) + `, '', '', NULL, NULL, NULL, CAST(kh.most AS TEXT), NULL, NULL, kh.active
FROM (` + count + `) AS kh (most, active)`
		each = takeKind(each, rowKeyHolds, func(r *ScheduleRow) { ride.kh, ride.counted = r.keyHolds, true })
	}
	if cr := riding(ctx); cr != nil && dia == dialect.Postgres {
		// A guarded create's customer (RideCustomer) rides in its read.
		upsert, err := customerQuery(a.add, cr.c)
		if err != nil {
			return err
		}
		q = `WITH customer AS (` + upsert + `)
` + q + `
UNION ALL
SELECT ` + strconv.Itoa(int(rowCustomer)) + `, id, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM customer`
		each = takeKind(each, rowCustomer, func(r *ScheduleRow) { cr.id = r.ID })
	}
	_, err = queryRows(ctx, c, q, a, func(rows *sql.Rows) (struct{}, error) {
		return struct{}{}, scanSchedule(rows, each)
	})
	return err
}

// takeKind hands the rows of kind (a ride's, which the read's caller never
// sees) to take, and the others to each.
func takeKind(each func(*ScheduleRow) error, kind RowKind, take func(*ScheduleRow)) func(*ScheduleRow) error {
	return func(r *ScheduleRow) error {
		if r.Kind != kind {
			return each(r)
		}
		take(r)
		return nil
	}
}

// clone is r with pointers of its own.
func (r *ScheduleRow) clone() ScheduleRow {
	c := *r
	if r.ExpiresAt != nil {
		c.ExpiresAt = new(*r.ExpiresAt)
	}
	if r.AppointmentID != nil {
		c.AppointmentID = new(*r.AppointmentID)
	}
	if r.HoldID != nil {
		c.HoldID = new(*r.HoldID)
	}
	return c
}

// queryRows runs q and reads its result with scan.
func queryRows[T any](ctx context.Context, c Queryer, q string, args []any, scan func(*sql.Rows) (T, error)) (T, error) {
	var zero T
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return zero, err
	}
	defer rows.Close()
	out, err := scan(rows)
	if err != nil {
		return zero, err
	}
	return out, rows.Close()
}

// nextResult moves a simple query's rows to its next result set, which
// what names in the error when there is none; with drain, it first passes
// over what is left of the current one. (Not after Next said false: lib/pq
// would read on into the next result set.)
func nextResult(rows *sql.Rows, what string, drain bool) error {
	for drain && rows.Next() {
	}
	if !rows.NextResultSet() {
		return errors.Join(rows.Err(), fmt.Errorf("%s: no result", what))
	}
	return nil
}

// scheduleQuery is ScheduleRows' statement, its values named by bind; with
// bookings, VersionedScheduleRows'.
func scheduleQuery(ctx context.Context, bind func(any) string, dia, unitID string, barberIDs []string, weekdays []int, from, to, now time.Time, bookings bool) (string, error) {
	acct, err := tenantFilter(ctx, bind, "")
	if err != nil {
		return "", err
	}
	ps := make([]string, len(barberIDs))
	for i, id := range barberIDs {
		ps[i] = bind(id)
	}
	ids := strings.Join(ps, ", ")
	pFrom, pTo, pNow := bind(from), bind(to), bind(now)
	pUnit := bind(unitID)
	days := make([]string, len(weekdays))
	for i, d := range weekdays {
		days[i] = bind(int64(d))
	}
	overlaps := `starts_at < ` + pTo + ` AND ends_at > ` + pFrom
	if dia == dialect.Postgres {
		// The same condition in the form of the no-overlap constraint's
		// GiST index, which finds a barber's reservations over a span
		// without walking the barber's past ones (reservations are never
		// empty, so the two forms agree).
		overlaps = `tstzrange(starts_at, ends_at, '[)') && tstzrange(` + pFrom + `, ` + pTo + `, '[)')`
	}
	// The reservations come first: SQLite types a compound select's columns
	// by its first select, which makes the instants time.Time. PostgreSQL
	// types a column of NULLs in the first two selects as text, so the
	// weekday's NULL is cast to match the third.
	q := `SELECT ` + strconv.Itoa(int(RowReservation)) + `, id, barber_id, starts_at, ends_at, expires_at, appointment_id, hold_id, NULL, CAST(NULL AS INTEGER)
FROM reservations
WHERE barber_id IN (` + ids + `) AND ` + overlaps + `
AND (expires_at IS NULL OR expires_at > ` + pNow + `)` + acct + `
UNION ALL
SELECT ` + strconv.Itoa(int(RowTimeOff)) + `, id, barber_id, starts_at, ends_at, NULL, NULL, NULL, NULL, NULL
FROM time_offs
WHERE barber_id IN (` + ids + `) AND starts_at < ` + pTo + ` AND ends_at > ` + pFrom + acct + `
UNION ALL
SELECT ` + strconv.Itoa(int(RowHours)) + `, id, barber_id, NULL, NULL, NULL, opens_at, closes_at, CAST(breaks AS TEXT), weekday
FROM working_hours
WHERE unit_id = ` + pUnit + ` AND barber_id IN (` + ids + `) AND weekday IN (` + strings.Join(days, ", ") + `)` + acct
	if bookings {
		kind := strconv.Itoa(int(RowBookings))
		if dia == dialect.Postgres {
			// Each barber is found by its key, one lookup each, whatever
			// the table's statistics say: a subquery per id, which the
			// planner runs as it is written. A join of the ids with
			// barbers (or ids IN a list) left the plan to the statistics,
			// and generic plans scanned the account's barbers (a hash
			// join, or the account's index), comparing every row with
			// every id: 0.1 ms of a cold day's 0.3 with 12 barbers among
			// 260. A barber not found (or another account's) gets a NULL
			// version, and no row (scanSchedule).
			q += `
UNION ALL
SELECT ` + kind + `, wanted.id, wanted.id, NULL, NULL, NULL, NULL, NULL, NULL,
(SELECT CAST(bookings_version AS BIGINT) FROM barbers WHERE barbers.id = wanted.id` + acct + `)
FROM unnest(ARRAY[` + ids + `]::text[]) AS wanted (id)`
		} else {
			q += `
UNION ALL
SELECT ` + kind + `, id, id, NULL, NULL, NULL, NULL, NULL, NULL, CAST(bookings_version AS BIGINT)
FROM barbers WHERE id IN (` + ids + `)` + acct
		}
	}
	return q, nil
}

// scanSchedule reads the rows (a result set, not closed) of scheduleQuery,
// handing each to each (see EachScheduleRow).
func scanSchedule(rows *sql.Rows, each func(*ScheduleRow) error) error {
	// The scan's targets are made once: Scan takes them through
	// interfaces, so each would be a heap object of its own, every row (a
	// day runs to a hundred rows and more).
	var (
		kind                 int64
		id, barber           string
		starts, ends, expiry sql.NullTime
		ref1, ref2, breaks   sql.NullString
		weekday              sql.NullInt64
		r                    ScheduleRow
	)
	targets := []any{&kind, &id, &barber, &starts, &ends, &expiry, &ref1, &ref2, &breaks, &weekday}
	for rows.Next() {
		if err := rows.Scan(targets...); err != nil {
			return err
		}
		r = ScheduleRow{Kind: RowKind(kind), ID: id, BarberID: barber}
		switch r.Kind {
		case RowReservation, rowExpired:
			r.StartsAt, r.EndsAt = starts.Time, ends.Time
			if expiry.Valid {
				r.ExpiresAt = &expiry.Time
			}
			if ref1.Valid {
				r.AppointmentID = &ref1.String
			}
			if ref2.Valid {
				r.HoldID = &ref2.String
			}
		case RowTimeOff:
			r.StartsAt, r.EndsAt = starts.Time, ends.Time
		case RowBookings:
			if !weekday.Valid { // a barber not found (scheduleQuery)
				continue
			}
			r.Bookings = weekday.Int64
		case rowKeyHolds:
			r.keyHolds = KeyHolds{Active: int(weekday.Int64)}
			if ref1.Valid {
				n, err := strconv.Atoi(ref1.String)
				if err != nil {
					return fmt.Errorf("a key's cap: %w", err)
				}
				r.keyHolds.Cap = &n
			}
		case RowHours:
			r.OpensAt, r.ClosesAt, r.Weekday = ref1.String, ref2.String, int(weekday.Int64)
			if breaks.Valid && breaks.String != "" {
				var err error
				if r.Breaks, err = parseBreaks(breaks.String); err != nil {
					return fmt.Errorf("working hours %s: breaks: %w", r.ID, err)
				}
			}
		}
		if err := each(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// parseBreaks reads breaks as JSON, a list of strings; the form ent writes
// them in (plain strings: they are times of day) without encoding/json,
// which weighed on every day's read (a row of hours a barber and weekday).
func parseBreaks(s string) ([]string, error) {
	if out, ok := plainStrings(s); ok {
		return out, nil
	}
	var out []string
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

// plainStrings reads a JSON list of strings that need no unescaping (no
// backslash, control byte or invalid UTF-8); false for anything else.
func plainStrings(s string) ([]string, bool) {
	const space = " \t\r\n" // JSON's
	inner, ok := strings.CutPrefix(strings.Trim(s, space), "[")
	if inner, ok2 := strings.CutSuffix(inner, "]"); ok && ok2 && utf8.ValidString(inner) {
		if strings.Trim(inner, space) == "" {
			return []string{}, true
		}
		out := make([]string, 0, strings.Count(inner, ",")+1)
		for part := range strings.SplitSeq(inner, ",") {
			part = strings.Trim(part, space)
			if len(part) < 2 || part[0] != '"' || part[len(part)-1] != '"' {
				return nil, false
			}
			v := part[1 : len(part)-1]
			for i := range len(v) {
				if v[i] < 0x20 || v[i] == '"' || v[i] == '\\' {
					return nil, false
				}
			}
			out = append(out, v)
		}
		return out, true
	}
	return nil, false
}

// Owed is who a notification is owed to: the API keys that read the
// polling feed, and the webhook endpoints it is sent to, each by id, sorted.
// Fed are the keys and Queued the endpoints whose deliveries the
// notification's statement inserted itself; the caller inserts the others'.
type Owed struct {
	Keys, Endpoints, Fed, Queued []string
}

// DeliveryIDs are the ids InsertNotification gives the deliveries it
// inserts itself (PostgreSQL only): the feed rows of the keys (Keys) and
// the webhook deliveries (Webhooks), one each, as far as they go.
type DeliveryIDs struct {
	Keys, Webhooks []string
}

// InsertNotification inserts a notification and returns, in the same
// statement, who it is owed to: the account's keys not revoked with
// readScope, and its enabled webhook endpoints subscribed to the type. On
// PostgreSQL it also inserts the keys' feed rows and the webhook
// deliveries, with the ids it is given; those left over (all of them on
// SQLite) are the caller's.
func InsertNotification(ctx context.Context, c Queryer, dia string, n Note, readScope string, ids DeliveryIDs) (Owed, error) {
	// Why not ent: ent's create returns only the new row's id, so finding
	// the keys and endpoints would be more round trips on every create,
	// cancel and reschedule; RETURNING (subquery) makes it one, and an
	// account without webhooks pays an index lookup for them. The
	// deliveries inserted in the same statement spare a booking's
	// transaction two more round trips while it holds its barber's lock.
	// ent's checks do not run on this statement, so it makes the one that
	// can fail (the source enum).
	if err := notification.SourceValidator(n.Source); err != nil {
		return Owed{}, fmt.Errorf(`ent: validator failed for field "Notification.source": %w`, err)
	}
	// A booking's appointment and reservation kept to ride along (Carry)
	// come first in the WITH, their arguments first.
	// So does an appointment's freeing (RideFreeing), after them.
	carried, a := "", sqlArgs(nil)
	var ride *FreeRide
	var guard *Guard // the carried insert's, if guarded: the notification is written from its lock's row
	if dia == dialect.Postgres {
		if carried, a, guard = carrying(ctx).take(); carried != "" {
			carried += ",\n"
		}
		if ride = freeRiding(ctx); ride != nil {
			entries, err := ride.entries(ctx, &a)
			if err != nil {
				return Owed{}, err
			}
			carried += entries + ",\n"
			if ride.guard != nil {
				guard = ride.guard
			}
		}
	}
	account := a.add(n.AccountID)
	typ := a.add(n.Type)
	created := a.add(n.CreatedAt)
	target := a.add(nullString(n.APIKeyID))
	vals := strings.Join([]string{
		a.add(n.ID), account, typ, a.add(nullString(n.AppointmentID)), a.add(string(n.Source)),
		a.add(jsonColumn(n.Appointment)), a.add(nullTime(n.PreviousStartsAt)), created, target, a.add(jsonColumn(n.Offer)),
	}, ", ")
	scope := a.add(readScope)
	values := `VALUES (` + vals + `)`
	if guard != nil {
		values = `SELECT ` + vals + ` FROM guard` // once the barber is locked, if there
	}
	insert := `INSERT INTO notifications (id, account_id, type, appointment_id, source, appointment, previous_starts_at, created_at, api_key_id, offer)
` + values
	// A notification with a target key is owed to that key only.
	var q string
	if dia == dialect.Postgres {
		hooks := a.add(pq.StringArray(ids.Webhooks))
		feeds := a.add(pq.StringArray(ids.Keys))
		q = `WITH ` + carried + `n AS (` + insert + ` RETURNING id),
k AS (SELECT k.id, row_number() OVER (ORDER BY k.id) AS i FROM api_keys k
WHERE k.account_id = ` + account + ` AND k.revoked_at IS NULL AND k.scopes @> jsonb_build_array(` + scope + `::text)
AND (` + target + `::text IS NULL OR k.id = ` + target + `::text)),
d AS (INSERT INTO deliveries (id, account_id, api_key_id, notification_id)
SELECT (` + feeds + `::text[])[k.i], ` + account + `, k.id, n.id
FROM n CROSS JOIN k WHERE k.i <= cardinality(` + feeds + `::text[])
RETURNING api_key_id),
e AS (SELECT we.id, row_number() OVER (ORDER BY we.id) AS i FROM webhook_endpoints we
WHERE we.account_id = ` + account + ` AND we.enabled
AND (jsonb_array_length(we.event_types) = 0 OR we.event_types @> jsonb_build_array(` + typ + `::text))),
w AS (INSERT INTO webhook_deliveries (id, account_id, endpoint_id, notification_id, status, attempt_count, created_at, next_attempt_at)
SELECT (` + hooks + `::text[])[e.i], ` + account + `, e.id, n.id, 'pending', 0, ` + created + `, ` + created + `
FROM n CROSS JOIN e WHERE e.i <= cardinality(` + hooks + `::text[])
RETURNING endpoint_id)
SELECT (SELECT COALESCE(json_agg(k.id), '[]')::text FROM k),
(SELECT COALESCE(json_agg(e.id), '[]')::text FROM e),
(SELECT COALESCE(json_agg(d.api_key_id), '[]')::text FROM d),
(SELECT COALESCE(json_agg(w.endpoint_id), '[]')::text FROM w)`
		if ride != nil {
			q += `, ` + rideColumns
		}
		if guard != nil {
			q += `, ` + guard.columns()
		}
	} else {
		q = insert + `
RETURNING (SELECT json_group_array(k.id) FROM api_keys k
WHERE k.account_id = ` + account + ` AND k.revoked_at IS NULL
AND EXISTS (SELECT 1 FROM json_each(CAST(k.scopes AS TEXT)) s WHERE s.value = ` + scope + `)
AND (` + target + ` IS NULL OR k.id = ` + target + `)),
(SELECT json_group_array(e.id) FROM webhook_endpoints e
WHERE e.account_id = ` + account + ` AND e.enabled
AND (json_array_length(CAST(e.event_types AS TEXT)) = 0
OR EXISTS (SELECT 1 FROM json_each(CAST(e.event_types AS TEXT)) t WHERE t.value = ` + typ + `))),
'[]', '[]'`
	}
	var keys, endpoints, fed, queued sql.NullString
	dest := []any{&keys, &endpoints, &fed, &queued}
	var rode rideScan
	if ride != nil {
		dest = append(dest, rode.dest()...)
	}
	var guarded guardScan
	if guard != nil {
		dest = append(dest, guard.dest(&guarded)...)
	}
	if err := queryRow(ctx, c, "notification insert", q, a, dest...); err != nil {
		return Owed{}, err
	}
	if ride != nil {
		ride.done(&rode)
	}
	if guard != nil {
		if err := guard.done(&guarded); err != nil {
			return Owed{}, err
		}
	}
	var out Owed
	for _, l := range []struct {
		list sql.NullString
		ids  *[]string
	}{{keys, &out.Keys}, {endpoints, &out.Endpoints}, {fed, &out.Fed}, {queued, &out.Queued}} {
		if l.list.Valid {
			if err := json.Unmarshal([]byte(l.list.String), l.ids); err != nil {
				return Owed{}, fmt.Errorf("owed a notification: %w", err)
			}
		}
		sort.Strings(*l.ids)
	}
	return out, nil
}

// queryRow runs a statement that returns one row (what names it in
// errors) and scans that row into dest.
func queryRow(ctx context.Context, c Queryer, what, q string, args []any, dest ...any) error {
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%s returned no row", what)
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}

func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// jsonColumn is encoded JSON as ent stores a JSON field's ([]byte; nil:
// SQL NULL).
func jsonColumn(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return []byte(b)
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}
