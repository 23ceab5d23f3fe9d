package graph

import (
	"log/slog"
	"sync"
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
	// AvailabilityCacheBytes bounds the memory of cached availability days
	// (and the REST adapter's of their encoded answers); 0 means
	// DefaultAvailabilityCacheBytes.
	AvailabilityCacheBytes int
	// FreshnessWindow is the freshness window of the caches and of writes
	// (package fresh).
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

func (r *Resolver) now() time.Time { return r.Now().UTC().Truncate(time.Microsecond) }
