package fresh

import (
	"context"
	"sync"
	"time"

	"barberd/graph/store"
)

// A Fence reads change versions for caches (see the package doc).
type Fence struct {
	versions *store.VersionReader
	metrics  Metrics
	window   time.Duration

	mu   sync.Mutex
	next *readRound // gathering callers; nil when nobody waits
	// running is the round whose query runs; nil when none does. One
	// query is in flight at a time: more would answer sooner, one shares
	// more (measured with barberbench on 2 cores, one in flight served as
	// many requests as two, with fewer queries), and the feed needs one at
	// a time, each round reading the changes since the snapshot of the
	// round before it.
	running *readRound
	took    time.Duration // how long rounds take: a moving average
	// With a window: the latest version read of each id, and when its
	// query was sent. Ids not read for a window are swept out once the map
	// reaches sweepAt entries.
	seen    map[versionID]seenVersion
	sweepAt int

	// The feed (PostgreSQL, with a window): each round also reads the
	// barbers changed since the last round's snapshot, so a barber's
	// version, once read, stays current as of the last round whatever
	// was asked (store.VersionReader.Feed). Rounds then read only the
	// accounts and the barbers not yet held.
	feed       bool
	feedXmin   int64     // the since of the next round; store.NoChanges before the first
	feedSent   time.Time // when the last round that read the feed was sent
	feedPaused time.Time // rounds read by id until then
}

// NewFence returns a fence over db with the given freshness window (0:
// every read is answered by a query sent after it was called). A nil
// metrics counts nothing.
func NewFence(db *store.DB, window time.Duration, metrics Metrics) *Fence {
	if metrics == nil {
		metrics = noMetrics{}
	}
	f := &Fence{versions: store.NewVersionReader(db), window: window, metrics: metrics, feedXmin: store.NoChanges}
	f.feed = window > 0 && f.versions.CanFeed()
	return f
}

// Metrics receives the fence's events (graph.Metrics implements it).
type Metrics interface {
	// CacheLookup: a read was answered by versions read recently enough
	// (cache "versions"), or not.
	CacheLookup(cache string, hit bool)
	// VersionRead: one query answered callers reads.
	VersionRead(callers int)
}

type noMetrics struct{}

func (noMetrics) CacheLookup(string, bool) {}
func (noMetrics) VersionRead(int)          {}

// minSweep is the size of the seen map below which it is never swept.
const minSweep = 4096

// maxSeen bounds the seen map: the feed keeps the versions it holds current
// however long ago they were asked for, so past this many it forgets them
// all and reads them again as they are asked for.
const maxSeen = 1 << 18

// feedIdle is how long the feed may go without a round before it starts
// again: the first round after a pause would read every change made during
// it, and the log keeps a change only store.ChangesKeep, well past this.
const feedIdle = 30 * time.Second

// feedPause is how long the feed pauses when a round reads as many changes
// as it may (store.FeedLimit): a write transaction held open keeps the
// snapshots' xmin back, and each round reads again every change made since
// it began.
const feedPause = 10 * time.Second

// feedGap is how long the feed must have gone without a round for a round
// that reads as many changes as it may to start it again rather than pause
// it: they were made while nobody read (a burst of writes after a quiet
// spell), not because the xmin is held back. If it is, a round soon after
// the start reads as many again, and pauses the feed.
const feedGap = time.Second

// versionID names an account's config version or a barber's bookings
// version.
type versionID struct {
	barber bool
	id     string
}

type seenVersion struct {
	v     int64
	found bool      // false: the query found no such row
	sent  time.Time // when the query that read it was sent
	fed   bool      // a barber the feed keeps current: v is as of feedSent
}

// current is when the query that v is as of was sent.
func (f *Fence) current(s seenVersion) time.Time {
	if s.fed && f.feedSent.After(s.sent) {
		return f.feedSent
	}
	return s.sent
}

// Versions are the change versions of an account and some of its barbers,
// as Read found them: the maps of the query that read them (shared by its
// callers, never written), or, when versions read recently answered, the
// one account and the barbers asked for.
type Versions struct {
	accounts map[string]int64 // config_version by account id
	barbers  map[string]int64 // bookings_version by barber id

	account      string
	config       int64
	accountFound bool
	recent       []barberVersion // the barbers asked for that were found
}

type barberVersion struct {
	id string
	v  int64
}

// Config returns the account's config version; false when the account was
// not read or not found.
func (v Versions) Config(account string) (int64, bool) {
	if v.accounts != nil {
		c, ok := v.accounts[account]
		return c, ok
	}
	return v.config, v.accountFound && account == v.account
}

// Bookings returns the barber's bookings version; false when the barber was
// not read or not found.
func (v Versions) Bookings(barber string) (int64, bool) {
	if v.barbers != nil {
		b, ok := v.barbers[barber]
		return b, ok
	}
	for _, b := range v.recent {
		if b.id == barber {
			return b.v, true
		}
	}
	return 0, false
}

// Same reports whether the versions read are the account's config version
// and the barbers' bookings versions (bookings[i] is barbers[i]'s) that a
// cache entry was computed under: whether the entry is still current.
func (v Versions) Same(account string, config int64, barbers []string, bookings []int64) bool {
	if c, ok := v.Config(account); !ok || c != config {
		return false
	}
	for i, id := range barbers {
		if b, ok := v.Bookings(id); !ok || b != bookings[i] {
			return false
		}
	}
	return true
}

// readRound is one query and the callers it answers.
type readRound struct {
	accounts, barbers map[string]struct{}
	callers           int
	done              chan struct{}
	sent              time.Time // when it started, just before its query was sent
	got               Versions
	err               error
	feed              bool  // it reads the feed
	since             int64 // with the feed: the changes it reads
	xmin              int64 // with the feed: its snapshot's xmin
	truncated         bool  // with the feed: it read store.FeedLimit changes
}

// readTimeout bounds one round's query; the callers' own contexts bound
// their wait.
const readTimeout = 5 * time.Second

// Read returns the versions of an account and some of its barbers, read by
// a query sent no earlier than the fence's window before Read was called.
// An error is the database's, or ctx's.
func (f *Fence) Read(ctx context.Context, account string, barbers []string) (Versions, error) {
	now := time.Now()
	f.mu.Lock()
	if f.window > 0 {
		if got, ok := f.recent(now, account, barbers); ok {
			f.mu.Unlock()
			f.metrics.CacheLookup("versions", true)
			return got, nil
		}
		f.metrics.CacheLookup("versions", false)
	}
	var round *readRound
	if f.window > 0 && f.covers(f.running, now.Add(-f.window), account, barbers) {
		// A refresh that runs late: it was sent recently enough.
		round = f.running
		round.callers++
	} else {
		round = f.gather(account, barbers, 1)
	}
	f.mu.Unlock()
	select {
	case <-round.done:
	case <-ctx.Done():
		return Versions{}, ctx.Err()
	}
	if round.err != nil || !round.feed {
		return round.got, round.err
	}
	// The round read only the barbers the feed did not hold: the others
	// are current as of it in the seen map.
	f.mu.Lock()
	got, _, ok := f.lookup(now, account, barbers)
	f.mu.Unlock()
	if !ok {
		// Forgotten since (maxSeen, feedIdle): the round's own versions,
		// where a barber it did not read counts as changed.
		got = round.got
	}
	return got, nil
}

// recent answers from versions read within the window before now, if every
// one asked for was. When the oldest of them is refreshAfter old, it also
// has them read again, for the callers to come. f.mu is held.
func (f *Fence) recent(now time.Time, account string, barbers []string) (Versions, bool) {
	got, oldest, ok := f.lookup(now, account, barbers)
	if ok && now.Sub(oldest) >= f.refreshAfter() && !f.covers(f.running, oldest, account, barbers) {
		f.gather(account, barbers, 0)
	}
	return got, ok
}

// covers reports whether round, when it runs, reads afresh every version
// asked for whose oldest was read at oldest: it started after that, and
// reads the account and each barber, by id or through the feed. The callers
// that come while a refresh runs need no round of their own after it. f.mu
// is held.
func (f *Fence) covers(round *readRound, oldest time.Time, account string, barbers []string) bool {
	if round == nil || !round.sent.After(oldest) {
		return false
	}
	if _, ok := round.accounts[account]; !ok {
		return false
	}
	for _, b := range barbers {
		if _, ok := round.barbers[b]; !ok && !(round.feed && f.seen[versionID{true, b}].fed) {
			return false
		}
	}
	return true
}

// refreshLead is how many times as long as rounds take a refresh starts
// before the versions it replaces run out.
const refreshLead = 3

// refreshAfter is how old versions are when a caller answered by them has
// them read again: refreshLead times as long as rounds take before they run
// out, so callers hardly ever wait, and the database sees one small query
// per window less that lead. It is at least a quarter of the window (rounds
// slow: at most four queries a window) and at most three quarters. A
// refresh still running when the versions run out makes the callers that
// come meanwhile wait for what is left of it, not for a round of their own
// (Read). f.mu is held.
func (f *Fence) refreshAfter() time.Duration {
	return min(max(f.window-refreshLead*f.took, f.window/4), f.window*3/4)
}

// timed notes how long a round took, in a moving average where each round
// weighs an eighth. f.mu is held.
func (f *Fence) timed(d time.Duration) {
	f.took += (d - f.took) / 8
}

// lookup returns the versions asked for from the seen map, and when the
// oldest of them was read, if every one was read within the window before
// now. f.mu is held.
func (f *Fence) lookup(now time.Time, account string, barbers []string) (Versions, time.Time, bool) {
	oldest := now
	look := func(barber bool, id string) (seenVersion, bool) {
		s, ok := f.seen[versionID{barber, id}]
		if !ok {
			return s, false
		}
		sent := f.current(s)
		if now.Sub(sent) >= f.window {
			return s, false
		}
		if sent.Before(oldest) {
			oldest = sent
		}
		return s, true
	}
	a, ok := look(false, account)
	if !ok {
		return Versions{}, oldest, false
	}
	got := Versions{account: account, config: a.v, accountFound: a.found}
	if len(barbers) > 0 {
		got.recent = make([]barberVersion, 0, len(barbers))
	}
	for _, id := range barbers {
		b, ok := look(true, id)
		if !ok {
			return Versions{}, oldest, false
		}
		if b.found {
			got.recent = append(got.recent, barberVersion{id, b.v})
		}
	}
	return got, oldest, true
}

// gather adds the ids, and callers who will wait for them, to the round
// that gathers callers, and starts it when no round runs. f.mu is held.
func (f *Fence) gather(account string, barbers []string, callers int) *readRound {
	if f.feed && !f.feedSent.IsZero() && time.Since(f.feedSent) >= feedIdle {
		f.forget()
	}
	round := f.next
	if round == nil {
		round = &readRound{accounts: map[string]struct{}{}, barbers: map[string]struct{}{}, done: make(chan struct{})}
		f.next = round
	}
	round.callers += callers
	round.accounts[account] = struct{}{}
	for _, b := range barbers {
		if f.feed && f.seen[versionID{true, b}].fed {
			continue // the feed reads it if it changed
		}
		round.barbers[b] = struct{}{}
	}
	if f.running == nil {
		f.next = nil
		f.start(round)
		go f.run(round)
	}
	return round
}

// start makes round the one running, and sets when it started and what it
// reads of the feed. f.mu is held.
func (f *Fence) start(round *readRound) {
	f.running, round.sent = round, time.Now()
	round.feed = f.feed && !round.sent.Before(f.feedPaused)
	round.since = f.feedXmin
}

// forget drops every version held and starts the feed again. f.mu is held.
func (f *Fence) forget() {
	f.seen, f.sweepAt = nil, minSweep
	f.feedXmin, f.feedSent = store.NoChanges, time.Time{}
}

// run answers rounds one after another until nobody waits.
func (f *Fence) run(round *readRound) {
	for round != nil {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		sent := round.sent
		round.got, round.err = f.query(ctx, round)
		cancel()
		took := time.Since(sent)
		f.mu.Lock()
		f.metrics.VersionRead(round.callers) // callers can join a running round
		f.timed(took)
		if round.err == nil && f.window > 0 {
			f.remember(round, sent) // before its callers go on to ask again
		}
		close(round.done)
		failed := round.err
		round, f.next = f.next, nil
		if round != nil {
			f.start(round)
		}
		if failed != nil && round != nil {
			// The database failed after these callers came: an error
			// is never stale, and asking again would make them wait
			// twice for a database that is not answering.
			round.err = failed
			close(round.done)
			round = nil
		}
		if round == nil {
			f.running = nil
		}
		f.mu.Unlock()
	}
}

// Learn keeps bookings versions read by a query of the caller's own that
// was sent at sent (bookings[i] is barbers[i]'s; negative: not found), as a
// round's: reads of the window after sent take them without a query. The
// query must read the versions in one snapshot taken after sent, as a
// round's does (store.VersionedScheduleRows).
func (f *Fence) Learn(barbers []string, bookings []int64, sent time.Time) {
	if f.window <= 0 || time.Since(sent) >= f.window {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	for i, id := range barbers {
		f.keep(versionID{true, id}, bookings[i], bookings[i] >= 0, sent)
	}
	f.sweep(sent)
}

// init makes the seen map. f.mu is held.
func (f *Fence) init() {
	if f.seen == nil {
		f.seen, f.sweepAt = map[versionID]seenVersion{}, minSweep
	}
}

// keep records a version read by a query sent at sent, unless a later
// query's is kept. f.mu is held.
func (f *Fence) keep(id versionID, v int64, found bool, sent time.Time) {
	old, ok := f.seen[id]
	if ok && old.fed {
		// The feed keeps it current; a version read in a snapshot taken
		// since the feed's last is as new or newer (versions only grow).
		if found && sent.After(f.current(old)) && v > old.v {
			old.v = v
			f.seen[id] = old
		}
		return
	}
	if ok && old.sent.After(sent) {
		return // a later query's, when queries overlap
	}
	f.seen[id] = seenVersion{v: v, found: found, sent: sent}
}

// remember keeps what a round read, as of when its query was sent. f.mu is
// held.
func (f *Fence) remember(round *readRound, sent time.Time) {
	if round.feed && round.truncated {
		// After a quiet spell of feedGap or more, many changes were
		// made meanwhile: the feed starts again with the next round.
		// Otherwise the xmin is held back: read by id for a while.
		// This round's barbers count as read by id either way.
		quiet := sent.Sub(f.feedSent) >= feedGap
		f.forget()
		if !quiet {
			f.feedPaused = sent.Add(feedPause)
		}
		round.feed = false
	}
	f.init()
	for id := range round.accounts {
		v, ok := round.got.accounts[id]
		f.keep(versionID{false, id}, v, ok, sent)
	}
	for id := range round.barbers {
		v, ok := round.got.barbers[id]
		f.keep(versionID{true, id}, v, ok, sent)
	}
	if round.feed {
		// The barbers read by id are fed from now on, and the others the
		// feed read changed are as the round read them.
		for id, v := range round.got.barbers {
			key := versionID{true, id}
			if s, ok := f.seen[key]; ok && (s.fed || s.sent.Equal(sent)) {
				f.seen[key] = seenVersion{v: max(v, s.v), found: true, sent: sent, fed: true}
			}
		}
		f.feedXmin, f.feedSent = round.xmin, sent
	}
	f.sweep(sent)
}

// sweep drops the versions read a window or more before now once the map
// has grown to sweepAt. f.mu is held.
func (f *Fence) sweep(now time.Time) {
	if len(f.seen) < f.sweepAt {
		return
	}
	for id, s := range f.seen {
		if now.Sub(f.current(s)) >= f.window {
			delete(f.seen, id)
		}
	}
	if len(f.seen) >= maxSeen {
		f.forget()
		return
	}
	f.sweepAt = max(minSweep, 2*len(f.seen))
}

func (f *Fence) query(ctx context.Context, round *readRound) (Versions, error) {
	if round.feed {
		accounts, barbers, xmin, truncated, err := f.versions.Feed(ctx, keys(round.accounts), keys(round.barbers), round.since)
		round.xmin, round.truncated = xmin, truncated
		return Versions{accounts: accounts, barbers: barbers}, err
	}
	accounts, barbers, err := f.versions.Read(ctx, keys(round.accounts), keys(round.barbers))
	return Versions{accounts: accounts, barbers: barbers}, err
}

func keys(set map[string]struct{}) []string {
	list := make([]string, 0, len(set))
	for id := range set {
		list = append(list, id)
	}
	return list
}
