package floor

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/pulid"
	"barberd/graph/store"
)

// The floors of the other writes, made as the create's is: each the
// essential SQL of one hold, cancel or reschedule, one transaction on the
// real tables, retried as barberd retries.
//
// A hold: BEGIN; the barber's lock (PostgreSQL); the conflict check; the
// hold; its reservation; COMMIT.
//
// A cancel: BEGIN; the appointment, locked (PostgreSQL: FOR UPDATE); its
// update; the delete of its reservation, RETURNING the freed time; the
// waitlist's probe for that time (an opening inserted only when a waiting
// entry may want it: one indexed statement); the appointment.cancelled
// notification; its delivery to the one key; COMMIT.
//
// A reschedule (to a later slot of the same barber, as chatbots mostly
// move): BEGIN; the appointment, locked; the barber's lock (PostgreSQL);
// the conflict check at the new time; the delete of the old
// reservation, RETURNING it; the new reservation; the appointment's update;
// the waitlist's probe for the old time; the appointment.rescheduled
// notification; its delivery; COMMIT.

// Booking is an appointment a floor booked: what its cancel and reschedule
// need.
type Booking struct {
	ID, BarberID string
	Start        time.Time
}

// ErrNotConfirmed is returned by Cancel and Reschedule for an appointment
// no longer confirmed.
var ErrNotConfirmed = errors.New("floor: the appointment is not confirmed")

// PostgreSQL forms; every placeholder appears once and in order (see
// queriesFor).
const (
	sqlHold = `INSERT INTO holds (id, created_at, updated_at, starts_at, ends_at, status, expires_at,
account_id, unit_id, service_id, barber_id, api_key_id)
VALUES ($1, $2, $3, $4, $5, 'active', $6, $7, $8, $9, $10, $11)`
	sqlHoldReservation = `INSERT INTO reservations (id, starts_at, ends_at, expires_at, account_id, barber_id, hold_id)
VALUES ($1, $2, $3, $4, $5, $6, $7)`
	sqlLockAppointment = `SELECT status, starts_at FROM appointments WHERE id = $1 FOR UPDATE`
	sqlCancel          = `UPDATE appointments SET status = 'cancelled', cancelled_at = $1, cancellation_reason = $2,
updated_at = $3, version = version + 1 WHERE id = $4`
	sqlFreeReservation = `DELETE FROM reservations WHERE appointment_id = $1 RETURNING barber_id, starts_at, ends_at`
	sqlOpening         = `INSERT INTO openings (id, account_id, barber_id, starts_at, ends_at, created_at)
SELECT $1, $2, $3, $4, $5, $6
WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.account_id = $7 AND w.waiting
AND w.earliest_start < $8 AND w.latest_end > $9 AND (w.barber_id IS NULL OR w.barber_id = $10))`
	sqlMove = `UPDATE appointments SET barber_id = $1, starts_at = $2, ends_at = $3, reminded_at = NULL,
updated_at = $4, version = version + 1 WHERE id = $5`
	sqlEventNotification = `INSERT INTO notifications (id, type, source, appointment, previous_starts_at, created_at, account_id, appointment_id)
VALUES ($1, $2, 'api', $3, $4, $5, $6, $7)`
)

// writeQueries are the statements of the other writes, in the dialect's form.
type writeQueries struct {
	hold, holdReservation, lockAppointment, cancel, freeReservation, opening, move, notification string
}

func writeQueriesFor(dia string) writeQueries {
	q := writeQueries{sqlHold, sqlHoldReservation, sqlLockAppointment, sqlCancel, sqlFreeReservation, sqlOpening, sqlMove, sqlEventNotification}
	if dia == dialect.Postgres {
		return q
	}
	q.lockAppointment = `SELECT status, starts_at FROM appointments WHERE id = $1`
	for _, s := range []*string{&q.hold, &q.holdReservation, &q.lockAppointment, &q.cancel, &q.freeReservation, &q.opening, &q.move, &q.notification} {
		*s = placeholder.ReplaceAllString(*s, "?")
	}
	return q
}

// slot is the next distinct slot of the floor: a barber and a start.
func (f *Floor) slot() (int64, string, time.Time) {
	n := f.next.Add(1) - 1
	nb := int64(len(f.t.BarberIDs))
	return n, f.t.BarberIDs[n%nb], f.t.Start.Add(time.Duration(n/nb) * (f.t.Duration + f.t.Buffer))
}

// moveSlot is a barber's next slot for Reschedule: from a year after the
// floor's start, where Book's slots do not reach in a run.
func (f *Floor) moveSlot(barberID string) time.Time {
	i := f.barber[barberID]
	n := f.moves[i].Add(1) - 1
	return f.t.Start.AddDate(1, 0, 0).Add(time.Duration(n) * (f.t.Duration + f.t.Buffer))
}

// retry runs one write's transaction, again as barberd would when the
// database asks for it.
func (f *Floor) retry(ctx context.Context, try func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := f.inTx(ctx, try)
		if err == nil || store.Classify(err) != store.Retry || attempt == maxAttempts || ctx.Err() != nil {
			return err
		}
		backoff := time.Duration(attempt*attempt) * 5 * time.Millisecond
		select {
		case <-time.After(backoff/2 + mrand.N(backoff)):
		case <-ctx.Done():
			return err
		}
	}
}

func (f *Floor) inTx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// lockBarber locks a barber's row on PostgreSQL.
func (f *Floor) lockBarber(ctx context.Context, tx *sql.Tx, barberID string) error {
	if f.q.lockBarber == "" {
		return nil
	}
	var id string
	return tx.QueryRowContext(ctx, f.q.lockBarber, barberID).Scan(&id)
}

// Hold holds the next distinct slot for five minutes.
func (f *Floor) Hold(ctx context.Context) error {
	_, barberID, start := f.slot()
	end := start.Add(f.t.Duration)
	return f.retry(ctx, func(tx *sql.Tx) error {
		at := now()
		if err := f.lockBarber(ctx, tx, barberID); err != nil {
			return err
		}
		if err := f.conflicts(ctx, tx, barberID, start, end.Add(f.t.Buffer), at); err != nil {
			return err
		}
		holdID, expires := pulid.New("hld"), at.Add(5*time.Minute)
		if _, err := tx.ExecContext(ctx, f.w.hold, holdID, at, at, start, end, expires,
			f.t.AccountID, f.t.UnitID, f.t.ServiceID, barberID, f.t.APIKeyID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, f.w.holdReservation, pulid.New("rsv"), start, end.Add(f.t.Buffer), expires, f.t.AccountID, barberID, holdID)
		return err
	})
}

// Book is Create, saying what it booked.
func (f *Floor) Book(ctx context.Context) (Booking, error) {
	var b Booking
	err := f.create(ctx, &b)
	return b, err
}

// Cancel cancels a booking of Book.
func (f *Floor) Cancel(ctx context.Context, b Booking) error {
	return f.retry(ctx, func(tx *sql.Tx) error {
		at := now()
		if err := f.lockAppointment(ctx, tx, b.ID, at); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, f.w.cancel, at, "floor", at, b.ID); err != nil {
			return err
		}
		// The event before the freeing, as barberd writes them: the
		// reservation's deletion locks the barber's row until COMMIT.
		if err := f.notify(ctx, tx, b, "appointment.cancelled", "cancelled", nil, at); err != nil {
			return err
		}
		return f.free(ctx, tx, b.ID, at)
	})
}

// Reschedule moves a booking of Book (or of Reschedule) to its barber's
// next distinct slot past those Book takes, and returns it as moved.
func (f *Floor) Reschedule(ctx context.Context, b Booking) (Booking, error) {
	barberID, start := b.BarberID, f.moveSlot(b.BarberID)
	end := start.Add(f.t.Duration)
	moved := Booking{ID: b.ID, BarberID: barberID, Start: start}
	err := f.retry(ctx, func(tx *sql.Tx) error {
		at := now()
		if err := f.lockAppointment(ctx, tx, b.ID, at); err != nil {
			return err
		}
		if err := f.lockBarber(ctx, tx, barberID); err != nil {
			return err
		}
		if err := f.conflicts(ctx, tx, barberID, start, end.Add(f.t.Buffer), at); err != nil {
			return err
		}
		var old []span
		var err error
		if old, err = f.deleteReservation(ctx, tx, b.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, f.q.reservation, pulid.New("rsv"), start, end.Add(f.t.Buffer), f.t.AccountID, barberID, b.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, f.w.move, barberID, start, end, at, b.ID); err != nil {
			return err
		}
		for _, s := range old {
			if err := f.probe(ctx, tx, s, at); err != nil {
				return err
			}
		}
		previous := b.Start
		return f.notify(ctx, tx, moved, "appointment.rescheduled", "confirmed", &previous, at)
	})
	if err != nil {
		return b, err
	}
	return moved, nil
}

// lockAppointment reads a confirmed appointment that has not started,
// locked; ErrNotConfirmed otherwise.
func (f *Floor) lockAppointment(ctx context.Context, tx *sql.Tx, id string, at time.Time) error {
	var status string
	var starts time.Time
	if err := tx.QueryRowContext(ctx, f.w.lockAppointment, id).Scan(&status, &starts); err != nil {
		return err
	}
	if status != "confirmed" || !starts.After(at) {
		return ErrNotConfirmed
	}
	return nil
}

// span is a barber's time a reservation held.
type span struct {
	barberID   string
	start, end time.Time
}

func (f *Floor) deleteReservation(ctx context.Context, tx *sql.Tx, appointmentID string) ([]span, error) {
	rows, err := tx.QueryContext(ctx, f.w.freeReservation, appointmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []span
	for rows.Next() {
		var s span
		if err := rows.Scan(&s.barberID, &s.start, &s.end); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

// free deletes an appointment's reservation and probes the waitlist for
// the time it held.
func (f *Floor) free(ctx context.Context, tx *sql.Tx, appointmentID string, at time.Time) error {
	old, err := f.deleteReservation(ctx, tx, appointmentID)
	if err != nil {
		return err
	}
	for _, s := range old {
		if err := f.probe(ctx, tx, s, at); err != nil {
			return err
		}
	}
	return nil
}

// probe is the waitlist's: an opening of the freed time, inserted only when
// a waiting entry may want it.
func (f *Floor) probe(ctx context.Context, tx *sql.Tx, s span, at time.Time) error {
	_, err := tx.ExecContext(ctx, f.w.opening, pulid.New("opn"), f.t.AccountID, s.barberID, s.start, s.end, at,
		f.t.AccountID, s.end, s.start, s.barberID)
	return err
}

// notify writes an event about a booking and its delivery to the key.
func (f *Floor) notify(ctx context.Context, tx *sql.Tx, b Booking, typ, status string, previous *time.Time, at time.Time) error {
	snap, err := json.Marshal(snapshot{
		ID: b.ID, Status: status, UnitID: f.t.UnitID, ServiceID: f.t.ServiceID, BarberID: b.BarberID,
		StartsAtUTC: b.Start, EndsAtUTC: b.Start.Add(f.t.Duration), DurationMinutes: int(f.t.Duration / time.Minute),
		CreatedAt: at,
	})
	if err != nil {
		return err
	}
	var prev any
	if previous != nil {
		prev = *previous
	}
	ntfID := pulid.New("ntf")
	if _, err := tx.ExecContext(ctx, f.w.notification, ntfID, typ, snap, prev, at, f.t.AccountID, b.ID); err != nil {
		return fmt.Errorf("notification: %w", err)
	}
	_, err = tx.ExecContext(ctx, f.q.delivery, pulid.New("dlv"), f.t.AccountID, f.t.APIKeyID, ntfID)
	return err
}
