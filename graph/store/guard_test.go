package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestGuarded: a guarded insert takes the barber's lock in its statement,
// deletes the expired holds' reservations under the new time (not the
// others) and reports them, and writes the row and its reservation. A
// reservation written over the new time since fails it as an overlap,
// also when the guard waited for the lock of the writer that wrote it; a
// writer that booked elsewhere meanwhile does not. A barber that is not
// there is not found. SQLite refuses a guard.
func TestGuarded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		sys := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(sys)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(sys)
		// A statement that waits for ever (a guard taken out of order, say)
		// fails the test instead of hanging it.
		bounded, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ctx := tenant.WithAccount(bounded, acc.ID)
		at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		now := at.Add(-time.Hour)
		reservation := func(from time.Time, minutes int, expires *time.Time) {
			t.Helper()
			db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(from).
				SetEndsAt(from.Add(time.Duration(minutes) * time.Minute)).SetNillableExpiresAt(expires).ExecX(sys)
		}
		expiredLeft := `SELECT count(*) FROM reservations WHERE barber_id = $1 AND expires_at < '2027-03-02 09:00:00+00'`
		timeOffs := `SELECT count(*) FROM time_offs WHERE barber_id = $1`
		count := func(q string) int {
			t.Helper()
			var n int
			if err := db.SQL.QueryRowContext(sys, q, b.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// carried: guarded inserts ride in a notification's statement
		// (store.Carry) rather than going alone.
		carried := false
		notes := 0
		// insert writes a time off (any ent create will do) and the
		// reservation of [from, from+minutes) under a guard of barber,
		// and, when carried, a notification.
		insert := func(tx *ent.Tx, barber string, from time.Time, minutes int) (*store.Guard, error) {
			t.Helper()
			guarded, g := store.Guarded(ctx, barber, now)
			var carry *store.Carried
			if carried {
				guarded, carry = store.Carry(guarded)
			}
			end := from.Add(time.Duration(minutes) * time.Minute)
			expires := now.Add(5 * time.Minute)
			err := db.InsertReserved(guarded, tx, func(ctx context.Context) (store.Reserve, error) {
				return store.Reserve{AccountID: acc.ID, BarberID: b.ID, StartsAt: from, EndsAt: end, ExpiresAt: &expires},
					tx.TimeOff.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(from).SetEndsAt(end).Exec(ctx)
			})
			if err != nil || !carried {
				return g, err
			}
			notes++
			n := store.Note{Notification: &ent.Notification{ID: fmt.Sprintf("ntf_guard_%d", notes), AccountID: acc.ID,
				Type: "appointment.created", Source: "api", CreatedAt: now}}
			if _, err := store.InsertNotification(guarded, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{}); err != nil {
				return g, err
			}
			return g, carry.Flush(guarded, tx) // nothing left: the notification carried it
		}
		begin := func() *ent.Tx {
			t.Helper()
			tx, err := db.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tx.Rollback() })
			return tx
		}

		if db.Dialect != dialect.Postgres {
			if _, err := insert(begin(), b.ID, at, 30); err == nil {
				t.Fatal("a guarded insert on SQLite")
			}
			return
		}

		for _, carried = range []bool{false, true} {
			at := at
			if carried {
				at = at.AddDate(0, 0, 1)
			}
			// What the earlier round left.
			left, offs := count(expiredLeft), count(timeOffs)
			events := func(q interface {
				QueryContext(context.Context, string, ...any) (*sql.Rows, error)
			}) int {
				t.Helper()
				rows, err := q.QueryContext(sys, `SELECT count(*) FROM notifications WHERE account_id = $1`, acc.ID)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var n int
				if !rows.Next() || rows.Scan(&n) != nil {
					t.Fatal("no count of notifications")
				}
				return n
			}
			written := events(db.SQL)
			if carried {
				written++
			}
			// kept checks what is left after what: the expired holds
			// (this round's), one time off and, carried, one notification.
			kept := func(what string, expired int) {
				t.Helper()
				if n := count(expiredLeft) - left; n != expired {
					t.Errorf("after %s: %d expired reservations left, want %d", what, n, expired)
				}
				if n := count(timeOffs) - offs; n != 1 {
					t.Errorf("after %s: %d rows written with the reservation, want 1", what, n)
				}
				if n := events(db.SQL); n != written {
					t.Errorf("after %s: %d notifications, want %d", what, n, written)
				}
			}
			// Held: the expired hold under the new time goes, the one after
			// it stays.
			expired := now.Add(-time.Minute)
			reservation(at, 30, &expired)
			reservation(at.Add(2*time.Hour), 30, &expired)
			tx := begin()
			g, err := insert(tx, b.ID, at, 45)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if x := g.Expired(); len(x) != 1 || !x[0].StartsAt.Equal(at) || !x[0].EndsAt.Equal(at.Add(30*time.Minute)) || x[0].BarberID != b.ID {
				t.Errorf("deleted %+v, want the expired hold at 10:00", x)
			}
			kept("a guarded insert", 1) // the one at 12:00

			// Over a reservation written since the read: an overlap, and the
			// transaction rolls back with nothing of it left.
			reservation(at.Add(5*time.Hour), 30, &expired)
			reservation(at.Add(5*time.Hour+30*time.Minute), 30, nil)
			tx = begin()
			if _, err := insert(tx, b.ID, at.Add(5*time.Hour), 60); store.Classify(err) != store.Overlap {
				t.Fatalf("a guarded insert over a reservation: %v, want an overlap", err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			kept("an overlap", 2)

			// No such barber: nothing written, a notification carrying
			// the insert included.
			tx = begin()
			if _, err := insert(tx, "brb_missing", at.Add(9*time.Hour), 30); !ent.IsNotFound(err) {
				t.Errorf("a guarded insert for a barber not there: %v, want not found", err)
			}
			if n := events(tx); n != written {
				t.Errorf("%d notifications in the transaction of a barber not there, want %d", n, written)
			}
		}

		// Waiting for another writer's lock: what it committed decides.
		for i, c := range []struct {
			name string
			over bool
		}{{"a writer that booked the time", true}, {"a writer that booked another time", false}} {
			from := at.Add(time.Duration(6+2*i) * time.Hour)
			other := begin()
			if _, err := other.ExecContext(ctx, `SELECT id FROM barbers WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
				t.Fatal(err)
			}
			done := goTx(ctx, db, func(tx *ent.Tx) error {
				_, err := insert(tx, b.ID, from, 30)
				return err
			})
			waitForLock(t, db)
			booked := from.Add(time.Hour)
			if c.over {
				booked = from.Add(15 * time.Minute)
			}
			if _, err := other.ExecContext(ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at)
VALUES ($1, $2, $3, $4, $5)`, fmt.Sprintf("rsv_guard_%d", i), acc.ID, b.ID, booked, booked.Add(30*time.Minute)); err != nil {
				t.Fatal(err)
			}
			if err := other.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; (store.Classify(err) == store.Overlap) != c.over || !c.over && err != nil {
				t.Errorf("%s, then committed: the guarded insert said %v", c.name, err)
			}
		}
	})
}

// TestGuardedMove: a reschedule's move riding in its event's statement
// (RideMove) under a guard takes the barber's lock there: it deletes the
// appointment's old reservation and the expired holds under the new time
// (not the others), reports both, and inserts the new reservation after
// them, over its own old time too. A reservation over the new time fails
// it as an overlap; a barber not there is not found.
func TestGuardedMove(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("the move rides, and a guard is taken, on PostgreSQL")
		}
		s := newMondays(t, db)
		ten := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
		now := ten.Add(-time.Hour)
		// move runs the move of apt_move (10:00–10:30) to [to, to+30 min)
		// under a guard of barber, in a transaction of its own (foreign
		// keys off: the appointments are not there), with an expired
		// hold at 10:30, another at 14:00 and an appointment at 12:00.
		move := func(barber string, to time.Time) (*store.Guard, *store.FreeRide, *ent.Tx, error) {
			t.Helper()
			tx := replicaTx(t, s.ctx, db)
			if _, err := tx.ExecContext(s.ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, expires_at, appointment_id) VALUES
('rsv_move', $1, $2, '2027-03-01 10:00Z', '2027-03-01 10:30Z', NULL, 'apt_move'),
('rsv_held', $1, $2, '2027-03-01 10:30Z', '2027-03-01 11:00Z', $3, NULL),
('rsv_later', $1, $2, '2027-03-01 14:00Z', '2027-03-01 14:30Z', $3, NULL),
('rsv_noon', $1, $2, '2027-03-01 12:00Z', '2027-03-01 12:30Z', NULL, 'apt_noon')`, s.acc.ID, s.barber.ID, now.Add(-time.Minute)); err != nil {
				t.Fatal(err)
			}
			fenced, err := db.FenceWaitlist(s.ctx, tx, s.acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			guarded, g := store.Guarded(fenced, barber, now)
			apt := "apt_move"
			moving, ride := store.RideMove(guarded, db.Dialect, store.Reserve{AccountID: s.acc.ID, BarberID: s.barber.ID,
				StartsAt: to, EndsAt: to.Add(30 * time.Minute), AppointmentID: &apt},
				func() store.OpeningProbe { return store.OpeningProbe{ID: "opn_move", Now: now} })
			n := store.Note{Notification: &ent.Notification{ID: "ntf_move", AccountID: s.acc.ID, Type: "appointment.rescheduled",
				Source: "api", CreatedAt: now}}
			_, err = store.InsertNotification(moving, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{})
			return g, ride, tx, err
		}

		g, ride, tx, err := move(s.barber.ID, ten.Add(15*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !g.Used() {
			t.Fatal("the move took no guard")
		}
		if old, _, ok := ride.Freed(); !ok || len(old) != 1 || !old[0].StartsAt.Equal(ten) {
			t.Errorf("freed %+v (carried %v), want the old 10:00", old, ok)
		}
		if x := g.Expired(); len(x) != 1 || !x[0].StartsAt.Equal(ten.Add(30*time.Minute)) || x[0].HoldID != nil || x[0].BarberID != s.barber.ID {
			t.Errorf("deleted %+v, want the expired hold at 10:30", x)
		}
		if n := txInt(t, s.ctx, tx, `SELECT count(*) FROM reservations WHERE appointment_id = 'apt_move' AND starts_at = '2027-03-01 10:15Z'`); n != 1 {
			t.Errorf("%d reservations at the new 10:15, want 1", n)
		}
		if n := txInt(t, s.ctx, tx, `SELECT count(*) FROM reservations WHERE id IN ('rsv_move', 'rsv_held', 'rsv_later')`); n != 1 {
			t.Errorf("%d of the old time and the expired holds left, want the one at 14:00", n)
		}
		// Each move's rows are its transaction's alone.
		rollback := func(tx *ent.Tx) {
			t.Helper()
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
		rollback(tx)

		_, _, tx, err = move(s.barber.ID, ten.Add(105*time.Minute))
		if store.Classify(err) != store.Overlap {
			t.Errorf("a move over 12:00's appointment: %v, want an overlap", err)
		}
		rollback(tx)
		_, _, tx, err = move("brb_missing", ten.Add(4*time.Hour))
		if !ent.IsNotFound(err) {
			t.Errorf("a move guarded by a barber not there: %v, want not found", err)
		}
		rollback(tx)
	})
}
