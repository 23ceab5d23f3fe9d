package store_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestRideFreeing: on PostgreSQL, with the account's waitlist fence held,
// the next notification's statement deletes the appointment's reservation
// and says what it held (and that no entry waited for it); without the
// fence, or on SQLite, nothing rides and the caller frees on its own. A
// second notification carries the ride no more. A move (RideMove) replaces
// the reservation, over its own time, and reports the old one.
func TestRideFreeing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.WithAccount(context.Background(), "acc_ride")
		at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		probe := func() store.OpeningProbe { return store.OpeningProbe{ID: "opn_ride", Now: at.Add(-time.Hour)} }
		// Where nothing rides, no probe is made (its id would be wasted).
		noProbe := func() store.OpeningProbe {
			t.Error("a probe made for a freeing that does not ride")
			return store.OpeningProbe{}
		}
		if db.Dialect != dialect.Postgres {
			if _, ride := store.RideFreeing(ctx, db.Dialect, "acc_ride", "apt_ride", noProbe); ride != nil {
				t.Fatal("a ride on SQLite")
			}
			return
		}
		// Rows of no account, barber or appointment.
		tx := replicaTx(t, ctx, db)
		if _, err := tx.ExecContext(ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, appointment_id)
VALUES ('rsv_ride', 'acc_ride', 'brb_ride', $1, $2, 'apt_ride')`, at, at.Add(45*time.Minute)); err != nil {
			t.Fatal(err)
		}
		left := func() int {
			t.Helper()
			return txInt(t, ctx, tx, `SELECT count(*) FROM reservations WHERE id = 'rsv_ride'`)
		}
		notify := func(ctx context.Context, id string) {
			t.Helper()
			typ := "appointment.cancelled"
			n := store.Note{Notification: &ent.Notification{ID: id, AccountID: "acc_ride", Type: typ, Source: "api", CreatedAt: at}}
			if _, err := store.InsertNotification(ctx, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{}); err != nil {
				t.Fatal(err)
			}
		}

		if _, ride := store.RideFreeing(ctx, db.Dialect, "acc_ride", "apt_ride", noProbe); ride != nil {
			t.Fatal("a ride without the waitlist's fence")
		}
		fenced, err := db.FenceWaitlist(ctx, tx, "acc_ride")
		if err != nil {
			t.Fatal(err)
		}
		riding, ride := store.RideFreeing(fenced, db.Dialect, "acc_ride", "apt_ride", probe)
		if _, _, ok := ride.Freed(); ok {
			t.Fatal("freed before any statement carried the ride")
		}
		notify(riding, "ntf_ride_1")
		rs, opened, ok := ride.Freed()
		switch {
		case !ok:
			t.Fatal("the notification's statement did not carry the ride")
		case len(rs) != 1 || rs[0].BarberID != "brb_ride" || !rs[0].StartsAt.Equal(at) || !rs[0].EndsAt.Equal(at.Add(45*time.Minute)) ||
			rs[0].AccountID != "acc_ride" || rs[0].AppointmentID == nil || *rs[0].AppointmentID != "apt_ride" || rs[0].HoldID != nil:
			t.Fatalf("freed %+v, want the reservation of apt_ride", rs)
		case opened != "":
			t.Error("an opening written with no entry waiting")
		case left() != 0:
			t.Error("the reservation is still there")
		}

		// Carried once: the next notification's statement frees nothing
		// (a reservation of the same appointment written again stays).
		if _, err := tx.ExecContext(ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, appointment_id)
VALUES ('rsv_ride', 'acc_ride', 'brb_ride', $1, $2, 'apt_ride')`, at, at.Add(45*time.Minute)); err != nil {
			t.Fatal(err)
		}
		notify(riding, "ntf_ride_2")
		if left() != 1 {
			t.Error("a second notification carried the ride again")
		}

		// A reschedule's move, 15 minutes later over its own time: the old
		// row deleted first, the new one written, the old time reported.
		apt := "apt_ride"
		moved := store.Reserve{AccountID: "acc_ride", BarberID: "brb_ride", StartsAt: at.Add(15 * time.Minute),
			EndsAt: at.Add(time.Hour), AppointmentID: &apt}
		moving, ride := store.RideMove(fenced, db.Dialect, moved, probe)
		notify(moving, "ntf_ride_3")
		rs, opened, ok = ride.Freed()
		switch {
		case !ok:
			t.Fatal("the notification's statement did not carry the move")
		case len(rs) != 1 || !rs[0].StartsAt.Equal(at) || !rs[0].EndsAt.Equal(at.Add(45*time.Minute)):
			t.Errorf("freed %+v, want the old time", rs)
		case opened != "":
			t.Error("an opening written with no entry waiting")
		}
		rows, err := tx.QueryContext(ctx, `SELECT starts_at FROM reservations WHERE appointment_id = 'apt_ride'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var starts []time.Time
		for rows.Next() {
			var s time.Time
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			starts = append(starts, s)
		}
		if len(starts) != 1 || !starts[0].Equal(moved.StartsAt) {
			t.Errorf("the appointment's reservations start at %v, want %v alone", starts, moved.StartsAt)
		}
	})
}

// TestRideMoveGap: the probe that rides with a reschedule's move counts
// the reservation the move writes, which the statement's snapshot does not
// hold: moved just after its old time, the gap left (30 minutes) is too
// short for the waiting entry's hour-long service, and no opening is
// written; moved away, the same entry wants the freed time, and one is.
func TestRideMoveGap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("the move rides on PostgreSQL")
		}
		s := newMondays(t, db)
		svc := db.Service.Create().SetAccountID(s.acc.ID).SetName("Long").SetDurationMinutes(60).
			SetPriceAmount(1000).SetPriceCurrency("EUR").AddUnitIDs(s.unit.ID).AddBarberIDs(s.barber.ID).SaveX(s.sys)
		monday := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC) // Lisbon keeps UTC in March
		opened := func(to time.Time) bool {
			t.Helper()
			tx, err := db.Tx(s.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // nothing kept
			// The entry, the appointments' reservations and the
			// notification refer to rows this test does not make.
			for _, st := range []struct {
				q    string
				args []any
			}{
				{`SET LOCAL session_replication_role = replica`, nil},
				{`INSERT INTO waitlist_entries (id, created_at, updated_at, from_date, to_date, weekdays, earliest_start,
latest_end, window_end, customer_id, client_name, client_phone, offer_hold_seconds, status, waiting,
account_id, unit_id, service_id, api_key_id)
VALUES ('wle_gap', now(), now(), '2027-03-01', '2027-03-01', '[]', '2027-03-01 09:00Z', '2027-03-01 18:00Z',
'2027-03-01 18:00Z', 'cli_gap', 'Ana', '+351910000000', 600, 'waiting', true, $1, $2, $3, 'key_gap')`,
					[]any{s.acc.ID, s.unit.ID, svc.ID}},
				{`INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, appointment_id) VALUES
('rsv_other', $1, $2, '2027-03-01 09:00Z', '2027-03-01 10:00Z', 'apt_other'),
('rsv_move', $1, $2, '2027-03-01 10:00Z', '2027-03-01 10:30Z', 'apt_move')`, []any{s.acc.ID, s.barber.ID}},
			} {
				if _, err := tx.ExecContext(s.ctx, st.q, st.args...); err != nil {
					t.Fatalf("%s: %v", st.q, err)
				}
			}
			fenced, err := db.FenceWaitlist(s.ctx, tx, s.acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			apt := "apt_move"
			moving, ride := store.RideMove(fenced, db.Dialect, store.Reserve{AccountID: s.acc.ID, BarberID: s.barber.ID,
				StartsAt: to, EndsAt: to.Add(30 * time.Minute), AppointmentID: &apt},
				func() store.OpeningProbe { return store.OpeningProbe{ID: "opn_gap", Now: monday.Add(-24 * time.Hour)} })
			n := store.Note{Notification: &ent.Notification{ID: "ntf_gap", AccountID: s.acc.ID, Type: "appointment.rescheduled",
				Source: "api", CreatedAt: monday}}
			if _, err := store.InsertNotification(moving, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{}); err != nil {
				t.Fatal(err)
			}
			rs, opened, ok := ride.Freed()
			if !ok || len(rs) != 1 || !rs[0].StartsAt.Equal(monday.Add(10*time.Hour)) {
				t.Fatalf("freed %+v (carried %v), want 10:00", rs, ok)
			}
			if opened != "" && opened != "opn_gap" {
				t.Fatalf("wrote opening %q, want the probe's, opn_gap", opened)
			}
			return opened != ""
		}
		if opened(monday.Add(10*time.Hour + 30*time.Minute)) {
			t.Error("moved to 10:30, its old half hour (between 10:00 and 10:30) was offered to an hour-long service")
		}
		if !opened(monday.Add(12 * time.Hour)) {
			t.Error("moved to 12:00, the two free hours from 10:00 were not offered to the waiting entry")
		}
	})
}
