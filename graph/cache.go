package graph

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/graph/admit"
	"barberd/graph/fresh"
)

// Caches of what every booking request reads and hardly ever changes: the
// API key behind a secret, the catalog a request names, and a day's
// availability. Each entry is tagged with the change versions it was
// computed under and used only while they are current (package fresh).

// Bounds on what is kept, for memory: entries for keys and catalogs, bytes
// for availability (Config.AvailabilityCacheBytes), where a unit's open
// day with a dozen barbers takes about 5 kB.
const (
	maxCachedKeys                 = 10_000
	maxCachedCatalogs             = 10_000
	DefaultAvailabilityCacheBytes = 24 << 20
)

type caches struct {
	metrics      Metrics
	fence        *fresh.Fence
	gate         *admit.Gate // of computing days (cost.go)
	keys         *fresh.Memo[string, *keyEntry]
	unknownKeys  *fresh.Memo[string, time.Time] // hash → when the database did not know it
	catalogs     *fresh.Memo[catalogKey, *catalogEntry]
	availability *fresh.Memo[availabilityKey, *availabilityEntry]
}

func newCaches(r *Resolver) *caches {
	return &caches{
		metrics:     r.metrics(),
		fence:       fresh.NewFence(r.cfg.DB, r.cfg.FreshnessWindow, r.metrics()),
		gate:        newGate(r.metrics()),
		keys:        fresh.NewMemo[string, *keyEntry](maxCachedKeys, nil),
		unknownKeys: fresh.NewMemo[string, time.Time](maxCachedKeys, nil),
		catalogs:    fresh.NewMemo[catalogKey, *catalogEntry](maxCachedCatalogs, nil),
		availability: fresh.NewMemo[availabilityKey](r.cfg.AvailabilityCacheBytes, func(e *availabilityEntry) int {
			return 256 + 24*len(e.barbers) + e.day.size()
		}),
	}
}

// keyEntry is an API key as read with its account's config version.
type keyEntry struct {
	viewer Viewer
	// lastUsed is when this process last recorded the key's use (Unix
	// nanoseconds), so busy keys are written at most once per touchEvery.
	lastUsed atomic.Int64
}

// catalogKey names what a booking request resolves: a unit, a service and
// a barber (or any) of an account.
type catalogKey struct {
	account, unit, service, barber string
	anyBarber                      bool
}

func newCatalogKey(account, unitID, serviceID string, barberID *string) catalogKey {
	k := catalogKey{account: account, unit: unitID, service: serviceID, anyBarber: barberID == nil}
	if barberID != nil {
		k.barber = *barberID
	}
	return k
}

type catalogEntry struct {
	config int64
	offer  offer // unit, loc, service, barber and eligible barbers
	// week is the eligible barbers' hours, once weekHoursOf read them
	// (entries of every barber only).
	week atomic.Pointer[weekHours]
}

// cachedCatalog returns the catalog entry of k when the viewer's config
// version, read for this request, is the one it was stored under.
func (c *caches) cachedCatalog(v *Viewer, k catalogKey) (*offer, bool) {
	e, ok := c.catalogs.Get(k)
	hit := ok && v.versioned && e.config == v.configVersion
	c.metrics.CacheLookup("catalog", hit)
	if !hit {
		return nil, false
	}
	// Copies: requests fill in their own start and date, and may hang
	// edges on what they are given.
	o := e.offer
	u, s := *o.unit, *o.service
	o.unit, o.service = &u, &s
	if o.barber != nil {
		b := *o.barber
		o.barber = &b
	}
	if o.eligible != nil {
		o.eligible = make([]*ent.Barber, len(e.offer.eligible))
		for i, b := range e.offer.eligible {
			c := *b
			o.eligible[i] = &c
		}
	}
	return &o, true
}

// availabilityKey names one day of a unit and service: its availability
// for every eligible barber, from which one barber's is taken too.
type availabilityKey struct {
	catalogKey
	date string
}

func newAvailabilityKey(account, unitID, serviceID, date string) availabilityKey {
	return availabilityKey{newCatalogKey(account, unitID, serviceID, nil), date}
}

type availabilityEntry struct {
	config   int64
	barbers  []string  // the eligible barbers it covers, with
	bookings []int64   // their bookings_version
	from     time.Time // the day holds from the moment it was computed
	until    time.Time // until then
	day      *Day
}

// cachedDays returns the cached entry of each key (nil where there is none)
// that is still what the database says: same config version, same bookings
// versions of its barbers (read once for all of them, within the freshness
// window) and not yet changed by the passing of time.
// An error is the database's: the caller need not ask it again.
func (c *caches) cachedDays(ctx context.Context, v *Viewer, keys []availabilityKey, now time.Time) ([]*availabilityEntry, error) {
	out := make([]*availabilityEntry, len(keys))
	if !v.versioned {
		for range keys {
			c.metrics.CacheLookup("availability", false)
		}
		return out, nil
	}
	var barbers []string // of every entry found
	hits := false
	for i, k := range keys {
		e, _ := c.availability.Get(k)
		if e == nil || e.config != v.configVersion || now.Before(e.from) || !now.Before(e.until) {
			continue
		}
		out[i], hits = e, true
		switch {
		case barbers == nil:
			barbers = e.barbers // the days of a unit and service mostly share them
		case !slices.Equal(barbers, e.barbers):
			union := slices.Clone(barbers) // never append to an entry's
			for _, b := range e.barbers {
				if !slices.Contains(union, b) {
					union = append(union, b)
				}
			}
			barbers = union
		}
	}
	if hits {
		got, err := c.fence.Read(ctx, v.AccountID, barbers)
		if err != nil {
			return nil, err
		}
		for i, e := range out {
			if e != nil && !got.Same(v.AccountID, e.config, e.barbers, e.bookings) {
				out[i] = nil
			}
		}
	}
	for _, e := range out {
		c.metrics.CacheLookup("availability", e != nil)
	}
	return out, nil
}

// bookingVersions reads the bookings versions of barbers, before their
// reservations are read for an answer to be cached under them.
func (c *caches) bookingVersions(ctx context.Context, v *Viewer, ids []string) ([]int64, error) {
	got, err := c.fence.Read(ctx, v.AccountID, ids)
	if err != nil {
		return nil, err
	}
	bookings := make([]int64, len(ids))
	for i, id := range ids {
		bookings[i], _ = got.Bookings(id) // a barber not found never matches later
	}
	return bookings, nil
}
