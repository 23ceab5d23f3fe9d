package graph

import (
	"barberd/graph/catalog"
	"context"

	"barberd/ent"
	"barberd/graph/domain"
	"barberd/graph/fresh"
)

// resolveCatalog finds the unit, the service and (when given) the barber of
// a request and checks that they go together; asked for any barber, it also
// lists the eligible ones. Answers come from the catalog cache while the
// account's configuration is unchanged.
// Errors: unit_not_found, service_not_found, barber_not_found,
// service_not_bookable, barber_not_eligible.
func (r *Resolver) resolveCatalog(ctx context.Context, unitID, serviceID string, barberID *string) (*catalog.Offer, error) {
	v, _ := domain.ViewerFrom(ctx)
	return r.catalogOffer(ctx, v, unitID, serviceID, barberID, false)
}

// catalogOffer is resolveCatalog for the viewer v (nil: none, uncached);
// shared, its unit, service and barbers may be the cache's, only to read.
func (r *Resolver) catalogOffer(ctx context.Context, v *domain.Viewer, unitID, serviceID string, barberID *string, shared bool) (*catalog.Offer, error) {
	var key catalog.Key
	if v != nil {
		key = catalog.NewKey(v.AccountID, unitID, serviceID, barberID)
		if o, hit := r.cache.cachedCatalog(v, key, shared); hit {
			return o, nil
		}
	}
	o, err := catalog.Lookup(ctx, r.cfg.DB.Client, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if barberID == nil {
		if o.Eligible, err = o.Candidates(ctx, r.cfg.DB.Client); err != nil {
			return nil, err
		}
	}
	if v != nil && v.Versioned {
		r.cache.catalogs.Put(key, &catalog.Entry{Config: v.ConfigVersion, Offer: *o})
	}
	return o, nil
}

// offerAt resolves what a booking request names: its unit, service and
// barber, and its local start time.
// Errors: those of resolveCatalog and offer.at.
func (r *Resolver) offerAt(ctx context.Context, unitID, serviceID string, barberID *string, startsAt string) (*catalog.Offer, error) {
	o, err := r.resolveCatalog(ctx, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if err := o.At(startsAt); err != nil {
		return nil, err
	}
	return o, nil
}

// availabilityAsk is an availability request with what it names looked
// up once: its viewer, the unit and service with every eligible barber, and
// the barber asked for (nil: every one).
type availabilityAsk struct {
	v        *domain.Viewer
	o        *catalog.Offer // o.barber is nil, o.eligible lists them
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
		if a.barber = o.EligibleBarber(*barberID); a.barber == nil {
			return nil, catalog.Ineligible(ctx, r.cfg.DB.Client, o, *barberID)
		}
	}
	return a, nil
}

// cachedCatalog returns the catalog entry of k when the viewer's config
// version, read for this request, is the one it was stored under; unless
// shared, with copies of its unit, service and barbers.
func (c *caches) cachedCatalog(v *domain.Viewer, k catalog.Key, shared bool) (*catalog.Offer, bool) {
	e, ok := c.catalogs.Get(k)
	hit := ok && v.Versioned && e.Config == v.ConfigVersion
	c.metrics.CacheLookup("catalog", hit)
	if !hit {
		return nil, false
	}
	if shared {
		return &e.Offer, true
	}
	o := e.Offer
	// Copies: requests fill in their own start and date, and may hang
	// edges on what they are given.
	u, s := *o.Unit, *o.Service
	o.Unit, o.Service = &u, &s
	if o.Barber != nil {
		b := *o.Barber
		o.Barber = &b
	}
	if o.Eligible != nil {
		o.Eligible = make([]*ent.Barber, len(e.Offer.Eligible))
		for i, b := range e.Offer.Eligible {
			c := *b
			o.Eligible[i] = &c
		}
	}
	return &o, true
}
