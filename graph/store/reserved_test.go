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

// TestInsertReservedRecordsOneInsert: on PostgreSQL a create whose save
// sends more than its one INSERT, or reads, fails before anything is sent,
// rather than sending its statements out of order.
func TestInsertReservedRecordsOneInsert(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("SQLite sends each statement as it comes")
		}
		ctx := tenant.System(context.Background())
		at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
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
