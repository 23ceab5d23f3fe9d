package graph

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/graph/store"
)

// A fence reads change versions (graph/store/versions.go) for callers that
// must know the database's state as of some moment: each read is answered
// by a query sent no earlier than window before the caller arrived (with a
// window of 0, after it arrived). So a cache entry tagged with the versions
// it answers reflects every change committed before that moment, in this
// process or any other one on the same database; and since every write made
// through barberd waits out the window before it answers (TrackWrites), a
// caller never gets an answer older than a write some client has been told
// is done.
//
// Concurrent callers share queries: while maxRounds of them run, the next
// callers gather, and one query answers them all when one of those
// returns. With a window, the versions a query read answer, without a
// query of their own, the callers that arrive within the window after it
// was sent; once a quarter of the window has passed, the next such caller
// also starts a new query, without waiting for it, so under steady load
// callers hardly ever wait and the database sees about one query per
// quarter window.
type fence struct {
	db      *store.DB
	metrics Metrics
	window  time.Duration

	prepare sync.Once
	stmt    *sql.Stmt // fenceQuery, when it could be prepared

	mu       sync.Mutex
	next     *fenceRound // gathering callers; nil when nobody waits
	inFlight int         // rounds whose query runs
	// With a window: the latest version read of each id, and when its
	// query was sent. Ids not read for a window are swept out once the map
	// reaches sweepAt entries.
	seen    map[fenceID]seenVersion
	sweepAt int
}

// maxRounds bounds the fence's queries in flight at once: more answer
// sooner, fewer share more. Measured with barberbench on 2 cores, one in
// flight served as many requests as two, with fewer queries.
const maxRounds = 1

// minSweep is the size of the seen map below which it is never swept.
const minSweep = 4096

// fenceID names an account's config version or a barber's bookings version.
type fenceID struct {
	barber bool
	id     string
}

type seenVersion struct {
	v     int64
	found bool      // false: the query found no such row
	sent  time.Time // when the query that read it was sent
}

// versions are change versions read by one query, or recently enough.
type versions struct {
	accounts map[string]int64 // config_version by account id
	barbers  map[string]int64 // bookings_version by barber id
}

// account reports whether the account's config version was read as want.
func (v versions) account(id string, want int64) bool {
	got, ok := v.accounts[id]
	return ok && got == want
}

// barber reports whether the barber's bookings version was read as want.
func (v versions) barber(id string, want int64) bool {
	got, ok := v.barbers[id]
	return ok && got == want
}

// covers reports whether the versions include the account and barbers.
func (v versions) covers(account string, barbers []string) bool {
	if _, ok := v.accounts[account]; !ok {
		return false
	}
	for _, b := range barbers {
		if _, ok := v.barbers[b]; !ok {
			return false
		}
	}
	return true
}

type fenceRound struct {
	accounts, barbers map[string]struct{}
	callers           int
	done              chan struct{}
	got               versions
	err               error
}

// fenceTimeout bounds one round's query; the callers' own contexts bound
// their wait.
const fenceTimeout = 5 * time.Second

// read returns the versions of an account and some of its barbers, read
// by a query sent no earlier than the fence's window before read was
// called.
func (f *fence) read(ctx context.Context, account string, barbers []string) (versions, error) {
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
	round := f.gather(account, barbers, 1)
	f.mu.Unlock()
	select {
	case <-round.done:
		return round.got, round.err
	case <-ctx.Done():
		return versions{}, ctx.Err()
	}
}

// recent answers from versions read within the window before now, if every
// one asked for was. When the oldest of them is a quarter of a window old,
// it also has them read again, for the callers to come. f.mu is held.
func (f *fence) recent(now time.Time, account string, barbers []string) (versions, bool) {
	oldest := now
	look := func(barber bool, id string) (seenVersion, bool) {
		s, ok := f.seen[fenceID{barber, id}]
		if !ok || now.Sub(s.sent) >= f.window {
			return s, false
		}
		if s.sent.Before(oldest) {
			oldest = s.sent
		}
		return s, true
	}
	a, ok := look(false, account)
	if !ok {
		return versions{}, false
	}
	got := versions{accounts: make(map[string]int64, 1), barbers: make(map[string]int64, len(barbers))}
	if a.found {
		got.accounts[account] = a.v
	}
	for _, id := range barbers {
		b, ok := look(true, id)
		if !ok {
			return versions{}, false
		}
		if b.found {
			got.barbers[id] = b.v
		}
	}
	if now.Sub(oldest) >= f.window/4 {
		f.gather(account, barbers, 0)
	}
	return got, true
}

// gather adds the ids, and callers who will wait for them, to the round
// that gathers callers, and starts it when fewer than maxRounds run. f.mu is
// held.
func (f *fence) gather(account string, barbers []string, callers int) *fenceRound {
	round := f.next
	if round == nil {
		round = &fenceRound{accounts: map[string]struct{}{}, barbers: map[string]struct{}{}, done: make(chan struct{})}
		f.next = round
	}
	round.callers += callers
	round.accounts[account] = struct{}{}
	for _, b := range barbers {
		round.barbers[b] = struct{}{}
	}
	if f.inFlight < maxRounds {
		f.inFlight++
		f.next = nil
		go f.run(round)
	}
	return round
}

// run answers rounds one after another until nobody waits.
func (f *fence) run(round *fenceRound) {
	for round != nil {
		ctx, cancel := context.WithTimeout(context.Background(), fenceTimeout)
		sent := time.Now()
		round.got, round.err = f.query(ctx, round)
		cancel()
		f.metrics.VersionRead(round.callers)
		f.mu.Lock()
		if round.err == nil && f.window > 0 {
			f.remember(round, sent) // before its callers go on to ask again
		}
		close(round.done)
		failed := round.err
		round, f.next = f.next, nil
		if failed != nil && round != nil {
			// The database failed after these callers came: an error
			// is never stale, and asking again would make them wait
			// twice for a database that is not answering.
			round.err = failed
			close(round.done)
			round = nil
		}
		if round == nil {
			f.inFlight--
		}
		f.mu.Unlock()
	}
}

// remember keeps what a round read, as of when its query was sent. f.mu is
// held.
func (f *fence) remember(round *fenceRound, sent time.Time) {
	if f.seen == nil {
		f.seen, f.sweepAt = map[fenceID]seenVersion{}, minSweep
	}
	keep := func(id fenceID, got map[string]int64) {
		if old, ok := f.seen[id]; ok && old.sent.After(sent) {
			return // a later query's, when rounds overlap
		}
		v, ok := got[id.id]
		f.seen[id] = seenVersion{v: v, found: ok, sent: sent}
	}
	for id := range round.accounts {
		keep(fenceID{false, id}, round.got.accounts)
	}
	for id := range round.barbers {
		keep(fenceID{true, id}, round.got.barbers)
	}
	if len(f.seen) >= f.sweepAt {
		for id, s := range f.seen {
			if sent.Sub(s.sent) >= f.window {
				delete(f.seen, id)
			}
		}
		f.sweepAt = max(minSweep, 2*len(f.seen))
	}
}

// fenceQuery reads the versions of the accounts and barbers listed in its
// two parameters (JSON arrays of ids on SQLite, text arrays on PostgreSQL).
// Its text never changes, so it is prepared once per connection.
var fenceQuery = map[string]string{
	dialect.Postgres: `SELECT 0, id, config_version FROM accounts WHERE id = ANY($1::text[])
		UNION ALL SELECT 1, id, bookings_version FROM barbers WHERE id = ANY($2::text[])`,
	dialect.SQLite: `SELECT 0, id, config_version FROM accounts WHERE id IN (SELECT value FROM json_each(?))
		UNION ALL SELECT 1, id, bookings_version FROM barbers WHERE id IN (SELECT value FROM json_each(?))`,
}

func (f *fence) query(ctx context.Context, round *fenceRound) (versions, error) {
	got := versions{accounts: make(map[string]int64, len(round.accounts)), barbers: make(map[string]int64, len(round.barbers))}
	f.prepare.Do(func() {
		// Without a prepared statement each round is parsed again; slower,
		// still correct.
		f.stmt, _ = f.db.SQL.PrepareContext(ctx, fenceQuery[f.db.Dialect])
	})
	accounts, barbers := idList(f.db.Dialect, round.accounts), idList(f.db.Dialect, round.barbers)
	var rows *sql.Rows
	var err error
	if f.stmt != nil {
		rows, err = f.stmt.QueryContext(ctx, accounts, barbers)
	} else {
		rows, err = f.db.SQL.QueryContext(ctx, fenceQuery[f.db.Dialect], accounts, barbers)
	}
	if err != nil {
		return got, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var id string
		var v int64
		if err := rows.Scan(&kind, &id, &v); err != nil {
			return got, err
		}
		if kind == 0 {
			got.accounts[id] = v
		} else {
			got.barbers[id] = v
		}
	}
	return got, rows.Err()
}

// idList is a set of ids as fenceQuery takes them.
func idList(dia string, ids map[string]struct{}) any {
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	if dia == dialect.Postgres {
		return pq.StringArray(list)
	}
	b, _ := json.Marshal(list) // strings always marshal
	return string(b)
}
