package graph

import (
	"slices"
	"sync/atomic"
	"time"

	"barberd/graph/admit"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/graph/quota"
	"barberd/graph/store"
)

// Caches of what every booking request reads and hardly ever changes: the
// API key behind a secret, the catalog a request names, and a day's
// availability. Each entry is tagged with the change versions it was
// computed under and used only while they are current (package fresh).

// Bounds on what is kept, for memory: entries for keys and catalogs, bytes
// for availability (Config.AvailabilityCacheBytes), where a unit's open
// day with a dozen barbers takes about 2.5-5 kB (8 bytes a free slot).
const (
	maxCachedKeys                 = 10_000
	maxCachedCatalogs             = 10_000
	DefaultAvailabilityCacheBytes = 24 << 20
)

type caches struct {
	metrics      Metrics
	fence        *fresh.Fence
	gate         *admit.Gate // of computing days (availability.go)
	keys         *fresh.Memo[string, *keyEntry]
	unknownKeys  *fresh.Memo[string, time.Time] // hash → when the database did not know it
	catalogs     *fresh.Memo[catalog.Key, *catalog.Entry]
	lists        *fresh.Memo[listKey, *listEntry] // catalog.go
	availability *fresh.Memo[availabilityKey, *availabilityEntry]
	// rooms are the deliveries an account's last notification was owed
	// (graph.notify): its next one makes ids for as many.
	rooms *fresh.Memo[string, store.Room]
}

func newCaches(r *Resolver) *caches {
	return &caches{
		metrics:     r.metrics(),
		fence:       fresh.NewFence(r.cfg.DB, r.cfg.FreshnessWindow, r.metrics()),
		gate:        quota.NewGate(r.metrics()),
		keys:        fresh.NewMemo[string, *keyEntry](maxCachedKeys, nil),
		unknownKeys: fresh.NewMemo[string, time.Time](maxCachedKeys, nil),
		catalogs:    fresh.NewMemo[catalog.Key, *catalog.Entry](maxCachedCatalogs, nil),
		lists:       fresh.NewMemo[listKey](maxCachedListItems, func(e *listEntry) int { return 1 + e.size }),
		availability: fresh.NewMemo[availabilityKey](r.cfg.AvailabilityCacheBytes, func(e *availabilityEntry) int {
			return 256 + 24*len(e.barbers) + e.day.Size()
		}),
		rooms: fresh.NewMemo[string, store.Room](maxCachedCatalogs, nil),
	}
}

// keyEntry is an API key as read with its account's config version.
type keyEntry struct {
	viewer domain.Viewer
	// lastUsed is when this process last recorded the key's use (Unix
	// nanoseconds), so busy keys are written at most once per touchEvery.
	lastUsed atomic.Int64
}

// availabilityKey names one day of a unit and service: its availability
// for every eligible barber, from which one barber's is taken too.
type availabilityKey struct {
	catalog.Key
	date string
}

func newAvailabilityKey(account, unitID, serviceID, date string) availabilityKey {
	return availabilityKey{catalog.NewKey(account, unitID, serviceID, nil), date}
}

type availabilityEntry struct {
	config   int64
	barbers  []string  // the eligible barbers it covers, with
	bookings []int64   // their bookings_version
	from     time.Time // the day holds from the moment it was computed
	until    time.Time // until then
	day      *Day
}

// cachedDays returns the cached entry of each key (nil where there is
// none) that was computed under the viewer's config version, covers
// barberID (nil: any) and is not yet changed by the passing of time, and
// the barbers those entries cover: whether their bookings are unchanged is
// for dropChanged to say.
func (c *caches) cachedDays(v *domain.Viewer, keys []availabilityKey, barberID *string, now time.Time) (_ []*availabilityEntry, covered []string) {
	out := make([]*availabilityEntry, len(keys))
	if !v.Versioned {
		return out, nil
	}
	for i, k := range keys {
		e, _ := c.availability.Get(k)
		if e == nil || e.config != v.ConfigVersion || now.Before(e.from) || !now.Before(e.until) ||
			barberID != nil && !slices.Contains(e.barbers, *barberID) {
			continue
		}
		out[i] = e
		switch {
		case covered == nil:
			covered = e.barbers // the days of a unit and service mostly share them
		case !slices.Equal(covered, e.barbers):
			union := slices.Clone(covered) // never append to an entry's
			for _, b := range e.barbers {
				if !slices.Contains(union, b) {
					union = append(union, b)
				}
			}
			covered = union
		}
	}
	return out, covered
}

// dropChanged drops the entries whose versions are no longer those got.
func (c *caches) dropChanged(v *domain.Viewer, entries []*availabilityEntry, got fresh.Versions) {
	for i, e := range entries {
		if e != nil && !got.Same(v.AccountID, e.config, e.barbers, e.bookings) {
			entries[i] = nil
		}
	}
}

// countLookups counts a lookup of each day, found (a usable entry) or not.
func (c *caches) countLookups(entries []*availabilityEntry) {
	for _, e := range entries {
		c.metrics.CacheLookup("availability", e != nil)
	}
}
