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
// second notification carries the ride no more.
func TestRideFreeing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.WithAccount(context.Background(), "acc_ride")
		at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		probe := store.OpeningProbe{ID: "opn_ride", Now: at.Add(-time.Hour)}
		if db.Dialect != dialect.Postgres {
			if _, ride := store.RideFreeing(ctx, db.Dialect, "acc_ride", "apt_ride", probe); ride != nil {
				t.Fatal("a ride on SQLite")
			}
			return
		}
		tx, err := db.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // nothing kept
		// Rows of no account, barber or appointment: the foreign keys'
		// triggers off.
		if _, err := tx.ExecContext(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, appointment_id)
VALUES ('rsv_ride', 'acc_ride', 'brb_ride', $1, $2, 'apt_ride')`, at, at.Add(45*time.Minute)); err != nil {
			t.Fatal(err)
		}
		left := func() int {
			t.Helper()
			rows, err := tx.QueryContext(ctx, `SELECT count(*) FROM reservations WHERE id = 'rsv_ride'`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := -1
			for rows.Next() {
				if err := rows.Scan(&n); err != nil {
					t.Fatal(err)
				}
			}
			return n
		}
		notify := func(ctx context.Context, id string) {
			t.Helper()
			typ := "appointment.cancelled"
			n := store.Note{Notification: &ent.Notification{ID: id, AccountID: "acc_ride", Type: typ, Source: "api", CreatedAt: at}}
			if _, err := store.InsertNotification(ctx, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{}); err != nil {
				t.Fatal(err)
			}
		}

		if _, ride := store.RideFreeing(ctx, db.Dialect, "acc_ride", "apt_ride", probe); ride != nil {
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
		case opened:
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

		// Time freed before (a reschedule's): probed, nothing deleted.
		known := store.Reservation{AccountID: "acc_ride", BarberID: "brb_ride", StartsAt: at, EndsAt: at.Add(45 * time.Minute)}
		probing, ride := store.RideProbe(fenced, db.Dialect, known, probe)
		notify(probing, "ntf_ride_3")
		rs, opened, ok = ride.Freed()
		switch {
		case !ok:
			t.Fatal("the notification's statement did not carry the probe")
		case len(rs) != 1 || rs[0] != known:
			t.Errorf("freed %+v, want %+v", rs, known)
		case opened:
			t.Error("an opening written with no entry waiting")
		case left() != 1:
			t.Error("the probe deleted a reservation")
		}
	})
}
