package store

import (
	"context"
	"database/sql"
	"time"

	"entgo.io/ent/dialect"
)

// A cancel (and a completion or a no-show) frees its appointment's time
// after writing its event: on PostgreSQL the reservation's deletion and the
// waitlist's probe of the time it held ride in the statement of the
// appointment's notification (RideFreeing, InsertNotification), where they
// were two statements after it, the barber's row locked from the first
// (the deletion's trigger bumps the barber's bookings version) until the
// commit. A reschedule's move of its reservation and the probe of its old
// time ride there too (RideMove): the old row deleted, the new one
// inserted once the deletion is done, and the probe, whose snapshot holds
// neither change, told of the new row.
//
// The probe reads the barber's reservations in the statement's snapshot,
// which still holds the deleted row: that row starts where the freed time
// starts, so it is neither the gap's reservation before (starting before)
// nor after (starting at or after its end); a reschedule's new row, which
// the snapshot does not hold, the probe is given (wantedSpan's written).
// So the probe writes an opening exactly when one of its own, after the
// statement, would.

// OpeningProbe is the waitlist's probe of the time a statement frees, made
// in that statement: the id of the opening it writes when a waiting entry
// of the account may want the time (wantedSpan), and the instant it
// probes at (time that ended by then is not probed).
type OpeningProbe struct {
	ID  string
	Now time.Time
}

// probeEntry is the WITH entry "opened" that writes p's opening for the
// time freed holds: freed is the name of a WITH entry that returns
// deleteReservationsQuery's columns, one row at most (an appointment's
// reservation: their appointment_id is unique); written, when not nil, is
// a reservation the statement inserts (wantedSpan). PostgreSQL's; the
// statement must hold the account's waitlist fence (Fenced), as
// InsertOpenings' does. It returns the id of the opening written, if any.
func probeEntry(a *sqlArgs, freed string, p OpeningProbe, written *spanExprs) string {
	active := a.add(p.Now) + `::timestamptz`
	w := spanExprs{barber: `NULL::text`, from: `NULL::timestamptz`, to: `NULL::timestamptz`}
	if written != nil {
		w = *written
	}
	// The probe is barberd_opening_wanted (postgresOpeningWanted): its
	// condition's plan starts only when an entry reaches the span.
	return `opened AS (INSERT INTO openings (id, account_id, barber_id, starts_at, ends_at, created_at)
SELECT ` + a.add(p.ID) + `::text, f.account_id, f.barber_id, f.starts_at, f.ends_at, ` + active + `
FROM ` + freed + ` f WHERE f.ends_at > ` + active + ` AND barberd_opening_wanted(f.account_id, f.barber_id, f.starts_at, f.ends_at, ` +
		active + `, ` + w.barber + `, ` + w.from + `, ` + w.to + `)
RETURNING id)`
}

// FreeRide is an appointment's reservation, deleted with the waitlist's
// probe of its time in the statement of the appointment's notification
// (RideFreeing), or moved (RideMove).
type FreeRide struct {
	accountID, appointmentID string
	move                     *Reserve // RideMove's new reservation
	guard                    *Guard   // the move's, under a guard (Guarded)
	probe                    OpeningProbe
	sent                     bool
	freed                    []Reservation
	opened                   string // the probe's opening, if written
}

// freeRideKey is the context key of the *FreeRide that InsertNotification
// sends.
type freeRideKey struct{}

// RideFreeing returns a context under which the next notification's
// statement (InsertNotification) also deletes the reservation of the
// account's appointment and probes the waitlist for its time with the
// probe that probe makes, and the FreeRide that says what they did. It
// rides on PostgreSQL when the transaction holds the account's waitlist
// fence (Fenced); otherwise the FreeRide is nil (and probe is not called),
// and the caller deletes and probes on its own.
func RideFreeing(ctx context.Context, dia, accountID, appointmentID string, probe func() OpeningProbe) (context.Context, *FreeRide) {
	if dia != dialect.Postgres || !Fenced(ctx, accountID) {
		return ctx, nil
	}
	f := &FreeRide{accountID: accountID, appointmentID: appointmentID, probe: probe()}
	return context.WithValue(ctx, freeRideKey{}, f), f
}

// RideMove is RideFreeing of a reschedule: the next notification's
// statement replaces the reservation of the appointment r names
// (r.AppointmentID) with r, as DB.MoveAppointmentReservation does, and
// probes the waitlist for the old time; Freed says what the old one held.
// Under a guard (Guarded) the statement takes the guard's lock, and
// inserts r once it holds it, as a guarded InsertReserved does.
func RideMove(ctx context.Context, dia string, r Reserve, probe func() OpeningProbe) (context.Context, *FreeRide) {
	ctx, f := RideFreeing(ctx, dia, r.AccountID, *r.AppointmentID, probe)
	if f != nil {
		f.move, f.guard = &r, guarding(ctx)
	}
	return ctx, f
}

// Freed says what the ride did, once a statement carried it: the
// reservation it deleted (none, or one) and the id of the probe's
// opening if it wrote it ("" if not). ok is false when no statement
// carried it (a nil FreeRide included).
func (f *FreeRide) Freed() (rs []Reservation, opened string, ok bool) {
	if f == nil || !f.sent {
		return nil, "", false
	}
	return f.freed, f.opened, true
}

// freeRiding is the FreeRide of ctx that no statement carried yet, or nil.
func freeRiding(ctx context.Context) *FreeRide {
	if f, _ := ctx.Value(freeRideKey{}).(*FreeRide); f != nil && !f.sent {
		return f
	}
	return nil
}

// entries are the ride's WITH entries, freed, moved (RideMove; under a
// guard, after the guard's own) and opened, their values bound to a.
func (f *FreeRide) entries(ctx context.Context, a *sqlArgs) (string, error) {
	q := ""
	if f.guard != nil {
		lock, err := f.guard.lockEntries(ctx, a, *f.move)
		if err != nil {
			return "", err
		}
		q, f.guard.written = lock+`,
`, "moved"
	}
	q += `freed AS (` + deleteReservationsQuery(`appointment_id = `+a.add(f.appointmentID)+` AND account_id = `+a.add(f.accountID)) + `),
`
	var written *spanExprs
	if r := f.move; r != nil {
		after := `(SELECT count(*) FROM freed) AS first`
		if f.guard != nil {
			after += `, ` + f.guard.after()
		}
		q += `moved AS (` + insertReservationFrom(a, *r, after) + `
RETURNING id),
`
		written = &spanExprs{barber: a.add(r.BarberID) + `::text`, from: a.add(r.StartsAt) + `::timestamptz`, to: a.add(r.EndsAt) + `::timestamptz`}
	}
	return q + probeEntry(a, "freed", f.probe, written), nil
}

// rideColumns are the columns the carrying statement selects for the
// ride, scanned by rideScan.
const rideColumns = `(SELECT barber_id FROM freed), (SELECT starts_at FROM freed), (SELECT ends_at FROM freed), (SELECT id FROM opened)`

// rideScan are the destinations of rideColumns; done records them in f.
type rideScan struct {
	barber, opened sql.NullString
	start, end     sql.NullTime
}

func (s *rideScan) dest() []any { return []any{&s.barber, &s.start, &s.end, &s.opened} }

func (f *FreeRide) done(s *rideScan) {
	f.sent = true
	if s.barber.Valid {
		id := f.appointmentID
		f.freed = []Reservation{{AccountID: f.accountID, BarberID: s.barber.String,
			StartsAt: s.start.Time.UTC(), EndsAt: s.end.Time.UTC(), AppointmentID: &id}}
	}
	f.opened = s.opened.String // "" when NULL
}
