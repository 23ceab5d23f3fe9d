package storetest

import (
	"context"
	"fmt"
	"sync"

	"entgo.io/ent/dialect"

	"barberd/graph/metrics"
	"barberd/graph/store"
)

// StatementLog records the SQL statements (BEGIN, COMMIT and ROLLBACK
// included) a database client sends. Set as a resolver's metrics it also
// records each query of the version fence (package graph/fresh), which
// runs beside the ent client.
type StatementLog struct {
	metrics.None
	mu    sync.Mutex
	lines []string
}

// Counting returns a DB on db's connections whose ent client records every
// statement it sends in the log returned.
func Counting(db *store.DB) (*store.DB, *StatementLog) {
	log := &StatementLog{}
	counted := db.WithDriver(func(d dialect.Driver) dialect.Driver { return dialect.DebugWithContext(d, log.add) })
	return counted, log
}

func (l *StatementLog) add(_ context.Context, v ...any) { l.record(fmt.Sprint(v...)) }

// VersionRead records a query of the version fence.
func (l *StatementLog) VersionRead(int) { l.record("version read (package graph/fresh)") }

func (l *StatementLog) record(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// Take returns the statements since the last Take and forgets them.
func (l *StatementLog) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}
