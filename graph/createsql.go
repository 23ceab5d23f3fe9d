package graph

// Statements the booking path sends as SQL of its own, where ent would need
// more than one round trip for the same work. They use numbered parameters
// ($1, $2, ...), which both databases take: PostgreSQL natively, and SQLite
// as its $NNN parameters, which the modernc driver binds to the NNN-th
// argument (a parameter repeated is bound once). Identifiers need no quotes
// in either. The account filter ent's tenant interceptor adds to every query
// is added here by hand (tenantFilter).

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/customer"
	"barberd/ent/notification"
	"barberd/ent/schema"
	"barberd/ent/schema/tenant"
)

// sqlArgs collects the arguments of a statement and names their parameters.
type sqlArgs []any

// add appends an argument and returns its parameter.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// list appends arguments and returns their parameters, comma separated.
func (a *sqlArgs) list(vs []string) string {
	ps := make([]string, len(vs))
	for i, v := range vs {
		ps[i] = a.add(v)
	}
	return strings.Join(ps, ", ")
}

// tenantFilter returns the condition (" AND <alias>account_id = $n", or ""
// for a system context) that keeps a statement to the context's account, as
// ent's tenant interceptor does for its queries. Without an account or a
// system context it fails, as the interceptor does.
func tenantFilter(ctx context.Context, a *sqlArgs, alias string) (string, error) {
	if tenant.IsSystem(ctx) {
		return "", nil
	}
	id, ok := tenant.Account(ctx)
	if !ok {
		return "", schema.ErrNoTenant
	}
	return " AND " + alias + "account_id = " + a.add(id), nil
}

// queryer is an ent client or transaction: what runs SQL of its own.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Kinds of row scheduleRows returns.
const (
	rowReservation = iota + 1
	rowTimeOff
	rowHours
)

// scheduleRow is one row of a barber's day: a blocking reservation, a time
// off, or working hours.
type scheduleRow struct {
	kind     int
	id       string
	barberID string
	// reservations and time off
	startsAt, endsAt time.Time
	expiresAt        *time.Time // reservations of holds
	appointmentID    *string
	holdID           *string
	// working hours
	opensAt, closesAt string
	breaks            []string
}

// of reports whether the row is the reservation of one of the given
// appointments or holds.
func (r scheduleRow) of(ids []string) bool {
	for _, id := range ids {
		if (r.appointmentID != nil && *r.appointmentID == id) || (r.holdID != nil && *r.holdID == id) {
			return true
		}
	}
	return false
}

// scheduleRows reads in one statement what a day of the given barbers at a
// unit needs: their working hours on the weekday, their time off and their
// reservations overlapping [from, to), but those of holds expired at now.
func scheduleRows(ctx context.Context, c queryer, dia, unitID string, barberIDs []string, weekday int, from, to, now time.Time) ([]scheduleRow, error) {
	var a sqlArgs
	acct, err := tenantFilter(ctx, &a, "")
	if err != nil {
		return nil, err
	}
	ids := a.list(barberIDs)
	pFrom, pTo, pNow := a.add(from), a.add(to), a.add(now)
	pUnit, pDay := a.add(unitID), a.add(int64(weekday))
	overlaps := `starts_at < ` + pTo + ` AND ends_at > ` + pFrom
	if dia == dialect.Postgres {
		// The same condition in the form of the no-overlap constraint's
		// GiST index, which finds a barber's reservations over a span
		// without walking the barber's past ones (reservations are never
		// empty, so the two forms agree).
		overlaps = `tstzrange(starts_at, ends_at, '[)') && tstzrange(` + pFrom + `, ` + pTo + `, '[)')`
	}
	// The reservations come first: SQLite types a compound select's columns
	// by its first select, which makes the instants time.Time.
	q := `SELECT ` + strconv.Itoa(rowReservation) + `, id, barber_id, starts_at, ends_at, expires_at, appointment_id, hold_id, NULL
FROM reservations
WHERE barber_id IN (` + ids + `) AND ` + overlaps + `
AND (expires_at IS NULL OR expires_at > ` + pNow + `)` + acct + `
UNION ALL
SELECT ` + strconv.Itoa(rowTimeOff) + `, id, barber_id, starts_at, ends_at, NULL, NULL, NULL, NULL
FROM time_offs
WHERE barber_id IN (` + ids + `) AND starts_at < ` + pTo + ` AND ends_at > ` + pFrom + acct + `
UNION ALL
SELECT ` + strconv.Itoa(rowHours) + `, id, barber_id, NULL, NULL, NULL, opens_at, closes_at, CAST(breaks AS TEXT)
FROM working_hours
WHERE unit_id = ` + pUnit + ` AND barber_id IN (` + ids + `) AND weekday = ` + pDay + acct
	rows, err := c.QueryContext(ctx, q, a...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scheduleRow
	for rows.Next() {
		var (
			r                    scheduleRow
			kind                 int64
			starts, ends, expiry sql.NullTime
			ref1, ref2, breaks   sql.NullString
		)
		if err := rows.Scan(&kind, &r.id, &r.barberID, &starts, &ends, &expiry, &ref1, &ref2, &breaks); err != nil {
			return nil, err
		}
		r.kind = int(kind)
		switch r.kind {
		case rowReservation:
			r.startsAt, r.endsAt = starts.Time, ends.Time
			if expiry.Valid {
				r.expiresAt = &expiry.Time
			}
			if ref1.Valid {
				r.appointmentID = &ref1.String
			}
			if ref2.Valid {
				r.holdID = &ref2.String
			}
		case rowTimeOff:
			r.startsAt, r.endsAt = starts.Time, ends.Time
		case rowHours:
			r.opensAt, r.closesAt = ref1.String, ref2.String
			if breaks.Valid && breaks.String != "" {
				if err := json.Unmarshal([]byte(breaks.String), &r.breaks); err != nil {
					return nil, fmt.Errorf("working hours %s: breaks: %w", r.id, err)
				}
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

// deleteExpiredReservations deletes a barber's reservations expired at now
// and returns the holds they were for.
func deleteExpiredReservations(ctx context.Context, tx *ent.Tx, barberID string, now time.Time) ([]string, error) {
	var a sqlArgs
	q := `DELETE FROM reservations WHERE barber_id = ` + a.add(barberID) + ` AND expires_at <= ` + a.add(now)
	acct, err := tenantFilter(ctx, &a, "")
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, q+acct+` RETURNING hold_id`, a...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var holds []string
	for rows.Next() {
		var id sql.NullString
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if id.Valid {
			holds = append(holds, id.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return holds, rows.Close()
}

// upsertCustomer returns the account's customer record of the client's
// phone, creating it or bringing its name (and e-mail, when given) up to
// date, in one statement. The record is the dashboards'; the appointment
// records the client as given (clientRecord). The customer is built from
// what the statement returns; it is not bound to a client, so it has no
// edges to load (the GraphQL Customer type has none).
func upsertCustomer(ctx context.Context, tx *ent.Tx, accountID string, c clientRecord) (*ent.Customer, error) {
	now := customer.DefaultCreatedAt()
	cu := &ent.Customer{
		ID: customer.DefaultID(), AccountID: accountID, CreatedAt: now, UpdatedAt: customer.DefaultUpdatedAt(),
		Name: c.name, Phone: c.phone,
	}
	if c.email != nil {
		cu.Email = *c.email
	}
	// The checks ent's builder makes before it writes.
	checks := []struct {
		field string
		err   error
	}{
		{"id", customer.IDValidator(cu.ID)}, {"account_id", customer.AccountIDValidator(accountID)},
		{"name", customer.NameValidator(cu.Name)}, {"phone", customer.PhoneValidator(cu.Phone)},
	}
	if c.email != nil {
		checks = append(checks, struct {
			field string
			err   error
		}{"email", customer.EmailValidator(cu.Email)})
	}
	for _, ch := range checks {
		if ch.err != nil {
			return nil, fmt.Errorf(`ent: validator failed for field "Customer.%s": %w`, ch.field, ch.err)
		}
	}
	var a sqlArgs
	cols := `id, account_id, created_at, updated_at, name, phone`
	vals := strings.Join([]string{a.add(cu.ID), a.add(accountID), a.add(cu.CreatedAt), a.add(cu.UpdatedAt), a.add(cu.Name), a.add(cu.Phone)}, ", ")
	set := `name = excluded.name, updated_at = excluded.updated_at`
	if c.email != nil {
		cols, vals, set = cols+`, email`, vals+", "+a.add(cu.Email), set+`, email = excluded.email`
	}
	q := `INSERT INTO customers (` + cols + `) VALUES (` + vals + `)
ON CONFLICT (account_id, phone) DO UPDATE SET ` + set + `
RETURNING id, created_at, updated_at, name, email`
	var email sql.NullString
	if err := queryRow(ctx, tx, "customer upsert", q, a, &cu.ID, &cu.CreatedAt, &cu.UpdatedAt, &cu.Name, &email); err != nil {
		return nil, err
	}
	cu.Email = email.String
	return cu, nil
}

// queryRow runs a statement that returns one row (what names it in
// errors) and scans that row into dest.
func queryRow(ctx context.Context, c queryer, what, q string, args []any, dest ...any) error {
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

// insertNotification inserts a notification and returns, in the same
// statement, the keys it is owed to: every key of its account not revoked
// with the scope to read notifications, by id.
func insertNotification(ctx context.Context, tx *ent.Tx, dia string, n *ent.Notification) ([]string, error) {
	if err := notification.SourceValidator(n.Source); err != nil {
		return nil, fmt.Errorf(`ent: validator failed for field "Notification.source": %w`, err)
	}
	snapshot, err := json.Marshal(n.Appointment) // as ent stores a JSON field
	if err != nil {
		return nil, err
	}
	var a sqlArgs
	account := a.add(n.AccountID)
	vals := strings.Join([]string{
		a.add(n.ID), account, a.add(n.Type), a.add(n.AppointmentID), a.add(string(n.Source)),
		a.add(snapshot), a.add(nullTime(n.PreviousStartsAt)), a.add(n.CreatedAt),
	}, ", ")
	scope := a.add(ScopeNotificationsRead)
	owed := `SELECT json_group_array(k.id) FROM api_keys k
WHERE k.account_id = ` + account + ` AND k.revoked_at IS NULL
AND EXISTS (SELECT 1 FROM json_each(CAST(k.scopes AS TEXT)) s WHERE s.value = ` + scope + `)`
	if dia == dialect.Postgres {
		owed = `SELECT COALESCE(json_agg(k.id), '[]')::text FROM api_keys k
WHERE k.account_id = ` + account + ` AND k.revoked_at IS NULL AND k.scopes @> jsonb_build_array(` + scope + `::text)`
	}
	q := `INSERT INTO notifications (id, account_id, type, appointment_id, source, appointment, previous_starts_at, created_at)
VALUES (` + vals + `)
RETURNING (` + owed + `)`
	var list sql.NullString
	if err := queryRow(ctx, tx, "notification insert", q, a, &list); err != nil {
		return nil, err
	}
	var keys []string
	if list.Valid {
		if err := json.Unmarshal([]byte(list.String), &keys); err != nil {
			return nil, fmt.Errorf("keys owed a notification: %w", err)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

// detached returns an entity usable after the transaction that read or
// wrote it has ended: unwrap (the entity's Unwrap) hands a transactional
// entity back to its client, so edges can still be loaded lazily; an entity
// read outside any transaction, whose Unwrap panics, is returned as it is.
func detached[T any](e T, unwrap func() T) (out T) {
	defer func() {
		if recover() != nil {
			out = e
		}
	}()
	return unwrap()
}
