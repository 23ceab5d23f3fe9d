package graph

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/predicate"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/free"
	"barberd/graph/fresh"
	"barberd/graph/slots"
)

// The offer a request names (a unit, a service, a barber or any eligible
// one), looked up once per request, from the catalog cache while the
// account's configuration is unchanged. Catalog rules shared by every
// operation that names a unit, service or barber: an id of another account
// behaves exactly like an unknown one (the tenant filter sees to that), and
// a deactivated unit is closed for booking, so it is "not found" to
// chatbots.

// offer is what a booking request asks for, resolved against the catalog:
// a service at a unit, at an instant, with a barber or with any eligible one.
type offer struct {
	unit    *ent.Unit
	loc     *time.Location
	service *ent.Service
	barber  *ent.Barber // nil: any eligible barber
	// eligible are the eligible barbers, by name, when barber is nil
	// (never nil then, once resolveCatalog has listed them).
	eligible []*ent.Barber
	// holdsUntil is when the first hold that day() found blocking expires
	// (zero: none).
	holdsUntil time.Time
	start      time.Time
	date       slots.Date
}

func (o *offer) policy() slots.Policy {
	return slots.Policy{
		Step:        time.Duration(o.unit.SlotStepMinutes) * time.Minute,
		MinLead:     time.Duration(o.unit.MinLeadMinutes) * time.Minute,
		HorizonDays: o.unit.HorizonDays,
	}
}

func (o *offer) duration() time.Duration {
	return time.Duration(o.service.DurationMinutes) * time.Minute
}

// of is what the offer's days are of (package free).
func (o *offer) of() free.Of {
	return free.Of{UnitID: o.unit.ID, ServiceID: o.service.ID, Timezone: o.unit.Timezone, Location: o.loc, Duration: o.duration()}
}

func (o *offer) buffer() time.Duration { return time.Duration(o.service.BufferMinutes) * time.Minute }

// resolveCatalog finds the unit, the service and (when given) the barber of
// a request and checks that they go together; asked for any barber, it also
// lists the eligible ones. Answers come from the catalog cache while the
// account's configuration is unchanged.
// Errors: unit_not_found, service_not_found, barber_not_found,
// service_not_bookable, barber_not_eligible.
func (r *Resolver) resolveCatalog(ctx context.Context, unitID, serviceID string, barberID *string) (*offer, error) {
	v, _ := domain.ViewerFrom(ctx)
	return r.catalogOffer(ctx, v, unitID, serviceID, barberID, false)
}

// catalogOffer is resolveCatalog for the viewer v (nil: none, uncached);
// shared, its unit, service and barbers may be the cache's, only to read.
func (r *Resolver) catalogOffer(ctx context.Context, v *domain.Viewer, unitID, serviceID string, barberID *string, shared bool) (*offer, error) {
	var key catalogKey
	if v != nil {
		key = newCatalogKey(v.AccountID, unitID, serviceID, barberID)
		if o, hit := r.cache.cachedCatalog(v, key, shared); hit {
			return o, nil
		}
	}
	o, err := lookupCatalog(ctx, r.cfg.DB.Client, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if barberID == nil {
		if o.eligible, err = o.candidates(ctx, r.cfg.DB.Client); err != nil {
			return nil, err
		}
	}
	if v != nil && v.Versioned {
		r.cache.catalogs.Put(key, &catalogEntry{config: v.ConfigVersion, offer: *o})
	}
	return o, nil
}

// lookupCatalog is resolveCatalog reading the database.
func lookupCatalog(ctx context.Context, c *ent.Client, unitID, serviceID string, barberID *string) (*offer, error) {
	u, err := activeUnit(ctx, c, unitID)
	if err != nil {
		return nil, err
	}
	loc, err := mustZone(u.Timezone)
	if err != nil {
		return nil, err
	}
	// The happy path costs one query per entity; telling why one does not
	// fit costs another, only then.
	s, err := c.Service.Query().Where(service.ID(serviceID), service.HasUnitsWith(unit.ID(u.ID))).Only(ctx)
	if ent.IsNotFound(err) {
		if s, err = domain.FindService(ctx, c, serviceID); err == nil {
			err = domain.Errorf(domain.CodeServiceNotBookable, "The service %q is not offered at %s.", s.Name, u.Name)
		}
	}
	if err != nil {
		return nil, err
	}
	if !s.Active || !s.BookableOnline {
		return nil, domain.Errorf(domain.CodeServiceNotBookable, "The service %q cannot be booked online.", s.Name)
	}
	o := &offer{unit: u, loc: loc, service: s}
	if barberID != nil {
		b, err := c.Barber.Query().Where(barber.ID(*barberID), eligibleBarbers(u.ID, s.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			err = ineligible(ctx, c, o, *barberID)
		}
		if err != nil {
			return nil, err
		}
		o.barber = b
	}
	return o, nil
}

// ineligible is why a barber is not among the offer's eligible ones.
// Errors: barber_not_found, barber_not_eligible.
func ineligible(ctx context.Context, c *ent.Client, o *offer, barberID string) error {
	b, err := domain.FindBarber(ctx, c, barberID)
	if err != nil {
		return err
	}
	return domain.Errorf(domain.CodeBarberNotEligible, "%s does not perform %q at %s.", b.Name, o.service.Name, o.unit.Name)
}

// eligibleBarbers selects the active barbers who work at a unit and perform
// a service.
func eligibleBarbers(unitID, serviceID string) predicate.Barber {
	return barber.And(barber.Active(true), barber.HasUnitsWith(unit.ID(unitID)), barber.HasServicesWith(service.ID(serviceID)))
}

// offerAt resolves what a booking request names: its unit, service and
// barber, and its local start time.
// Errors: those of resolveCatalog and offer.at.
func (r *Resolver) offerAt(ctx context.Context, unitID, serviceID string, barberID *string, startsAt string) (*offer, error) {
	o, err := r.resolveCatalog(ctx, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if err := o.at(startsAt); err != nil {
		return nil, err
	}
	return o, nil
}

// at resolves the requested local start time of the offer.
// Errors: invalid_local_time (a wall time skipped by a daylight saving change).
func (o *offer) at(startsAt string) error {
	w, err := slots.ParseWallTime(startsAt)
	if err != nil {
		return (&domain.Problems{{Field: "starts_at", Message: domain.WallTimeForm}}).Err()
	}
	start, err := w.In(o.loc)
	if err != nil {
		return domain.Errorf(domain.CodeInvalidLocalTime, "%s does not exist in %s: the clocks skip it for daylight saving time.", startsAt, o.unit.Timezone)
	}
	o.start, o.date = start.UTC(), w.Date
	return nil
}

// candidates returns the barbers the offer may be booked with: the one asked
// for, or every eligible barber (as resolveCatalog listed them, when it did).
func (o *offer) candidates(ctx context.Context, c *ent.Client) ([]*ent.Barber, error) {
	if o.barber != nil {
		return []*ent.Barber{o.barber}, nil
	}
	if o.eligible != nil {
		return o.eligible, nil
	}
	return c.Barber.Query().Where(eligibleBarbers(o.unit.ID, o.service.ID)).Order(barber.ByName(), barber.ByID()).All(ctx)
}

// availabilityAsk is an availability request with what it names looked
// up once: its viewer, the unit and service with every eligible barber, and
// the barber asked for (nil: every one).
type availabilityAsk struct {
	v        *domain.Viewer
	o        *offer // o.barber is nil, o.eligible lists them
	barberID *string
	barber   *ent.Barber // of barberID
	versions fresh.Versions
	read     bool // versions was read
}

// askAvailability reads the viewer, once, requiring scope, and looks up
// the offer of an availability request: the barber is found among the
// eligible ones.
// Errors: missing_api_key, insufficient_scope, validation_failed (p),
// those of resolveCatalog.
func (r *Resolver) askAvailability(ctx context.Context, scope, unitID, serviceID string, barberID *string, p domain.Problems) (*availabilityAsk, error) {
	v, err := domain.Require(ctx, scope)
	if err != nil {
		return nil, err
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	o, err := r.catalogOffer(ctx, v, unitID, serviceID, nil, true)
	if err != nil {
		return nil, err
	}
	a := &availabilityAsk{v: v, o: o, barberID: barberID}
	if barberID != nil {
		i := slices.IndexFunc(o.eligible, func(b *ent.Barber) bool { return b.ID == *barberID })
		if i < 0 {
			return nil, ineligible(ctx, r.cfg.DB.Client, o, *barberID)
		}
		a.barber = o.eligible[i]
	}
	return a, nil
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
	week atomic.Pointer[slots.Week]
}

// cachedCatalog returns the catalog entry of k when the viewer's config
// version, read for this request, is the one it was stored under; unless
// shared, with copies of its unit, service and barbers.
func (c *caches) cachedCatalog(v *domain.Viewer, k catalogKey, shared bool) (*offer, bool) {
	e, ok := c.catalogs.Get(k)
	hit := ok && v.Versioned && e.config == v.ConfigVersion
	c.metrics.CacheLookup("catalog", hit)
	if !hit {
		return nil, false
	}
	if shared {
		return &e.offer, true
	}
	o := e.offer
	// Copies: requests fill in their own start and date, and may hang
	// edges on what they are given.
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

// activeUnit returns the active unit with the given id.
// Errors: unit_not_found.
func activeUnit(ctx context.Context, c *ent.Client, id string) (*ent.Unit, error) {
	u, err := c.Unit.Query().Where(unit.ID(id), unit.Active(true)).Only(ctx)
	return u, domain.NotFound(err, domain.CodeUnitNotFound, "unit", id)
}

// mustZone returns a stored unit's zone; it was validated when the unit was
// saved, so a failure means a broken row, reported as internal.
func mustZone(name string) (*time.Location, error) {
	loc, err := domain.Zone(name)
	if err != nil {
		return nil, domain.Internal(err)
	}
	return loc, nil
}
