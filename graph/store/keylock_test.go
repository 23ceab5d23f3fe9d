package store_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/hold"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestLockKeyWithInsert: a hold written under LockKeyWithInsert takes its
// key's row lock in its own statement on PostgreSQL, and LockKeyHolds then
// sends the count alone, this hold counted; without it, the lock and the
// count are two statements.
func TestLockKeyWithInsert(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newMondays(t, db)
		key := db.APIKey.Create().SetAccountID(s.acc.ID).SetName("bot").SetPrefix("bk_keylock").
			SetSecretHash("hash").SetScopes([]string{"holds:write"}).SaveX(s.sys)
		svc := db.Service.Create().SetAccountID(s.acc.ID).SetName("Cut").SetDurationMinutes(30).
			SetPriceAmount(1500).SetPriceCurrency("EUR").SaveX(s.sys)
		at := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
		now := at.Add(-24 * time.Hour)
		counted, log := storetest.Counting(db)
		// locked says whether the key's row is locked FOR NO KEY UPDATE,
		// from another connection.
		locked := func(ctx context.Context) bool {
			t.Helper()
			probe, err := db.SQL.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer probe.Rollback() //nolint:errcheck // a probe
			_, err = probe.ExecContext(ctx, `SELECT 1 FROM api_keys WHERE id = $1 FOR NO KEY UPDATE NOWAIT`, key.ID)
			if err != nil && store.Classify(err) != store.Retry {
				t.Fatal(err)
			}
			return err != nil
		}
		holdAt := func(ctx context.Context, start time.Time, lockedByInsert bool) (int, int) {
			t.Helper()
			tx, err := counted.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // nothing to keep
			err = counted.InsertReserved(ctx, tx, func(ctx context.Context) (store.Reserve, error) {
				h, err := tx.Hold.Create().SetAccountID(s.acc.ID).SetAPIKeyID(key.ID).SetUnitID(s.unit.ID).
					SetServiceID(svc.ID).SetBarberID(s.barber.ID).SetStartsAt(start).
					SetEndsAt(start.Add(30 * time.Minute)).SetExpiresAt(now.Add(time.Hour)).SetStatus(hold.StatusActive).Save(ctx)
				if err != nil {
					return store.Reserve{}, err
				}
				return store.Reserve{AccountID: h.AccountID, BarberID: h.BarberID, StartsAt: h.StartsAt, EndsAt: h.EndsAt,
					ExpiresAt: &h.ExpiresAt, HoldID: &h.ID}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if db.Dialect == dialect.Postgres {
				if got := locked(s.sys); got != lockedByInsert {
					t.Errorf("key locked after the insert: %v, want %v", got, lockedByInsert)
				}
			}
			log.Take()
			count := counted.LockKeyHolds
			if db.Dialect != dialect.Postgres { // writes one at a time: no lock to take
				count = func(ctx context.Context, c store.Queryer, keyID string, defaultCap int, now time.Time) (store.KeyHolds, error) {
					return store.CountKeyHolds(ctx, c, keyID, defaultCap, now)
				}
			}
			kh, err := count(ctx, tx, key.ID, 5, now)
			if err != nil {
				t.Fatal(err)
			}
			sent := len(log.Take())
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return kh.Active, sent
		}
		if active, sent := holdAt(s.ctx, at, false); active != 1 || sent != map[string]int{dialect.Postgres: 2, dialect.SQLite: 1}[db.Dialect] {
			t.Errorf("without LockKeyWithInsert: %d active, %d statements; want 1 active, the lock and the count (the count alone on SQLite)", active, sent)
		}
		if active, sent := holdAt(store.LockKeyWithInsert(s.ctx, key.ID), at.Add(time.Hour), true); active != 2 || sent != 1 {
			t.Errorf("with LockKeyWithInsert: %d active, %d statements; want 2 active, the count alone", active, sent)
		}
	})
}
