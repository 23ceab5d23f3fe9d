package store_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/barber"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestFenceIn: the condition FenceIn adds keeps the query's rows (it is
// true). On PostgreSQL the statement holds the account's waitlist fence,
// shared, until the commit, and the ctx says so (no statement of its own
// later); it takes the fence before it locks a row, so a writer waiting
// for a waitlist join's exclusive fence holds no row the join's account
// may need meanwhile.
func TestFenceIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newMondays(t, db)
		ctx, acc, b := s.ctx, s.acc, s.barber
		lockBarber := func(done chan<- error) {
			tx, err := db.Tx(ctx)
			if err != nil {
				done <- err
				return
			}
			defer tx.Rollback() //nolint:errcheck // nothing to keep
			fctx, fence := db.FenceIn(ctx, acc.ID)
			got, err := store.ForUpdate(db, tx.Barber.Query().Where(fence, barber.ID(b.ID))).Only(fctx)
			switch {
			case err != nil:
			case got.ID != b.ID:
				t.Errorf("read barber %s, want %s", got.ID, b.ID)
			case store.Fenced(fctx, acc.ID) != (db.Dialect == dialect.Postgres):
				t.Errorf("Fenced after the statement: %v on %s", store.Fenced(fctx, acc.ID), db.Dialect)
			case db.Dialect == dialect.Postgres:
				// Held until the commit: an exclusive taker is refused.
				var taken bool
				err = db.SQL.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(4242, hashtext($1))`, acc.ID).Scan(&taken)
				if err == nil && taken {
					t.Error("the fence was not held after the statement")
					_, err = db.SQL.ExecContext(ctx, `SELECT pg_advisory_unlock(4242, hashtext($1))`, acc.ID)
				}
			}
			done <- err
		}
		done := make(chan error, 1)
		lockBarber(done)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if db.Dialect != dialect.Postgres {
			return
		}
		// A join's exclusive fence held elsewhere: the statement waits for
		// it before it locks the barber's row.
		holder, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback() //nolint:errcheck // nothing to keep
		if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_xact_lock(4242, hashtext($1))`, acc.ID); err != nil {
			t.Fatal(err)
		}
		go lockBarber(done)
		waiting := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !waiting; time.Sleep(10 * time.Millisecond) {
			select {
			case err := <-done:
				t.Fatalf("the statement did not wait for the exclusive fence: %v", err)
			default:
			}
			// Waiting on the fence, as pg_locks shows it.
			err := db.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND mode = 'ShareLock' AND classid = 4242
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&waiting)
			if err != nil {
				t.Fatal(err)
			}
		}
		if !waiting {
			t.Fatal("no statement waited for the fence")
		}
		if err := lockNowait(t, db, "barbers", b.ID); err != nil {
			t.Fatalf("the barber's row was locked while the statement waited for the fence: %v", err)
		}
		if err := holder.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// lockNowait locks the row of table with id FOR UPDATE NOWAIT in a
// transaction of its own, rolled back at once, and returns the statement's
// error: nil when nobody else holds the row.
func lockNowait(t *testing.T, db *store.DB, table, id string) error {
	t.Helper()
	ctx := context.Background()
	probe, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Rollback() //nolint:errcheck // a probe
	_, err = probe.ExecContext(ctx, `SELECT 1 FROM `+table+` WHERE id = $1 FOR UPDATE NOWAIT`, id)
	return err
}
