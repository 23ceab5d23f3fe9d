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
// must know the database's state as of some moment after they asked: each
// read is answered by a query that started after the caller arrived, so a
// cache entry tagged with the versions it answers is exactly as fresh as a
// read of the data itself would be, in this process or any other one on the
// same database. Concurrent callers share queries: while maxRounds of them
// run, the next callers gather, and one query answers them all when one of
// those returns. Under load the database sees a few small queries per round
// trip instead of the work of every request.
type fence struct {
	db      *store.DB
	metrics Metrics

	prepare sync.Once
	stmt    *sql.Stmt // fenceQuery, when it could be prepared

	mu       sync.Mutex
	next     *fenceRound // gathering callers; nil when nobody waits
	inFlight int         // rounds whose query runs
}

// maxRounds bounds the fence's queries in flight at once: more answer
// sooner, fewer share more. Measured with barberbench on 2 cores, one in
// flight served as many requests as two, with fewer queries.
const maxRounds = 1

// versions are change versions read by one query.
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

// read returns the versions of an account and some of its barbers, from a
// query that started after read was called.
func (f *fence) read(ctx context.Context, account string, barbers []string) (versions, error) {
	f.mu.Lock()
	round := f.next
	if round == nil {
		round = &fenceRound{accounts: map[string]struct{}{}, barbers: map[string]struct{}{}, done: make(chan struct{})}
		f.next = round
	}
	round.callers++
	round.accounts[account] = struct{}{}
	for _, b := range barbers {
		round.barbers[b] = struct{}{}
	}
	if f.inFlight < maxRounds {
		f.inFlight++
		f.next = nil
		go f.run(round)
	}
	f.mu.Unlock()
	select {
	case <-round.done:
		return round.got, round.err
	case <-ctx.Done():
		return versions{}, ctx.Err()
	}
}

// run answers rounds one after another until nobody waits.
func (f *fence) run(round *fenceRound) {
	for round != nil {
		ctx, cancel := context.WithTimeout(context.Background(), fenceTimeout)
		round.got, round.err = f.query(ctx, round)
		cancel()
		f.metrics.VersionRead(round.callers)
		close(round.done)
		f.mu.Lock()
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
