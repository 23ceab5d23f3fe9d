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
	"barberd/ent/hold"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestKeyHoldsCheckedAtCommit checks on PostgreSQL that the COMMIT of a
// transaction whose key's count rode in a statement (RideKeyHolds) counts
// the key's active holds again, under the key's row lock, the holds it
// inserted included, and refuses more than the cap (OverKeyCap): the key's
// own active holds alone (not another key's, nor expired ones), those
// committed while it waited for the lock, by the key's own cap or else the
// default; nothing is checked for a key without a cap, nor when no count
// rode.
func TestKeyHoldsCheckedAtCommit(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, dialect.Postgres)
	m := newMondays(t, db)
	ctx := m.ctx
	now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	at := now.Add(24 * time.Hour)
	key := keyHolding(t, db, m, 2, at, now) // cap 2, 1 active
	first := db.Hold.Query().Where(hold.APIKeyID(key.ID)).OnlyX(m.sys)
	other := db.APIKey.Create().SetAccountID(m.acc.ID).SetName("other").SetPrefix("other").SetSecretHash("other").
		SetScopes(domain.BookingScopes).SaveX(m.sys)
	holds := 0
	insert := func(t *testing.T, tx *sql.Tx, keyID string, expires time.Time) string {
		t.Helper()
		holds++
		id := fmt.Sprintf("hld_commit_%d", holds)
		starts := at.Add(time.Duration(holds) * time.Hour)
		if _, err := tx.ExecContext(ctx, `INSERT INTO holds (id, created_at, updated_at, starts_at, ends_at, status, expires_at,
account_id, unit_id, service_id, barber_id, api_key_id) VALUES ($1, $2, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10)`,
			id, now, starts, starts.Add(30*time.Minute), expires, m.acc.ID, m.unit.ID, first.ServiceID, m.barber.ID, keyID); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// holdOf begins a transaction that inserts a hold of the key, its count
	// riding in a read of the barber's day first (as a guarded hold's does)
	// when ride.
	holdOf := func(t *testing.T, defaultCap int, ride bool) (*sql.Tx, string) {
		t.Helper()
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		if ride {
			rctx, r := store.RideKeyHolds(ctx, db.Dialect, key.ID, defaultCap, now)
			if err := store.EachScheduleRow(rctx, tx, db.Dialect, m.unit.ID, []string{m.barber.ID}, []int{1}, now, at, now, false,
				func(*store.ScheduleRow) error { return nil }); err != nil {
				t.Fatal(err)
			}
			if _, counted := r.Counted(); !counted {
				t.Fatal("the read counted nothing")
			}
		}
		return tx, insert(t, tx, key.ID, now.Add(time.Minute))
	}
	written := func(id string) bool { return db.Hold.Query().Where(hold.ID(id)).ExistX(m.sys) }
	commit := func(t *testing.T, what string, tx *sql.Tx, id string, refused bool) {
		t.Helper()
		err := tx.Commit()
		switch {
		case refused && !store.OverKeyCap(err):
			t.Errorf("%s: COMMIT: %v, want it refused over the key's cap", what, err)
		case !refused && err != nil:
			t.Errorf("%s: COMMIT: %v", what, err)
		case written(id) == refused:
			t.Errorf("%s: the hold written: %v", what, !refused)
		}
	}
	// Beside the key's one active hold: an expired one, and another key's.
	setup, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	insert(t, setup, key.ID, now)
	insert(t, setup, other.ID, now.Add(time.Minute))
	if err := setup.Commit(); err != nil {
		t.Fatal(err)
	}

	tx, id := holdOf(t, 100, true)
	commit(t, "the second of 2", tx, id, false)
	tx, id = holdOf(t, 100, true)
	commit(t, "the third of 2", tx, id, true)
	db.APIKey.UpdateOneID(key.ID).SetMaxActiveHolds(3).ExecX(m.sys)
	tx, id = holdOf(t, 100, true)
	commit(t, "the third of 3", tx, id, false)

	// A hold committing while another holds the key's lock waits, and
	// counts the other's hold once that commits.
	db.APIKey.UpdateOneID(key.ID).SetMaxActiveHolds(4).ExecX(m.sys)
	locker, lockerID := holdOf(t, 100, false)
	if _, err := locker.ExecContext(ctx, "SELECT 1 FROM api_keys WHERE id = $1 FOR NO KEY UPDATE", key.ID); err != nil {
		t.Fatal(err)
	}
	tx, id = holdOf(t, 100, true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		commit(t, "the fifth of 4, committed while the fourth held the key's lock", tx, id, true)
	}()
	waitForLock(t, db)
	select {
	case <-done:
		t.Fatal("the COMMIT did not wait for the key's lock")
	default:
	}
	commit(t, "the fourth of 4, which held the key's lock", locker, lockerID, false)
	<-done

	// The default cap, for a key without its own: none at all, then 5.
	db.APIKey.UpdateOneID(key.ID).ClearMaxActiveHolds().ExecX(m.sys)
	tx, id = holdOf(t, 0, true)
	commit(t, "the fifth, without a cap", tx, id, false)
	tx, id = holdOf(t, 5, true)
	commit(t, "the sixth of a default 5", tx, id, true)
	// Nothing rode: nothing is checked.
	tx, id = holdOf(t, 5, false)
	commit(t, "the sixth of a default 5, no count riding", tx, id, false)
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
