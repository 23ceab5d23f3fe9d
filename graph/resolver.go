package graph

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"barberd/ent/schema"
	"barberd/graph/store"
)

// Resolver is the root of every domain operation. GraphQL reaches it through
// gqlgen; the REST adapter calls the same methods directly. Each operation
// owns its transaction, so it works the same from either side.
type Resolver struct {
	DB     *store.DB
	Log    *slog.Logger
	Limits Limits
	// Now is the clock; tests may replace it.
	Now func() time.Time
	// Metrics counts domain events (graph/metrics.go); nil counts nothing.
	Metrics Metrics
	// AvailabilityCacheBytes bounds the memory of cached availability
	// answers; 0 means DefaultAvailabilityCacheBytes.
	AvailabilityCacheBytes int
	// FreshnessWindow is how long a read of the database's change versions
	// answers for the caches (graph/fence.go); writes wait it out before
	// they answer (TrackWrites). 0: every cached answer is checked by a
	// read made after its request arrived.
	FreshnessWindow time.Duration

	cachesOnce sync.Once
	cache      *caches // see caches()
}

// Limits bound what a caller may ask for.
type Limits struct {
	HoldTTLDefault, HoldTTLMin, HoldTTLMax time.Duration
	NotificationsDefault, NotificationsMax int
	// ActiveHoldsPerKey caps the holds one API key may have active at
	// once, so no key can hold a barber's whole day; 0: no cap.
	ActiveHoldsPerKey int
}

// DefaultLimits are the limits of rest-v1.md.
var DefaultLimits = Limits{
	HoldTTLDefault:       300 * time.Second,
	HoldTTLMin:           10 * time.Second,
	HoldTTLMax:           1800 * time.Second,
	NotificationsDefault: 50,
	NotificationsMax:     200,
	ActiveHoldsPerKey:    10,
}

// NewResolver returns a resolver over db with the default limits.
func NewResolver(db *store.DB, log *slog.Logger) *Resolver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Resolver{DB: db, Log: log, Limits: DefaultLimits, Now: schema.Now, FreshnessWindow: DefaultFreshnessWindow}
}

// DefaultFreshnessWindow is Resolver.FreshnessWindow unless set otherwise.
const DefaultFreshnessWindow = 5 * time.Millisecond

// TrackWrites returns a context in which the transactions a request
// commits are recorded, and settle, which waits until the freshness window
// has passed since the last of them (not at all when none committed),
// before the request answers: once a client is told a write is done, every
// cached answer in every process reflects it. Every write that changes a
// version commits in inTx, which records it (CreateAPIKey, one statement,
// records its own). The adapters track the requests that may write (REST
// methods other than GET and HEAD, GraphQL mutations) and settle before
// they answer. The request's end cuts the wait short.
func (r *Resolver) TrackWrites(ctx context.Context) (_ context.Context, settle func()) {
	w := new(writes)
	ctx = context.WithValue(ctx, writesKey{}, w)
	return ctx, func() {
		last := w.last.Load()
		if last == 0 {
			return
		}
		wait := r.FreshnessWindow - time.Since(time.Unix(0, last))
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

type writesKey struct{}

// writes records when a request's last transaction committed (Unix
// nanoseconds; 0: none did).
type writes struct{ last atomic.Int64 }

// committed records a commit in ctx's request, if it is tracked.
func committed(ctx context.Context) {
	if w, ok := ctx.Value(writesKey{}).(*writes); ok {
		w.last.Store(time.Now().UnixNano())
	}
}

func (r *Resolver) now() time.Time { return r.Now().UTC().Truncate(time.Microsecond) }
