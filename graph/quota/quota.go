// Package quota is the slot budget of one availability request: every
// answer that lists slots (a day, a range, the next free times) and every
// adapter (REST, GraphQL, MCP) is bounded by it, so a request that would
// list or compute more slots than its budget is refused before any day is
// computed, naming what to narrow. A slot computed costs about 2-5 µs of
// CPU and an answer about 100-150 bytes per slot listed, so
// DefaultMaxSlots keeps one request near a second of CPU and a few tens of
// MB.
//
// The budget is the server's limit (--max-slots), lowered for a surface
// whose answers must be smaller (WithSlots, as MCP's), and shared by the
// answers of one request that holds several (WithPool, as a GraphQL
// operation's root fields, which may run at once).
//
// Days missing from the cache are computed behind an admission gate
// (package admit) weighted by the slots they can hold, whose capacity
// leaves one core to everything else (NewGate): a heavy request waits for
// its turn rather than slowing every other account's.
package quota

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"barberd/graph/admit"
)

// DefaultMaxSlots is the default of the slot limit (flag --max-slots):
// a whole day of the largest unit the caps allow (200 barbers open 24 h at
// 5-minute steps, 57,600 slots) fits; a week of it does not.
const DefaultMaxSlots = 100_000

type slotsKey struct{}

// WithSlots lowers the slot budget of requests made with ctx to n slots
// (never above the server's limit).
func WithSlots(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, slotsKey{}, n)
}

type poolKey struct{}

// pool is a budget of slots shared by the answers of one request.
type pool struct{ left atomic.Int64 }

// WithPool makes every availability answer made with ctx draw on one
// budget of n slots.
func WithPool(ctx context.Context, n int) context.Context {
	p := &pool{}
	p.left.Store(int64(n))
	return context.WithValue(ctx, poolKey{}, p)
}

// Of is the most slots a request made with ctx may list or compute, under
// the server's limit.
func Of(ctx context.Context, limit int) int {
	n := limit
	if b, ok := ctx.Value(slotsKey{}).(int); ok && b < n {
		n = max(b, 1)
	}
	if p, ok := ctx.Value(poolKey{}).(*pool); ok {
		n = min(n, max(int(p.left.Load()), 0))
	}
	return n
}

// Reserve takes n slots from ctx's pool, if it has one; false when fewer
// are left.
func Reserve(ctx context.Context, n int) bool {
	p, ok := ctx.Value(poolKey{}).(*pool)
	if !ok {
		return true
	}
	for {
		left := p.left.Load()
		if left < int64(n) {
			return false
		}
		if p.left.CompareAndSwap(left, left-int64(n)) {
			return true
		}
	}
}

// A request keeps its admission until its answer starts to be written, so
// encoding counts too.
const (
	// slotsPerCore is the weight admitted at once per core: about 10-20 ms
	// of computing and encoding slots.
	slotsPerCore = 4096
	// maxAdmissionWait is the longest a request waits to be admitted.
	maxAdmissionWait = 10 * time.Second
)

// NewGate is the admission gate of a process with GOMAXPROCS cores,
// weighted by slots.
func NewGate(m admit.Metrics) *admit.Gate {
	return admit.New(max(runtime.GOMAXPROCS(0)-1, 1)*slotsPerCore, maxAdmissionWait, m)
}
