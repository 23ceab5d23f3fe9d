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
// it, the insert. A guarded writer reads the day first, with the barber's
// bookings version in the same snapshot (VersionedScheduleRows), checks the
// start in Go, and sends its insert with a guard: the lock of the barber's
// row as a WITH entry of the insert's statement, taken only if the
// version is still the one read. In READ COMMITTED, FOR UPDATE checks its
// condition again on the row's newest version after any wait, and every
// change to the barber's reservations raises that version in the changing
// transaction (see versions.go), so a guard that locks means no
// reservation of the barber changed since the day was read: the check in
// Go holds under the lock. The statement's other entries (the insert, and
// the deletion of the barber's holds expired under the new time, which
// the read left out) run only when the guard locked. When it did not, the
// statement wrote nothing, and the writer takes the lock and reads again.

// ErrGuardMoved is what a guarded insert returns when the barber's
// bookings changed since its day was read: it wrote nothing, and the
// writer must lock the barber and read the day again.
var ErrGuardMoved = errors.New("store: the barber's bookings changed since the day was read")

// Guard is the condition a guarded insert writes under (Guarded), and what
// its statement deleted.
type Guard struct {
	barberID string
	version  int64
	now      time.Time
	used     bool
	expired  []Reservation
}

// guardKey is the context key of the *Guard an insert writes under.
type guardKey struct{}

// Guarded returns a context under which the next InsertReserved (on
// PostgreSQL: see SerialWrites) writes only if barberID's bookings version
// is still version, taking the barber's lock in its statement, and
// deletes the reservations of holds expired at now under its time first.
func Guarded(ctx context.Context, barberID string, version int64, now time.Time) (context.Context, *Guard) {
	g := &Guard{barberID: barberID, version: version, now: now}
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
	barber := a.add(g.barberID) + `::text`
	query := `WITH guard AS (SELECT id FROM barbers WHERE id = ` + barber + ` AND bookings_version = ` + a.add(g.version) + `::bigint` + acct + ` FOR UPDATE),
expired AS (` + deleteReservationsQuery(`barber_id = `+barber+` AND expires_at <= `+a.add(g.now)+`::timestamptz
AND tstzrange(starts_at, ends_at, '[)') && tstzrange(`+a.add(r.StartsAt)+`::timestamptz, `+a.add(r.EndsAt)+`::timestamptz, '[)')`+acct+`
AND EXISTS (SELECT 1 FROM guard)`) + `),
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
		return ErrGuardMoved
	}
	return nil
}
