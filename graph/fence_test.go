package graph

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// A fence read must see every change committed before it was called, from
// any connection, while concurrent readers share queries.
func TestFenceSeesEveryCommittedChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(ctx)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		f := &fence{db: db, metrics: noMetrics{}}
		bump := "UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id = ? RETURNING bookings_version"
		if db.Dialect == dialect.Postgres {
			bump = strings.Replace(bump, "?", "$1", 1)
		}
		var committed atomic.Int64 // highest bookings version known committed
		var reads atomic.Int64
		var wg sync.WaitGroup
		// Writers bump the version and publish what they committed.
		for range 2 {
			wg.Go(func() {
				for range 20 {
					var v int64
					err := db.SQL.QueryRowContext(ctx, bump, b.ID).Scan(&v)
					if err != nil {
						if store.Classify(err) == store.Retry {
							continue
						}
						t.Error(err)
						return
					}
					for {
						c := committed.Load()
						if v <= c || committed.CompareAndSwap(c, v) {
							break
						}
					}
				}
			})
		}
		// Readers must never see less than what was committed before they
		// asked.
		for range 8 {
			wg.Go(func() {
				for range 40 {
					floor := committed.Load()
					got, err := f.read(ctx, acc.ID, []string{b.ID})
					if err != nil {
						t.Error(err)
						return
					}
					reads.Add(1)
					if v, ok := got.accounts[acc.ID]; !ok || v < acc.ConfigVersion {
						t.Errorf("account version %d (read: %v), want at least %d", v, ok, acc.ConfigVersion)
					}
					if got.barbers[b.ID] < floor {
						t.Errorf("read bookings version %d after %d was committed", got.barbers[b.ID], floor)
					}
				}
			})
		}
		wg.Wait()
		if reads.Load() != 8*40 {
			t.Fatalf("%d reads", reads.Load())
		}
	})
}
