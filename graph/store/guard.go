package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"barberd/ent"
)

// A guarded write books a barber's time read unlocked.
//
// A writer that locks the barber first (LockedSchedule) holds the lock
// for three round trips before its commit: the lock, the day read under
// it, the insert. A guarded writer reads the day first, unlocked, checks
// the start in Go, and sends its insert with the barber's lock as a WITH
// entry of the insert's statement (the guard), which the statement's other
// entries wait for: the deletion of the barber's holds expired under the
// new time (the read left them out, and they would collide with it), then
// the row and its reservation. What changed since the read is checked
// under the lock by the database's no-overlap guarantee (the exclusion
// constraint on reservations), against every reservation committed: a
// reservation written since over the new time makes the statement fail
// with an overlap, and the writer, its transaction rolled back, books
// again the locking way. The rest of a day (hours, breaks, time off) a
// booking does not change, and an admin who changes it meanwhile could as
// well have changed it a moment later.

// Guard is the lock a guarded insert takes (Guarded), and what its
// statement deleted.
type Guard struct {
	barberID string
	now      time.Time
	used     bool
	expired  []Reservation
}

// guardKey is the context key of the *Guard an insert writes under.
type guardKey struct{}

// Guarded returns a context under which the next InsertReserved (on
// PostgreSQL: see SerialWrites) takes barberID's lock in its statement
// and deletes the reservations of the barber's holds expired at now under
// its time before it writes. An overlap it meets is returned as it came
// (Classify says Overlap): the transaction can only roll back.
func Guarded(ctx context.Context, barberID string, now time.Time) (context.Context, *Guard) {
	g := &Guard{barberID: barberID, now: now}
	return context.WithValue(ctx, guardKey{}, g), g
}

// guarding is the unused Guard of ctx, or nil; it is used from then on.
func guarding(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	if g == nil || g.used {
		return nil
	}
	g.used = true
	return g
}

// Expired is the reservations of expired holds the guarded statement
// deleted (the caller records them as freed).
func (g *Guard) Expired() []Reservation { return g.expired }

// insert sends saved (ent's INSERT, recorded) and r's reservation under g,
// with the deletion of expired holds in r's time, in one statement.
func (g *Guard) insert(ctx context.Context, tx *ent.Tx, saved recorded, r Reserve) error {
	// ent's "INSERT INTO t (…) VALUES (…)" becomes "… SELECT … FROM
	// guard": PostgreSQL types the values by their columns alike.
	q := saved.query
	i := strings.LastIndex(q, ") VALUES (")
	if i < 0 || !strings.HasSuffix(q, ")") || strings.Count(q, " VALUES (") != 1 {
		return errors.New("store: a guarded insert needs one row of VALUES")
	}
	insert := q[:i+1] + ` SELECT ` + q[i+len(") VALUES ("):len(q)-1] + ` FROM guard`
	a := sqlArgs(saved.args)
	acct, err := tenantFilter(ctx, a.add, "")
	if err != nil {
		return err
	}
	expired, err := expiredQuery(ctx, a.add, g.barberID, g.now, `
AND tstzrange(starts_at, ends_at, '[)') && tstzrange(`+a.add(r.StartsAt)+`::timestamptz, `+a.add(r.EndsAt)+`::timestamptz, '[)')
AND EXISTS (SELECT 1 FROM guard)`)
	if err != nil {
		return err
	}
	query := `WITH guard AS (SELECT id FROM barbers WHERE id = ` + a.add(g.barberID) + `::text` + acct + ` FOR UPDATE),
expired AS (` + expired + `),
saved AS (` + insert + `),
reserved AS (` + insertReservationFrom(&a, r, `(SELECT count(*) FROM expired) AS first, guard`) + `
RETURNING ` + reservationColumns + `)
SELECT true, ` + reservationColumns + ` FROM reserved
UNION ALL SELECT false, ` + reservationColumns + ` FROM expired`
	locked := false
	_, err = queryRows(ctx, tx, query, a, func(rows *sql.Rows) (struct{}, error) {
		for rows.Next() {
			var written bool
			x, err := scanReservation(rows, &written)
			if err != nil {
				return struct{}{}, err
			}
			if written {
				locked = true
			} else {
				g.expired = append(g.expired, x)
			}
		}
		return struct{}{}, rows.Err()
	})
	if err != nil {
		return err
	}
	if !locked {
		return &ent.NotFoundError{} // no such barber: as LockBarber's ent query says it
	}
	return nil
}
