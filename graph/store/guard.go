package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"barberd/ent"
	"barberd/ent/hold"
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
//
// A booking's guarded insert rides in the statement of its event (Carry,
// InsertNotification), which then writes the event from the guard's row
// too: the whole booking is one statement under the barber's lock.
//
// A booking with a hold reads the hold unlocked too, and its statement
// consumes it under the lock (Guard.Consuming): the hold recorded
// consumed only if it is still active then, its reservation deleted, and
// the guard's row, which everything else the statement writes is selected
// from, there only if it was. A hold's status only ever leaves active,
// and its barber, service and time never change, so what the read found
// wrong with it stays wrong; what it found right the statement checks
// again, under the lock, where every change to the hold is made.

// Guard is the lock a guarded insert takes (Guarded), and what its
// statement deleted.
type Guard struct {
	barberID string
	now      time.Time
	holdID   string // the hold the statement consumes (Consuming), or ""
	used     bool
	written  string // the WITH entry of the reservation it writes
	expired  []Reservation
}

// ErrHoldGone is what a guarded write that consumes a hold (Consuming)
// fails with when, under the barber's lock, the hold was no longer active
// (or the barber not there): the statement wrote nothing.
var ErrHoldGone = errors.New("store: the hold to consume is no longer active")

// Consuming has g's statement consume the active hold holdID, of g's
// barber, before it writes: the hold recorded consumed and its
// reservation deleted, under the lock; when the hold is no longer active
// then, the statement writes nothing and fails with ErrHoldGone. It
// returns g.
func (g *Guard) Consuming(holdID string) *Guard {
	g.holdID = holdID
	return g
}

// guardKey is the context key of the *Guard an insert writes under.
type guardKey struct{}

// Guarded returns a context under which the next InsertReserved (on
// PostgreSQL: see SerialWrites) takes barberID's lock in its statement
// and deletes the reservations of the barber's holds expired at now under
// its time before it writes (carried, in the statement that carries it).
// An overlap it meets is returned as it came (Classify says Overlap): the
// transaction can only roll back. A barber not there is an
// ent.NotFoundError, and nothing is written.
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

// Used reports whether a write took the guard (a write that did not took
// no lock).
func (g *Guard) Used() bool { return g.used }

// Expired is the reservations of expired holds the guarded statement
// deleted (the caller records them as freed).
func (g *Guard) Expired() []Reservation { return g.expired }

// entries are the guarded insert's WITH entries, their values bound to
// the arguments returned (saved's first): the guard's (lockEntries); saved
// (ent's INSERT, recorded) and reserved, r's reservation, each a row from
// guard (none when the barber is not there), the reservation once the
// deletion is read to its end (after). A statement that carries them
// selects g.columns().
func (g *Guard) entries(ctx context.Context, saved recorded, r Reserve) (string, sqlArgs, error) {
	// ent's "INSERT INTO t (…) VALUES (…)" becomes "… SELECT … FROM
	// guard": PostgreSQL types the values by their columns alike.
	insert, err := fromGuard(saved.query)
	if err != nil {
		return "", nil, err
	}
	a := sqlArgs(saved.args)
	lock, err := g.lockEntries(ctx, &a, r)
	if err != nil {
		return "", nil, err
	}
	g.written = "reserved"
	return lock + `,
saved AS (` + insert + `),
reserved AS (` + insertReservationFrom(&a, r, g.after()) + `
RETURNING id)`, a, nil
}

// lockEntries are the WITH entries of g's lock, their values bound to a:
// guard, the barber's row locked; expired, the deletion of the barber's
// holds expired under r's time once the lock is taken. Consuming a hold,
// the lock is locked, and guard its row once consumed records the hold
// consumed under it and released deletes its reservation.
func (g *Guard) lockEntries(ctx context.Context, a *sqlArgs, r Reserve) (string, error) {
	acct, err := tenantFilter(ctx, a.add, "")
	if err != nil {
		return "", err
	}
	barber := a.add(g.barberID) + `::text`
	lock := `guard AS (SELECT id FROM barbers WHERE id = ` + barber + acct + ` FOR UPDATE)`
	if g.holdID != "" {
		h := a.add(g.holdID) + `::text`
		lock = `locked AS (SELECT id FROM barbers WHERE id = ` + barber + acct + ` FOR UPDATE),
consumed AS (UPDATE holds SET status = 'consumed', updated_at = ` + a.add(hold.UpdateDefaultUpdatedAt()) + `::timestamptz
WHERE id = ` + h + ` AND barber_id = ` + barber + ` AND status = 'active'` + acct + ` AND EXISTS (SELECT 1 FROM locked)
RETURNING id),
released AS (` + deleteReservationsQuery(`hold_id IN (SELECT id FROM consumed)`+acct) + `),
guard AS (SELECT id FROM locked WHERE EXISTS (SELECT 1 FROM consumed))`
	}
	expired, err := expiredQuery(ctx, a.add, g.barberID, g.now, `
AND tstzrange(starts_at, ends_at, '[)') && tstzrange(`+a.add(r.StartsAt)+`::timestamptz, `+a.add(r.EndsAt)+`::timestamptz, '[)')
AND EXISTS (SELECT 1 FROM guard)`)
	if err != nil {
		return "", err
	}
	return lock + `,
expired AS (` + expired + `)`, nil
}

// after is what the reservation's insert selects from (one row, once the
// barber is locked, the expired holds deleted and, consuming a hold, its
// reservation deleted: each read to its end first).
func (g *Guard) after() string {
	if g.holdID != "" {
		return `(SELECT count(*) FROM expired) AS cleared, (SELECT count(*) FROM released) AS taken, guard`
	}
	return `(SELECT count(*) FROM expired) AS cleared, guard`
}

// fromGuard is insert, an INSERT of one row of VALUES, as an INSERT of
// that row selected from guard: the row is written once the barber is
// locked, and not at all when the barber is not there.
func fromGuard(insert string) (string, error) {
	i := strings.LastIndex(insert, ") VALUES (")
	if i < 0 || !strings.HasSuffix(insert, ")") || strings.Count(insert, " VALUES (") != 1 {
		return "", errors.New("store: a guarded insert needs one row of VALUES")
	}
	return insert[:i+1] + ` SELECT ` + insert[i+len(") VALUES ("):len(insert)-1] + ` FROM guard`, nil
}

// columns are the columns a statement with a guarded write's entries
// selects for it (guardScan): the reservations it wrote, and the expired
// ones it deleted, as JSON; consuming a hold, the holds it consumed.
func (g *Guard) columns() string {
	q := `(SELECT count(*) FROM ` + g.written + `), (SELECT json_agg(expired) FROM expired)`
	if g.holdID != "" {
		q += `, (SELECT count(*) FROM consumed)`
	}
	return q
}

// guardScan are the destinations of Guard.columns.
type guardScan struct {
	written, consumed int64
	expired           sql.NullString
}

// dest are s's destinations for g's columns.
func (g *Guard) dest(s *guardScan) []any {
	if g.holdID != "" {
		return []any{&s.written, &s.expired, &s.consumed}
	}
	return []any{&s.written, &s.expired}
}

// done records what the statement deleted, and fails when it wrote
// nothing: the hold to consume was no longer active (ErrHoldGone), or the
// barber was not there.
func (g *Guard) done(s *guardScan) error {
	if g.holdID != "" && s.consumed == 0 {
		return ErrHoldGone
	}
	if s.expired.Valid {
		var rows []struct {
			AccountID     string    `json:"account_id"`
			BarberID      string    `json:"barber_id"`
			StartsAt      time.Time `json:"starts_at"`
			EndsAt        time.Time `json:"ends_at"`
			HoldID        *string   `json:"hold_id"`
			AppointmentID *string   `json:"appointment_id"`
		}
		if err := json.Unmarshal([]byte(s.expired.String), &rows); err != nil {
			return fmt.Errorf("store: a guarded insert's deleted reservations: %w", err)
		}
		for _, x := range rows {
			g.expired = append(g.expired, Reservation{AccountID: x.AccountID, BarberID: x.BarberID,
				StartsAt: x.StartsAt.UTC(), EndsAt: x.EndsAt.UTC(), HoldID: x.HoldID, AppointmentID: x.AppointmentID})
		}
	}
	if s.written == 0 {
		return &ent.NotFoundError{} // no such barber: as LockBarber's ent query says it
	}
	return nil
}

// send sends a guarded insert's entries alone.
func (g *Guard) send(ctx context.Context, q Queryer, ctes string, a sqlArgs) error {
	var s guardScan
	if err := queryRow(ctx, q, "guarded insert", `WITH `+ctes+`
SELECT `+g.columns(), a, g.dest(&s)...); err != nil {
		return err
	}
	return g.done(&s)
}
