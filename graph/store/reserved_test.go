package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// recording skips a test of InsertReserved's recording on SQLite, which
// sends each statement as it comes, and gives it a system context and an
// instant to write at.
func recording(t *testing.T, db *store.DB) (context.Context, time.Time) {
	t.Helper()
	if db.Dialect != dialect.Postgres {
		t.Skip("SQLite sends each statement as it comes")
	}
	return tenant.System(context.Background()), time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
}

// TestInsertReservedRecordsOneInsert: on PostgreSQL a create whose save
// sends more than its one INSERT, or reads, fails before anything is sent,
// rather than sending its statements out of order.
func TestInsertReservedRecordsOneInsert(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, at := recording(t, db)
		for name, save := range map[string]func(context.Context, *ent.Tx) error{
			"two inserts": func(ctx context.Context, tx *ent.Tx) error {
				for range 2 {
					if _, err := tx.TimeOff.Create().SetAccountID("acc_1").SetBarberID("brb_1").
						SetStartsAt(at).SetEndsAt(at.Add(time.Hour)).Save(ctx); err != nil {
						return err
					}
				}
				return nil
			},
			"a read": func(ctx context.Context, tx *ent.Tx) error {
				_, err := tx.Barber.Query().Count(ctx)
				return err
			},
		} {
			tx, err := db.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = db.InsertReserved(ctx, tx, func(ctx context.Context) (store.Reserve, error) {
				return store.Reserve{}, save(ctx, tx)
			})
			if err == nil || !strings.Contains(err.Error(), "recorded create") {
				t.Errorf("%s: %v, want the recording's refusal", name, err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestCarriedFlushed: on PostgreSQL, under store.Carry, InsertReserved
// sends nothing and keeps its statement for the next one that carries it;
// Flush sends it when none did, once.
func TestCarriedFlushed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, at := recording(t, db)
		// Rows of no account or barber.
		tx := replicaTx(t, ctx, db)
		count := func() int {
			t.Helper()
			return txInt(t, ctx, tx, `SELECT count(*) FROM reservations WHERE barber_id = 'brb_carried'`)
		}
		carrying, carried := store.Carry(ctx)
		err := db.InsertReserved(carrying, tx, func(ctx context.Context) (store.Reserve, error) {
			return store.Reserve{AccountID: "acc_1", BarberID: "brb_carried", StartsAt: at, EndsAt: at.Add(time.Hour)},
				tx.TimeOff.Create().SetAccountID("acc_1").SetBarberID("brb_carried").SetStartsAt(at).SetEndsAt(at.Add(time.Hour)).Exec(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 0 {
			t.Fatalf("%d reservations written before the kept statement was sent", n)
		}
		for range 2 {
			if err := carried.Flush(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(); n != 1 {
			t.Errorf("%d reservations after Flush, twice; want 1", n)
		}
	})
}

// txInt is the integer q selects in tx, in its one row (-1: no row).
func txInt(t *testing.T, ctx context.Context, tx *ent.Tx, q string) int {
	t.Helper()
	rows, err := tx.QueryContext(ctx, q)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// beginTx begins a transaction, rolled back when the test ends.
func beginTx(t *testing.T, ctx context.Context, db *store.DB) *ent.Tx {
	t.Helper()
	tx, err := db.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// replicaTx begins a transaction, rolled back when the test ends, whose
// foreign keys' triggers are off (session_replication_role replica): rows
// that refer to rows the test does not make.
func replicaTx(t *testing.T, ctx context.Context, db *store.DB) *ent.Tx {
	t.Helper()
	tx := beginTx(t, ctx, db)
	if _, err := tx.ExecContext(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	return tx
}

// goTx runs f in a transaction of its own, in a goroutine, rolls it back,
// and sends f's error (or the transaction's) on the channel it returns.
func goTx(ctx context.Context, db *store.DB, f func(tx *ent.Tx) error) <-chan error {
	done := make(chan error, 1)
	go func() {
		tx, err := db.Tx(ctx)
		if err != nil {
			done <- err
			return
		}
		defer tx.Rollback() //nolint:errcheck // nothing to keep
		done <- f(tx)
	}()
	return done
}
