package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
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
// now (the caller records them) and reads the barber's schedule
// (ScheduleRows). On PostgreSQL that is a sequence of two statements: the
// lock (with the customer's upsert of a create, RideCustomer), then the
// deletion and the schedule in one statement (a data-modifying WITH),
// which begins once the lock is held; the schedule leaves out the expired
// holds the deletion removes.
//
// The lock also makes the rest of the transaction run generic plans
// (as under GenericTx): PostgreSQL estimated the day statement's generic plan at
// ten times its plans for values (it guesses a third of the barber's holds
// expired), so it planned the statement afresh on every run, 0.37 ms of
// its CPU on every write, for the same plan (TestLockedScheduleGeneric).
func (db *DB) LockedSchedule(ctx context.Context, c Queryer, unitID, barberID string, weekdays []int, from, to, now time.Time) (LockedDay, error) {
	var d LockedDay
	if db.Dialect != dialect.Postgres {
		var err error
		if d.Expired, err = DeleteExpiredReservations(ctx, c, barberID, now); err != nil {
			return d, err
		}
		d.Rows, err = ScheduleRows(ctx, c, db.Dialect, unitID, []string{barberID}, weekdays, from, to, now)
		return d, err
	}
	ride := riding(ctx)
	lock := step{query: func(bind func(any) string) (string, error) {
		acct, err := tenantFilter(ctx, bind, "")
		if err != nil {
			return "", err
		}
		return ride.lockQuery(ctx, bind, acct, barberID)
	}, scan: func(rows *sql.Rows) error { return ride.scanLock(ctx, rows) }}
	day := step{query: func(bind func(any) string) (string, error) {
		expired, err := expiredQuery(ctx, bind, barberID, now, "")
		if err != nil {
			return "", err
		}
		schedule, err := scheduleQuery(ctx, bind, db.Dialect, unitID, []string{barberID}, weekdays, from, to, now, false)
		// The expired rows come last, so that the schedule's selects type
		// the columns; the account stands in the id's column.
		return `WITH expired AS (` + expired + `)
` + schedule + `
UNION ALL
SELECT ` + strconv.Itoa(int(rowExpired)) + `, account_id, barber_id, starts_at, ends_at, NULL, appointment_id, hold_id, NULL, NULL FROM expired`, err
	}, scan: func(rows *sql.Rows) error {
		return scanSchedule(rows, func(r *ScheduleRow) error {
			if c := r.clone(); c.Kind != rowExpired {
				d.Rows = append(d.Rows, c)
			} else {
				d.Expired = append(d.Expired, Reservation{AccountID: c.ID, BarberID: c.BarberID,
					StartsAt: c.StartsAt.UTC(), EndsAt: c.EndsAt.UTC(), HoldID: c.HoldID, AppointmentID: c.AppointmentID})
			}
			return nil
		})
	}}
	err := db.sequence(ctx, c, "locked schedule", lock, day)
	if errors.Is(err, sql.ErrNoRows) {
		return d, &ent.NotFoundError{} // as LockBarber's ent query says it
	}
	return d, err
}
