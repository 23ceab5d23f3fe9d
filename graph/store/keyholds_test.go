package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestLockKeyHolds checks on PostgreSQL that LockKeyHolds counts, under
// the key's lock, the holds that committed while it waited for the lock:
// a transaction writes a hold and takes the key's lock; another's
// LockKeyHolds waits for it, and once it commits counts its hold. It also
// reads the key's own cap, counts its holds alone (not another key's, nor
// expired ones), and finds no key of another account.
func TestLockKeyHolds(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, dialect.Postgres)
	m := newMondays(t, db)
	ctx := m.ctx
	service := db.Service.Create().SetAccountID(m.acc.ID).SetName("Cut").SetDurationMinutes(30).
		SetPriceAmount(1000).SetPriceCurrency("EUR").SaveX(m.sys)
	key := db.APIKey.Create().SetAccountID(m.acc.ID).SetName("bot").SetPrefix("p1").SetSecretHash("h1").
		SetScopes(domain.BookingScopes).SetMaxActiveHolds(5).SaveX(m.sys)
	other := db.APIKey.Create().SetAccountID(m.acc.ID).SetName("other").SetPrefix("p2").SetSecretHash("h2").
		SetScopes(domain.BookingScopes).SaveX(m.sys)
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	at := now.Add(24 * time.Hour)
	create := db.Hold.Create
	create().SetAccountID(m.acc.ID).SetAPIKeyID(key.ID).SetUnitID(m.unit.ID).SetServiceID(service.ID).SetBarberID(m.barber.ID).
		SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).SetExpiresAt(now.Add(time.Minute)).ExecX(m.sys)
	create().SetAccountID(m.acc.ID).SetAPIKeyID(key.ID).SetUnitID(m.unit.ID).SetServiceID(service.ID).SetBarberID(m.barber.ID).
		SetStartsAt(at.Add(time.Hour)).SetEndsAt(at.Add(90 * time.Minute)).SetExpiresAt(now).ExecX(m.sys) // expired at now
	create().SetAccountID(m.acc.ID).SetAPIKeyID(other.ID).SetUnitID(m.unit.ID).SetServiceID(service.ID).SetBarberID(m.barber.ID).
		SetStartsAt(at.Add(2 * time.Hour)).SetEndsAt(at.Add(150 * time.Minute)).SetExpiresAt(now.Add(time.Minute)).ExecX(m.sys)

	count := func(t *testing.T, ctx context.Context, q store.Queryer, keyID string) store.KeyHolds {
		t.Helper()
		kh, err := db.LockKeyHolds(ctx, q, keyID, 100, now)
		if err != nil {
			t.Fatal(err)
		}
		return kh
	}
	if kh := count(t, ctx, db.SQL, key.ID); kh.Cap == nil || *kh.Cap != 5 || kh.Active != 1 {
		t.Errorf("the key: %+v, want its cap 5 and 1 active hold", kh)
	}
	if kh := count(t, m.sys, db.SQL, other.ID); kh.Cap != nil || kh.Active != 1 {
		t.Errorf("the other key, the system's context: %+v, want no cap of its own and 1 active hold", kh)
	}
	if _, err := db.LockKeyHolds(tenant.WithAccount(context.Background(), "acc_elsewhere"), db.SQL, key.ID, 100, now); err == nil {
		t.Error("another account's context found the key")
	}

	// A transaction writes a hold of the key and takes its lock.
	first, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback() //nolint:errcheck // committed below
	if _, err := first.ExecContext(ctx, `INSERT INTO holds (id, created_at, updated_at, starts_at, ends_at, status, expires_at,
account_id, unit_id, service_id, barber_id, api_key_id) VALUES ('hld_racing', $1, $1, $2, $3, 'active', $4, $5, $6, $7, $8, $9)`,
		now, at.Add(3*time.Hour), at.Add(210*time.Minute), now.Add(time.Minute), m.acc.ID, m.unit.ID, service.ID, m.barber.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if kh := count(t, ctx, first, key.ID); kh.Active != 2 {
		t.Fatalf("under its own lock: %d active, want 2", kh.Active)
	}
	// Another waits for the lock, and counts the hold once it commits.
	second, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Rollback() //nolint:errcheck // a probe
	got := make(chan store.KeyHolds, 1)
	go func() {
		kh, err := db.LockKeyHolds(ctx, second, key.ID, 100, now)
		if err != nil {
			t.Error(err)
		}
		got <- kh
	}()
	waitForLock(t, db)
	select {
	case kh := <-got:
		t.Fatalf("LockKeyHolds did not wait for the key's lock: %+v", kh)
	default:
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if kh := <-got; kh.Active != 2 {
		t.Errorf("after the lock's holder committed its hold: %d active, want 2", kh.Active)
	}
}

// waitForLock waits until a backend on db's database waits for a lock
// (pg_stat_activity), and fails the test after 5 s.
func waitForLock(t *testing.T, db *store.DB) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var waiting bool
		if err := db.SQL.QueryRowContext(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
	}
	t.Fatal("nothing waited for a lock")
}

// TestRideKeyHolds checks on PostgreSQL that a key's count rides in the
// statement of a barber's lock (RideKeyHolds): under its cap, the lock is
// taken and the count returned; at its cap, the statement takes no lock
// and fails with ErrAtCap, with the count.
func TestRideKeyHolds(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, dialect.Postgres)
	m := newMondays(t, db)
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	key := keyHolding(t, db, m, 1, now.Add(24*time.Hour), now)

	// lock locks the barber with the key's count riding, and returns the
	// count, whether one was made, the lock's error, and the error of a
	// probe of the barber's row while the lock's transaction is open.
	type locked struct {
		kh         store.KeyHolds
		counted    bool
		err, probe error
	}
	lock := func(t *testing.T, defaultCap int) locked {
		t.Helper()
		tx, err := db.SQL.BeginTx(m.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // a probe
		ctx, ride := store.RideKeyHolds(m.ctx, db.Dialect, key.ID, defaultCap, now)
		_, err = db.LockedSchedule(ctx, tx, m.unit.ID, m.barber.ID, []int{1}, now, now.Add(24*time.Hour), now)
		kh, counted := ride.Counted()
		return locked{kh, counted, err, lockNowait(t, db, "barbers", m.barber.ID)}
	}
	// At its own cap of 1.
	l := lock(t, 100)
	if !errors.Is(l.err, store.ErrAtCap) || !l.counted || l.kh.Cap == nil || *l.kh.Cap != 1 || l.kh.Active != 1 {
		t.Errorf("at the cap: %v, counted %v %+v; want ErrAtCap, cap 1 and 1 active", l.err, l.counted, l.kh)
	}
	if l.probe != nil {
		t.Errorf("at the cap, the barber was locked: %v", l.probe)
	}
	// Under it: the key's own cap raised.
	db.APIKey.UpdateOneID(key.ID).SetMaxActiveHolds(2).ExecX(m.sys)
	l = lock(t, 100)
	if l.err != nil || !l.counted || l.kh.Cap == nil || *l.kh.Cap != 2 || l.kh.Active != 1 {
		t.Errorf("under the cap: %v, counted %v %+v; want cap 2 and 1 active", l.err, l.counted, l.kh)
	}
	if l.probe == nil {
		t.Error("under the cap, the barber was not locked")
	}
	// Without a cap of its own, the default decides.
	db.APIKey.UpdateOneID(key.ID).ClearMaxActiveHolds().ExecX(m.sys)
	if l := lock(t, 1); !errors.Is(l.err, store.ErrAtCap) {
		t.Errorf("at the default cap: %v, want ErrAtCap", l.err)
	}
	if l := lock(t, 0); l.err != nil {
		t.Errorf("no cap at all: %v", l.err)
	}
}

// TestRideKeyHoldsInRead checks on PostgreSQL that a key's count riding
// (RideKeyHolds) with no lock to take goes in the next read of a barber's
// day instead (a guarded hold's): the read counts the key's holds, hands
// its caller only the day's rows, and counts once; a key not found is not
// counted.
func TestRideKeyHoldsInRead(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, dialect.Postgres)
	m := newMondays(t, db)
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	at := now.Add(time.Hour)
	key := keyHolding(t, db, m, 3, at, now)
	db.Reservation.Create().SetAccountID(m.acc.ID).SetBarberID(m.barber.ID).SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).ExecX(m.sys)

	read := func(keyID string) (rows []store.ScheduleRow, kh store.KeyHolds, counted bool) {
		t.Helper()
		ctx, ride := store.RideKeyHolds(m.ctx, db.Dialect, keyID, 100, now)
		for i := range 2 {
			if i == 1 && keyID == key.ID {
				// The second read counts nothing: a new cap goes unseen.
				db.APIKey.UpdateOneID(key.ID).SetMaxActiveHolds(5).ExecX(m.sys)
			}
			rows = rows[:0]
			err := store.EachScheduleRow(ctx, db.SQL, db.Dialect, m.unit.ID, []string{m.barber.ID}, []int{1}, now, now.Add(8*time.Hour), now, false,
				func(r *store.ScheduleRow) error {
					rows = append(rows, *r)
					return nil
				})
			if err != nil {
				t.Fatal(err)
			}
		}
		kh, counted = ride.Counted()
		return rows, kh, counted
	}
	rows, kh, counted := read(key.ID)
	if !counted || kh.Cap == nil || *kh.Cap != 3 || kh.Active != 1 {
		t.Errorf("the read counted %v %+v; want cap 3 and 1 active", counted, kh)
	}
	kinds := map[store.RowKind]int{}
	for _, r := range rows {
		kinds[r.Kind]++
	}
	if len(rows) != 2 || kinds[store.RowReservation] != 1 || kinds[store.RowHours] != 1 {
		t.Errorf("the read handed on %+v; want the reservation and the hours", rows)
	}
	if _, _, counted := read("key_missing"); counted {
		t.Error("a key not found was counted")
	}
}

// keyHolding makes a booking key of m's account with a cap of most and
// one active hold at at (of a 30-minute service with m's barber),
// expiring a minute after now.
func keyHolding(t *testing.T, db *store.DB, m mondays, most int, at, now time.Time) *ent.APIKey {
	t.Helper()
	service := db.Service.Create().SetAccountID(m.acc.ID).SetName("Cut").SetDurationMinutes(30).
		SetPriceAmount(1000).SetPriceCurrency("EUR").SaveX(m.sys)
	key := db.APIKey.Create().SetAccountID(m.acc.ID).SetName("bot").SetPrefix(t.Name()).SetSecretHash(t.Name()).
		SetScopes(domain.BookingScopes).SetMaxActiveHolds(most).SaveX(m.sys)
	db.Hold.Create().SetAccountID(m.acc.ID).SetAPIKeyID(key.ID).SetUnitID(m.unit.ID).SetServiceID(service.ID).SetBarberID(m.barber.ID).
		SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).SetExpiresAt(now.Add(time.Minute)).ExecX(m.sys)
	return key
}
