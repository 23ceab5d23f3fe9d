package store

import (
	"context"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/barber"
)

// Row locks serialise writers on PostgreSQL. On SQLite every write
// transaction holds the database's write lock from its start (immediate
// transactions), so there is nothing more to lock.

// LockBarber serialises writers of one barber's time until tx ends.
func (db *DB) LockBarber(ctx context.Context, tx *ent.Tx, id string) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	_, err := tx.Barber.Query().Where(barber.ID(id)).ForUpdate().OnlyID(ctx)
	return err
}

// LockOwner runs lock, which locks the row of an owner whose rows are
// counted against a cap, where the database needs it.
func (db *DB) LockOwner(lock func() error) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	return lock()
}

// LockedDay is what LockedSchedule read: the reservations of holds expired
// by now that it deleted, and the barber's schedule rows.
type LockedDay struct {
	Expired []Reservation
	Rows    []ScheduleRow
}

// LockedSchedule is what a writer does first with a barber's time: it locks
// the barber (LockBarber), deletes the reservations of its holds expired at
// now (DeleteExpiredReservations: the caller records them), and reads the
// barber's schedule (ScheduleRows), each statement with a snapshot of its
// own taken once the one before it is done: the schedule is read after the
// lock is held. On PostgreSQL they are prepared statements, whose plans the
// connection keeps; with the statement cache off, the three go in one
// round trip instead, a simple query with its values as literals, planned
// every time.
func (db *DB) LockedSchedule(ctx context.Context, c Queryer, tx *ent.Tx, unitID, barberID string, weekdays []int, from, to, now time.Time) (LockedDay, error) {
	var d LockedDay
	if db.Dialect != dialect.Postgres || db.prepares {
		if err := db.LockBarber(ctx, tx, barberID); err != nil {
			return d, err
		}
		var err error
		if d.Expired, err = DeleteExpiredReservations(ctx, c, barberID, now); err != nil {
			return d, err
		}
		d.Rows, err = ScheduleRows(ctx, c, db.Dialect, unitID, []string{barberID}, weekdays, from, to, now)
		return d, err
	}
	acct, err := tenantFilter(ctx, literal, "")
	if err != nil {
		return d, err
	}
	schedule, err := scheduleQuery(ctx, literal, db.Dialect, unitID, []string{barberID}, weekdays, from, to, now)
	if err != nil {
		return d, err
	}
	b := literal(barberID)
	rows, err := c.QueryContext(ctx, `SELECT id FROM barbers WHERE id = `+b+acct+` FOR UPDATE;
`+deleteReservationsQuery(`barber_id = `+b+` AND expires_at <= `+literal(now)+acct)+`;
`+schedule)
	if err != nil {
		return d, err
	}
	defer rows.Close()
	found := rows.Next()
	if err := rows.Err(); err != nil {
		return d, err
	}
	if !found {
		return d, &ent.NotFoundError{} // as LockBarber's ent query says it
	}
	if err := nextResult(rows, "locked schedule", true); err != nil {
		return d, err
	}
	if d.Expired, err = scanReservations(rows); err != nil {
		return d, err
	}
	if err := nextResult(rows, "locked schedule", false); err != nil {
		return d, err
	}
	if d.Rows, err = scanSchedule(rows); err != nil {
		return d, err
	}
	return d, rows.Close()
}
