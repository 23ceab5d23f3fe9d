package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestGuarded: a guarded insert writes only while the barber's bookings
// version is the one its day was read at. Held, it writes the row and its
// reservation and deletes the expired holds' reservations under the new
// time (not the others), and reports them; moved, it writes nothing and
// the transaction goes on. A guard that waits for another writer's lock
// sees what that writer committed: moved if it changed the barber's
// reservations, held if it did not. SQLite refuses a guard.
func TestGuarded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		sys := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(sys)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(sys)
		ctx := tenant.WithAccount(context.Background(), acc.ID)
		at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		now := at.Add(-time.Hour)
		reservation := func(from time.Time, minutes int, expires *time.Time) {
			t.Helper()
			db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(from).
				SetEndsAt(from.Add(time.Duration(minutes) * time.Minute)).SetNillableExpiresAt(expires).ExecX(sys)
		}
		version := func() int64 {
			t.Helper()
			return db.Barber.GetX(sys, b.ID).BookingsVersion
		}
		expiredLeft := `SELECT count(*) FROM reservations WHERE barber_id = $1 AND expires_at < '2027-03-02 09:00:00+00'`
		count := func(q string) int {
			t.Helper()
			var n int
			if err := db.SQL.QueryRowContext(sys, q, b.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// insert writes a time off (any ent create will do) and the
		// reservation of [from, from+minutes) under a guard at v.
		insert := func(tx *ent.Tx, v int64, from time.Time, minutes int) (*store.Guard, error) {
			t.Helper()
			guarded, g := store.Guarded(ctx, b.ID, v, now)
			end := from.Add(time.Duration(minutes) * time.Minute)
			expires := now.Add(5 * time.Minute)
			return g, db.InsertReserved(guarded, tx, func(ctx context.Context) (store.Reserve, error) {
				return store.Reserve{AccountID: acc.ID, BarberID: b.ID, StartsAt: from, EndsAt: end, ExpiresAt: &expires},
					tx.TimeOff.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(from).SetEndsAt(end).Exec(ctx)
			})
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
			if _, err := insert(begin(), version(), at, 30); err == nil {
				t.Fatal("a guarded insert on SQLite")
			}
			return
		}

		// Held: the expired hold under the new time goes, the one after
		// it stays.
		expired := now.Add(-time.Minute)
		reservation(at, 30, &expired)
		reservation(at.Add(2*time.Hour), 30, &expired)
		tx := begin()
		g, err := insert(tx, version(), at, 45)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if x := g.Expired(); len(x) != 1 || !x[0].StartsAt.Equal(at) || !x[0].EndsAt.Equal(at.Add(30*time.Minute)) || x[0].BarberID != b.ID {
			t.Errorf("deleted %+v, want the expired hold at 10:00", x)
		}
		if n := count(expiredLeft); n != 1 {
			t.Errorf("%d expired reservations left, want the one at 12:00", n)
		}
		if n := count(`SELECT count(*) FROM time_offs WHERE barber_id = $1`); n != 1 {
			t.Errorf("%d rows written with the reservation, want 1", n)
		}

		// Moved: another reservation since the read; nothing is written
		// or deleted, and the transaction goes on.
		reservation(at.Add(5*time.Hour), 30, &expired)
		v := version()
		reservation(at.Add(4*time.Hour), 30, nil)
		tx = begin()
		if _, err := insert(tx, v, at.Add(5*time.Hour), 30); !errors.Is(err, store.ErrGuardMoved) {
			t.Fatalf("a guard whose version moved: %v, want ErrGuardMoved", err)
		}
		if n := txInt(t, ctx, tx, `SELECT count(*) FROM time_offs`); n != 1 {
			t.Errorf("a moved guard wrote: %d time offs", n)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := count(expiredLeft); n != 2 {
			t.Errorf("%d expired reservations left after a moved guard, want 2", n)
		}

		// Waiting for another writer's lock: what it committed decides.
		for _, c := range []struct {
			name    string
			changes bool
			want    error
		}{{"a writer that booked", true, store.ErrGuardMoved}, {"a writer that only locked", false, nil}} {
			v := version()
			other := begin()
			if _, err := other.ExecContext(ctx, `SELECT id FROM barbers WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			from := at.Add(6 * time.Hour)
			go func() {
				tx, err := db.Tx(ctx)
				if err != nil {
					done <- err
					return
				}
				defer tx.Rollback()
				_, err = insert(tx, v, from, 30)
				done <- err
			}()
			waitForLock(t, db)
			if c.changes {
				if _, err := other.ExecContext(ctx, `INSERT INTO reservations (id, account_id, barber_id, starts_at, ends_at)
VALUES ('rsv_guard_other', $1, $2, $3, $4)`, acc.ID, b.ID, at.Add(7*time.Hour), at.Add(8*time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			if err := other.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Errorf("%s, then committed: the guard said %v, want %v", c.name, err, c.want)
			}
		}
	})
}
