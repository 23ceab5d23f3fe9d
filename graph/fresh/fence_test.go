package fresh

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
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
		f := NewFence(db, 0, nil)
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
					got, err := f.Read(ctx, acc.ID, []string{b.ID})
					if err != nil {
						t.Error(err)
						return
					}
					reads.Add(1)
					if v, ok := got.Config(acc.ID); !ok || v < acc.ConfigVersion {
						t.Errorf("account version %d (read: %v), want at least %d", v, ok, acc.ConfigVersion)
					}
					if v, _ := got.Bookings(b.ID); v < floor {
						t.Errorf("read bookings version %d after %d was committed", v, floor)
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

// queryCounter counts the fence's queries.
type queryCounter struct {
	noMetrics
	n atomic.Int64
}

func (c *queryCounter) VersionRead(int) { c.n.Add(1) }

// windowFence makes an account, and a fence with the window over db whose
// queries it counts.
func windowFence(db *store.DB, window time.Duration) (context.Context, *ent.Account, *Fence, *queryCounter) {
	ctx := tenant.System(context.Background())
	acc := db.Account.Create().SetName("Chain").SaveX(ctx)
	queries := &queryCounter{}
	return ctx, acc, NewFence(db, window, queries), queries
}

// With a window, a read is answered by versions read no earlier than the
// window before it was called: without a query of its own while they are
// that recent (and with one started for the reads to come once they are
// refreshAfter old, at most three quarters of the window), and never by
// versions read before a change committed a window or more earlier.
func TestFenceWindow(t *testing.T) {
	const window = 400 * time.Millisecond
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, acc, f, queries := windowFence(db, window)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		read := func() int64 {
			t.Helper()
			got, err := f.Read(ctx, acc.ID, []string{b.ID})
			if err != nil {
				t.Fatal(err)
			}
			_, account := got.Config(acc.ID)
			v, barber := got.Bookings(b.ID)
			if !account || !barber {
				t.Fatalf("versions read: %+v", got)
			}
			return v
		}
		first := time.Now()
		v0 := read()
		for range 50 {
			if v := read(); v != v0 {
				t.Fatalf("version %d, then %d, with nothing written", v0, v)
			}
		}
		if time.Since(first) < window/4 && queries.n.Load() != 1 {
			t.Fatalf("%d queries for reads within a quarter of the window", queries.n.Load())
		}

		// Four fifths of a window later, a read is still answered,
		// and has the versions read again for the reads to come: one
		// query, however many read while it runs.
		time.Sleep(window*4/5 - time.Since(first))
		before := queries.n.Load()
		var readers sync.WaitGroup
		for range 50 {
			readers.Go(func() {
				if _, err := f.Read(ctx, acc.ID, []string{b.ID}); err != nil {
					t.Error(err)
				}
			})
		}
		readers.Wait()
		for deadline := time.Now().Add(5 * time.Second); queries.n.Load() == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no query was started to read the versions again")
			}
		}
		time.Sleep(window / 10)
		if n := queries.n.Load() - before; n != 1 {
			t.Fatalf("%d queries read the versions again for 50 reads", n)
		}

		// A change to the barber's reservations, as any writer makes it.
		start := time.Now().Add(24 * time.Hour).Truncate(time.Hour)
		db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).
			SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute)).ExecX(ctx)
		time.Sleep(window)
		if v := read(); v != v0+1 {
			t.Fatalf("version %d a window after %d was committed", v, v0+1)
		}
	})
}

// A refresh starts refreshLead times as long as rounds take before the
// versions run out, within a quarter and three quarters of the window; slow
// rounds move it early, and their weight fades round by round.
func TestFenceRefreshAfter(t *testing.T) {
	const window = 5 * time.Millisecond
	f := &Fence{window: window}
	if got := f.refreshAfter(); got != window*3/4 {
		t.Fatalf("before any round: %v, want three quarters of the window", got)
	}
	for range 100 {
		f.timed(time.Millisecond)
	}
	if got, want := f.refreshAfter(), window-refreshLead*time.Millisecond; got < want-10*time.Microsecond || got > want+10*time.Microsecond {
		t.Fatalf("rounds of 1 ms: %v, want about %v", got, want)
	}
	f.timed(40 * time.Millisecond) // a round far slower than the window
	if got := f.refreshAfter(); got != window/4 {
		t.Fatalf("after a slow round: %v, want a quarter of the window", got)
	}
	rounds := 0
	for ; f.refreshAfter() < window*3/4; rounds++ {
		f.timed(100 * time.Microsecond)
		if rounds > 200 {
			t.Fatalf("a slow round still counts after %d fast ones: %v", rounds, f.took)
		}
	}
	if rounds < 8 {
		t.Fatalf("a slow round forgotten after %d rounds", rounds)
	}
}

// A read that finds nothing recent enough waits for the round running, if
// that round was sent within the window before the read and reads what it
// asks for, rather than for a round of its own after it.
func TestFenceJoinsRunningRound(t *testing.T) {
	const window = time.Second
	f := &Fence{window: window, metrics: noMetrics{}}
	running := &readRound{accounts: map[string]struct{}{"acc_1": {}}, barbers: map[string]struct{}{"brb_1": {}},
		done: make(chan struct{}), sent: time.Now().Add(-window / 2)}
	f.mu.Lock()
	f.running = running
	f.mu.Unlock()
	answered := make(chan Versions, 1)
	go func() {
		got, err := f.Read(context.Background(), "acc_1", []string{"brb_1"})
		if err != nil {
			t.Error(err)
		}
		answered <- got
	}()
	select {
	case <-answered:
		t.Fatal("answered before the round it waits for")
	case <-time.After(50 * time.Millisecond):
	}
	f.mu.Lock()
	running.got = Versions{accounts: map[string]int64{"acc_1": 7}, barbers: map[string]int64{"brb_1": 3}}
	close(running.done)
	f.mu.Unlock()
	got := <-answered
	if c, _ := got.Config("acc_1"); c != 7 {
		t.Fatalf("config %d, want the running round's 7", c)
	}
	if b, _ := got.Bookings("brb_1"); b != 3 {
		t.Fatalf("bookings %d, want the running round's 3", b)
	}
	if f.next != nil || running.callers != 1 {
		t.Fatalf("a round gathered (%v) or the read did not count on the running one (%d callers)", f.next != nil, running.callers)
	}

	now := time.Now()
	for _, c := range []struct {
		name, account string
		barbers       []string
		sent          time.Time
	}{
		{"sent before the window", "acc_1", []string{"brb_1"}, now.Add(-window - time.Millisecond)},
		{"another account", "acc_2", nil, now},
		{"a barber it does not read", "acc_1", []string{"brb_1", "brb_2"}, now},
	} {
		running.sent = c.sent
		if f.covers(running, now.Add(-window), c.account, c.barbers) {
			t.Errorf("%s: the read would count on the running round", c.name)
		}
	}
}

// Versions a caller's own query read (Learn) answer the reads of the
// window after it was sent, as a round's would, and no later; a round's
// read after them is not replaced by them.
func TestFenceLearn(t *testing.T) {
	const window = 400 * time.Millisecond
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, acc, f, queries := windowFence(db, window)
		ana := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		bia := db.Barber.Create().SetAccountID(acc.ID).SetName("Bia").SaveX(ctx)
		read := func(barber string) (int64, bool) {
			t.Helper()
			got, err := f.Read(ctx, acc.ID, []string{barber})
			if err != nil {
				t.Fatal(err)
			}
			return got.Bookings(barber)
		}
		if _, ok := read(ana.ID); !ok { // the account's version, and Ana's
			t.Fatal("Ana not read")
		}
		if n := queries.n.Load(); n != 1 {
			t.Fatalf("%d queries", n)
		}
		// Bia's version, as a query of the caller's own read it just now
		// (not the stored one: the fence takes what it is given), and a
		// version for Ana older than the round's, which stays.
		f.Learn([]string{bia.ID}, []int64{41}, time.Now())
		f.Learn([]string{ana.ID}, []int64{99}, time.Now().Add(-window/2))
		if v, ok := read(bia.ID); !ok || v != 41 {
			t.Fatalf("Bia's version %d (found: %v), want the learned 41", v, ok)
		}
		if v, _ := read(ana.ID); v == 99 {
			t.Fatal("an older learned version replaced the round's")
		}
		if n := queries.n.Load(); n != 1 {
			t.Fatalf("%d queries for reads the learned versions answer, want none beyond the first", n)
		}
		// Versions learned a window late are not kept, and a barber
		// learned as not found is not found.
		stale := db.Barber.Create().SetAccountID(acc.ID).SetName("Eva").SaveX(ctx)
		f.Learn([]string{stale.ID}, []int64{7}, time.Now().Add(-window))
		if v, ok := read(stale.ID); !ok || v == 7 {
			t.Fatalf("Eva's version %d (found: %v), want the stored one", v, ok)
		}
		f.Learn([]string{"brb_gone"}, []int64{-1}, time.Now())
		if _, ok := read("brb_gone"); ok {
			t.Fatal("a barber learned as not found was found")
		}
	})
}

// insertReservation writes a reservation as any writer would, through the
// triggers that bump its barber's bookings version.
const insertReservation = "INSERT INTO reservations (id, starts_at, ends_at, account_id, barber_id) VALUES ($1, $2, $3, $4, $5)"

// With a window, every barber a fence has read stays current however it is
// asked for (on PostgreSQL by the feed of changes, store.VersionReader.Feed;
// on SQLite by reading it again): a read never returns a version older than
// one committed a window before it was called, with writers bumping
// several barbers at once, and one of them holding its transaction open
// across several of the fence's rounds, so that changes commit out of the
// order their transactions began in.
func TestFenceFeedSeesEveryCommittedChange(t *testing.T) {
	const window = 20 * time.Millisecond
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, acc, f, queries := windowFence(db, window)
		if f.feed != (db.Dialect == dialect.Postgres) {
			t.Fatalf("feed %v on %s", f.feed, db.Dialect)
		}
		var ids []string
		for i := range 6 {
			ids = append(ids, db.Barber.Create().SetAccountID(acc.ID).SetName(fmt.Sprintf("B%d", i)).SaveX(ctx).ID)
		}
		// committed[i] lists barber i's versions with when their commit
		// had returned.
		type commit struct {
			at time.Time
			v  int64
		}
		var mu sync.Mutex
		committed := make([][]commit, len(ids))
		floor := func(i int, before time.Time) int64 {
			mu.Lock()
			defer mu.Unlock()
			var v int64
			for _, c := range committed[i] {
				if c.at.Before(before) {
					v = max(v, c.v)
				}
			}
			return v
		}
		var slot atomic.Int64 // distinct reservation times, so none overlap
		day := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
		book := func(i int, hold time.Duration) error {
			tx, err := db.SQL.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			n := slot.Add(1)
			at := day.Add(time.Duration(n) * time.Hour)
			if _, err := tx.ExecContext(ctx, insertReservation,
				fmt.Sprintf("rsv_feed_%d", n), at, at.Add(30*time.Minute), acc.ID, ids[i]); err != nil {
				return err
			}
			var v int64
			if err := tx.QueryRowContext(ctx, "SELECT bookings_version FROM barbers WHERE id = $1", ids[i]).Scan(&v); err != nil {
				return err
			}
			time.Sleep(hold)
			if err := tx.Commit(); err != nil {
				return err
			}
			mu.Lock()
			committed[i] = append(committed[i], commit{time.Now(), v})
			mu.Unlock()
			return nil
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		write := func(hold time.Duration, first int) {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				err := book((first+k)%len(ids), hold)
				if err != nil && store.Classify(err) != store.Retry {
					t.Error(err)
					return
				}
			}
		}
		wg.Go(func() { write(0, 0) })
		wg.Go(func() { write(0, 3) })
		wg.Go(func() { write(4*window, 1) }) // its changes commit behind later ones
		var reads atomic.Int64
		var readers sync.WaitGroup
		for r := range 6 {
			readers.Go(func() {
				for k := range 150 {
					// Readers ask for one barber, or for all of them.
					asked := ids
					if k%2 == 0 {
						asked = ids[(r+k)%len(ids) : (r+k)%len(ids)+1]
					}
					began := time.Now()
					got, err := f.Read(ctx, acc.ID, asked)
					if err != nil {
						t.Error(err)
						return
					}
					reads.Add(1)
					for _, id := range asked {
						i := slices.Index(ids, id)
						v, ok := got.Bookings(id)
						if want := floor(i, began.Add(-window)); !ok || v < want {
							t.Errorf("barber %d: version %d (found: %v), but %d was committed a window before the read", i, v, ok, want)
						}
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		readers.Wait()
		close(stop)
		wg.Wait()
		if reads.Load() != 6*150 {
			t.Fatalf("%d reads", reads.Load())
		}
		t.Logf("%s: %d reads, %d queries", db.Dialect, reads.Load(), queries.n.Load())
	})
}

// A round that reads more changed barbers than store.FeedLimit (a write
// transaction held open keeps the xmin back) pauses the feed: the fence
// reads by id for feedPause, and its reads stay right meanwhile. (SQLite
// has no feed: its reads are by id throughout.)
func TestFenceFeedPauses(t *testing.T) {
	const window = 50 * time.Millisecond
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, acc, f, _ := windowFence(db, window)
		ana := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		if _, err := f.Read(ctx, acc.ID, []string{ana.ID}); err != nil { // the feed's first round
			t.Fatal(err)
		}
		readAfterBurst(ctx, t, db, f, acc.ID, ana.ID, window, false)
		f.mu.Lock()
		paused := time.Until(f.feedPaused)
		f.mu.Unlock()
		if f.feed && (paused <= 0 || paused > feedPause) {
			t.Fatalf("feed paused for %v after a round read %d changed barbers", paused, store.FeedLimit+1)
		}
		// Meanwhile rounds read by id, and see a change.
		db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(ana.ID).
			SetStartsAt(time.Now().Add(48 * time.Hour)).SetEndsAt(time.Now().Add(49 * time.Hour)).ExecX(ctx)
		f.mu.Lock()
		f.seen = nil
		f.mu.Unlock()
		got, err := f.Read(ctx, acc.ID, []string{ana.ID})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := got.Bookings(ana.ID); !ok || v != 1 {
			t.Fatalf("Ana's version %d (found: %v) during the pause, want 1", v, ok)
		}
	})
}

// manyChanges makes more barbers than a round may read changed
// (store.FeedLimit, besides one it asks for by id), brb_many_0 on, each
// with a reservation, in one statement.
func manyChanges(ctx context.Context, db *store.DB, account string) {
	barbers := make([]*ent.BarberCreate, store.FeedLimit+1)
	for i := range barbers {
		barbers[i] = db.Barber.Create().SetID(fmt.Sprintf("brb_many_%d", i)).SetAccountID(account).SetName("B")
	}
	db.Barber.CreateBulk(barbers...).ExecX(ctx)
	at := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	reservations := make([]*ent.ReservationCreate, store.FeedLimit+1)
	for i := range reservations {
		reservations[i] = db.Reservation.Create().SetAccountID(account).SetBarberID(fmt.Sprintf("brb_many_%d", i)).
			SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute))
	}
	db.Reservation.CreateBulk(reservations...).ExecX(ctx) // one statement
}

// readAfterBurst makes manyChanges (after a quiet spell of feedGap, if
// quiet: the feed's last round as if that long ago), waits the window out,
// and reads ana and a changed barber, whose version must be 1.
func readAfterBurst(ctx context.Context, t *testing.T, db *store.DB, f *Fence, account, ana string, window time.Duration, quiet bool) {
	t.Helper()
	manyChanges(ctx, db, account)
	f.mu.Lock()
	if quiet {
		f.feedSent = f.feedSent.Add(-feedGap)
	} else {
		// Rounds ran all along: the last just now, however long the
		// burst took on a loaded machine (past feedGap, it would count
		// as quiet). Ana did not change meanwhile.
		f.feedSent = time.Now()
	}
	f.mu.Unlock()
	time.Sleep(window) // past it: the next read asks
	got, err := f.Read(ctx, account, []string{ana, "brb_many_7"})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Bookings("brb_many_7"); !ok || v != 1 {
		t.Fatalf("brb_many_7's version %d (found: %v), want 1", v, ok)
	}
}

// Changes past store.FeedLimit made while the feed went feedGap or more
// without a round (writes after a quiet spell, a batch between a load's
// phases) start the feed again at once rather than pause it: the next
// round reads by id and the feed, and the barbers it reads are fed again.
func TestFenceFeedStartsAgainAfterQuiet(t *testing.T) {
	const window = 50 * time.Millisecond
	db := storetest.Open(t, dialect.Postgres) // SQLite has no feed
	ctx, acc, f, _ := windowFence(db, window)
	ana := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
	if _, err := f.Read(ctx, acc.ID, []string{ana.ID}); err != nil { // the feed's first round
		t.Fatal(err)
	}
	if _, err := f.Read(ctx, acc.ID, []string{ana.ID}); err != nil {
		t.Fatal(err)
	}
	readAfterBurst(ctx, t, db, f, acc.ID, ana.ID, window, true)
	f.mu.Lock()
	paused, since := f.feedPaused, f.feedXmin
	f.mu.Unlock()
	if !paused.IsZero() || since != store.NoChanges {
		t.Fatalf("after a quiet spell: feed paused until %v, its next round reads changes since %d; want it started again", paused, since)
	}
	time.Sleep(window)
	if _, err := f.Read(ctx, acc.ID, []string{ana.ID}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	fed := f.seen[versionID{true, ana.ID}].fed
	f.mu.Unlock()
	if !fed {
		t.Fatal("the round after the start did not feed Ana again")
	}
}

// A change whose transaction began before a round's snapshot and commits
// after later rounds ran is still read: the feed reads from the oldest
// transaction running at the last round's snapshot, not from the newest.
func TestFenceFeedLateCommit(t *testing.T) {
	const window = 30 * time.Millisecond
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, acc, f, _ := windowFence(db, window)
		ana := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		bia := db.Barber.Create().SetAccountID(acc.ID).SetName("Bia").SaveX(ctx)
		read := func() int64 {
			t.Helper()
			time.Sleep(window) // what was read is old: this read has a round
			got, err := f.Read(ctx, acc.ID, []string{ana.ID, bia.ID})
			if err != nil {
				t.Fatal(err)
			}
			v, _ := got.Bookings(ana.ID)
			return v
		}
		at := time.Now().Add(24 * time.Hour).Truncate(time.Hour)
		v0 := read()
		slow, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Rollback()
		if _, err := slow.ExecContext(ctx, insertReservation, "rsv_slow", at, at.Add(30*time.Minute), acc.ID, ana.ID); err != nil {
			t.Fatal(err)
		}
		read() // a round while the slow transaction runs
		// Later transactions commit (on PostgreSQL: SQLite writes one at a
		// time), and rounds run after them.
		for i := range 3 {
			at := at.Add(time.Duration(i+1) * time.Hour)
			if db.Dialect == dialect.Postgres {
				if _, err := db.SQL.ExecContext(ctx, insertReservation, fmt.Sprintf("rsv_fast_%d", i), at, at.Add(30*time.Minute), acc.ID, bia.ID); err != nil {
					t.Fatal(err)
				}
			}
			read()
		}
		if err := slow.Commit(); err != nil {
			t.Fatal(err)
		}
		if v := read(); v != v0+1 {
			t.Fatalf("Ana's version %d a window after the slow transaction committed %d", v, v0+1)
		}
	})
}

// The log of changes keeps a change well past the time after which an idle
// feed starts again, so no feed reads changes the jobs have pruned.
func TestFeedIdleUnderChangesKeep(t *testing.T) {
	if 2*feedIdle > store.ChangesKeep {
		t.Fatalf("feedIdle %v, store.ChangesKeep %v: the log must keep changes twice as long", feedIdle, store.ChangesKeep)
	}
}
