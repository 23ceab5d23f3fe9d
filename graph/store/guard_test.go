package store_test

import (
	"context"
	"database/sql"
	"errors"
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
		begin := func() *ent.Tx { return beginTx(t, ctx, db) }

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

// TestGuardedConsume: a guarded insert that consumes a hold
// (Guard.Consuming) records the hold consumed and deletes its reservation
// under the barber's lock, then writes over the hold's time (and the
// expired holds under it, which it reports), its notification included.
// A hold no longer active then (released before, or consumed by a writer
// whose lock the insert waited for), or a barber not there, fails it with
// ErrHoldGone, and nothing of it is written.
func TestGuardedConsume(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, dialect.Postgres)
	s := newMondays(t, db)
	bounded, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	ten := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	now := ten.Add(-time.Hour)
	// The holds' service and key are not there: their rows go in with
	// foreign keys off.
	setup := replicaTx(t, bounded, db)
	if _, err := setup.ExecContext(bounded, `INSERT INTO holds (id, account_id, created_at, updated_at, api_key_id, unit_id, service_id, barber_id, starts_at, ends_at, status, expires_at) VALUES
('hld_take', $1, $3, $3, 'key_x', $4, 'svc_x', $2, '2027-03-01 10:00Z', '2027-03-01 10:30Z', 'active', $5),
('hld_gone', $1, $3, $3, 'key_x', $4, 'svc_x', $2, '2027-03-01 12:00Z', '2027-03-01 12:30Z', 'released', $5),
('hld_raced', $1, $3, $3, 'key_x', $4, 'svc_x', $2, '2027-03-01 14:00Z', '2027-03-01 14:30Z', 'active', $5)`,
		s.acc.ID, s.barber.ID, now, s.unit.ID, now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.ExecContext(bounded, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at, expires_at, hold_id) VALUES
('rsv_take', $1, $2, '2027-03-01 10:00Z', '2027-03-01 10:30Z', $3, 'hld_take'),
('rsv_expired', $1, $2, '2027-03-01 10:30Z', '2027-03-01 11:00Z', $4, NULL),
('rsv_raced', $1, $2, '2027-03-01 14:00Z', '2027-03-01 14:30Z', $3, 'hld_raced')`,
		s.acc.ID, s.barber.ID, now.Add(10*time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := setup.Commit(); err != nil {
		t.Fatal(err)
	}
	notes := 0
	// consume writes a time off and the reservation of [from, from+45
	// min) under a guard of barber that consumes holdID, carried by a
	// notification, in tx.
	consume := func(tx *ent.Tx, barber, holdID string, from time.Time) (*store.Guard, error) {
		t.Helper()
		guarded, g := store.Guarded(bounded, barber, now)
		g.Consuming(holdID)
		guarded, carry := store.Carry(guarded)
		end := from.Add(45 * time.Minute)
		err := db.InsertReserved(guarded, tx, func(ctx context.Context) (store.Reserve, error) {
			return store.Reserve{AccountID: s.acc.ID, BarberID: s.barber.ID, StartsAt: from, EndsAt: end},
				tx.TimeOff.Create().SetAccountID(s.acc.ID).SetBarberID(s.barber.ID).SetStartsAt(from).SetEndsAt(end).Exec(ctx)
		})
		if err != nil {
			return g, err
		}
		notes++
		n := store.Note{Notification: &ent.Notification{ID: fmt.Sprintf("ntf_consume_%d", notes), AccountID: s.acc.ID,
			Type: "appointment.created", Source: "api", CreatedAt: now}}
		if _, err := store.InsertNotification(guarded, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{}); err != nil {
			return g, err
		}
		return g, carry.Flush(guarded, tx)
	}
	begin := func() *ent.Tx { return beginTx(t, bounded, db) }
	status := func(id string) string {
		t.Helper()
		var st string
		if err := db.SQL.QueryRowContext(bounded, `SELECT status FROM holds WHERE id = $1`, id).Scan(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	// nothing checks that tx, failed with ErrHoldGone, wrote nothing, and
	// rolls it back.
	nothing := func(what string, tx *ent.Tx, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrHoldGone) {
			t.Errorf("%s: %v, want ErrHoldGone", what, err)
		}
		if n := txInt(t, bounded, tx, `SELECT count(*) FROM time_offs`) + txInt(t, bounded, tx, `SELECT count(*) FROM notifications`); n != 1+1 {
			t.Errorf("%s: %d time offs and notifications, want the first consume's two", what, n)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}

	tx := begin()
	g, err := consume(tx, s.barber.ID, "hld_take", ten)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if x := g.Expired(); len(x) != 1 || !x[0].StartsAt.Equal(ten.Add(30*time.Minute)) {
		t.Errorf("deleted %+v, want the expired hold at 10:30", x)
	}
	if st := status("hld_take"); st != "consumed" {
		t.Errorf("the consumed hold is %s", st)
	}
	var left int
	if err := db.SQL.QueryRowContext(bounded, `SELECT count(*) FROM reservations WHERE id IN ('rsv_take', 'rsv_expired')
OR (starts_at = '2027-03-01 10:00Z' AND ends_at = '2027-03-01 10:45Z' AND hold_id IS NULL)`).Scan(&left); err != nil || left != 1 {
		t.Errorf("%d of the hold's, the expired and the new reservation left (%v), want the new one", left, err)
	}

	tx = begin()
	_, err = consume(tx, s.barber.ID, "hld_gone", ten.Add(2*time.Hour))
	nothing("a released hold", tx, err)

	tx = begin()
	_, err = consume(tx, "brb_missing", "hld_raced", ten.Add(4*time.Hour))
	nothing("a barber not there", tx, err)

	// Consumed by a writer whose lock the insert waits for.
	other := begin()
	if _, err := other.ExecContext(bounded, `SELECT id FROM barbers WHERE id = $1 FOR UPDATE`, s.barber.ID); err != nil {
		t.Fatal(err)
	}
	tx = begin()
	done := make(chan error, 1)
	go func() {
		_, err := consume(tx, s.barber.ID, "hld_raced", ten.Add(4*time.Hour))
		done <- err
	}()
	waitForLock(t, db)
	if _, err := other.ExecContext(bounded, `UPDATE holds SET status = 'consumed' WHERE id = 'hld_raced'`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(bounded, `DELETE FROM reservations WHERE id = 'rsv_raced'`); err != nil {
		t.Fatal(err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	nothing("a hold consumed meanwhile", tx, <-done)
}
