package graph

import (
	"barberd/graph/catalog"
	"context"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/paging"
)

// The catalog lists: units, services and barbers a chatbot may book (the
// rules of a name's lookup are package catalog's).

// withBookableUnits loads the ids of the active units of a service or barber.
func withBookableUnits(q *ent.UnitQuery) { q.Where(unit.Active(true)).Select(unit.FieldID) }

// withBookableServices loads the ids of the bookable services of a barber.
func withBookableServices(q *ent.ServiceQuery) {
	q.Where(service.Active(true), service.BookableOnline(true)).Select(service.FieldID)
}

// bookableUnits lists the first active units, by name.
// Errors: validation_failed.
func (r *Resolver) bookableUnits(ctx context.Context, first *int) ([]*ent.Unit, error) {
	n, err := catalogPage(ctx, nil, nil, first)
	if err != nil {
		return nil, err
	}
	return cachedList(ctx, r, listKey{kind: "units", n: n}, func() ([]*ent.Unit, error) {
		return r.bookableUnitsQuery().Order(unit.ByName(), unit.ByID()).Limit(n).All(ctx)
	})
}

// bookableUnitsQuery queries what bookableUnits lists.
func (r *Resolver) bookableUnitsQuery() *ent.UnitQuery {
	return r.cfg.DB.Unit.Query().Where(unit.Active(true))
}

// bookableServices lists the first active, online-bookable services, by
// name; with unitID only those offered at that unit, with their active unit
// ids loaded. Errors: validation_failed, unit_not_found.
func (r *Resolver) bookableServices(ctx context.Context, unitID *string, first *int) ([]*ent.Service, error) {
	n, err := catalogPage(ctx, unitID, nil, first)
	if err != nil {
		return nil, err
	}
	return cachedList(ctx, r, listKey{kind: "services", unit: deref(unitID), n: n}, func() ([]*ent.Service, error) {
		q, err := r.bookableServicesQuery(ctx, unitID)
		if err != nil {
			return nil, err
		}
		return q.Order(service.ByName(), service.ByID()).Limit(n).All(ctx)
	})
}

// bookableServicesQuery queries what bookableServices lists, its filters
// checked (catalogPage). Errors: unit_not_found.
func (r *Resolver) bookableServicesQuery(ctx context.Context, unitID *string) (*ent.ServiceQuery, error) {
	q := r.cfg.DB.Service.Query().Where(service.Active(true), service.BookableOnline(true))
	if unitID != nil {
		if _, err := catalog.ActiveUnit(ctx, r.cfg.DB.Client, *unitID); err != nil {
			return nil, err
		}
		q.Where(service.HasUnitsWith(unit.ID(*unitID)))
	}
	return q.WithUnits(withBookableUnits), nil
}

// bookableBarbers lists the first active barbers, by name; with unitID
// those who work there, with serviceID those who perform it. Their active
// unit ids and bookable service ids are loaded.
// Errors: validation_failed, unit_not_found, service_not_found.
func (r *Resolver) bookableBarbers(ctx context.Context, unitID, serviceID *string, first *int) ([]*ent.Barber, error) {
	n, err := catalogPage(ctx, unitID, serviceID, first)
	if err != nil {
		return nil, err
	}
	return cachedList(ctx, r, listKey{kind: "barbers", unit: deref(unitID), service: deref(serviceID), n: n}, func() ([]*ent.Barber, error) {
		q, err := r.bookableBarbersQuery(ctx, unitID, serviceID)
		if err != nil {
			return nil, err
		}
		return q.Order(barber.ByName(), barber.ByID()).Limit(n).All(ctx)
	})
}

// bookableBarbersQuery queries what bookableBarbers lists, its filters
// checked (catalogPage). Errors: unit_not_found, service_not_found.
func (r *Resolver) bookableBarbersQuery(ctx context.Context, unitID, serviceID *string) (*ent.BarberQuery, error) {
	q := r.cfg.DB.Barber.Query().Where(barber.Active(true))
	if unitID != nil {
		if _, err := catalog.ActiveUnit(ctx, r.cfg.DB.Client, *unitID); err != nil {
			return nil, err
		}
		q.Where(barber.HasUnitsWith(unit.ID(*unitID)))
	}
	if serviceID != nil {
		if _, err := domain.FindService(ctx, r.cfg.DB.Client, *serviceID); err != nil {
			return nil, err
		}
		q.Where(barber.HasServicesWith(service.ID(*serviceID)))
	}
	return q.WithUnits(withBookableUnits).WithServices(withBookableServices), nil
}

// catalogPage checks a catalog read (a list or a connection): the
// viewer's scope, then its filters, then its page size, which it returns.
// Errors: insufficient_scope, validation_failed.
func catalogPage(ctx context.Context, unitID, serviceID *string, first *int) (int, error) {
	if _, err := domain.Require(ctx, domain.ScopeCatalogRead); err != nil {
		return 0, err
	}
	if err := CheckCatalogFilters(unitID, serviceID).Err(); err != nil {
		return 0, err
	}
	return paging.ListPage(first)
}

// The catalog lists (units, services, barbers: what a chatbot reads at the
// start of every conversation) are cached per account, as the catalog of
// a request is (cachedCatalog): an entry read under the account's
// configuration is used while the viewer's configuration is the same, which
// every change to units, services, barbers and their links changes.

// listKey names a catalog list of an account: its kind, its filters (""
// none) and its page size.
type listKey struct {
	account, kind, unit, service string
	n                            int
}

// listEntry is a catalog list as read under the account's configuration
// config: items is a []*T of cachedList.
type listEntry struct {
	config int64
	items  any
	size   int
}

// maxCachedListItems bounds what the catalog lists' cache keeps, in
// entities (an entry costs its items and one).
const maxCachedListItems = 100_000

// cachedList is the list read reads (k, for the viewer's account), from
// the cache while the viewer's account configuration is what it was read
// under. The caller checked the viewer's scope, the filters and the page
// size (catalogPage); what read refuses (a unit or service not there) is
// not kept.
// Each entity handed back is a copy, whose fields and edges the caller may
// change; the loaded edges' slices are shared, only to read. Without a
// viewer of a versioned account, it reads.
func cachedList[T any](ctx context.Context, r *Resolver, k listKey, read func() ([]*T, error)) ([]*T, error) {
	v, ok := domain.ViewerFrom(ctx)
	if !ok || !v.Versioned {
		return read()
	}
	k.account = v.AccountID
	e, ok := r.cache.lists.Get(k)
	hit := ok && e.config == v.ConfigVersion
	r.cache.metrics.CacheLookup("catalog_list", hit)
	if hit {
		if items, ok := e.items.([]*T); ok {
			return copies(items), nil
		}
	}
	items, err := read()
	if err != nil {
		return nil, err
	}
	r.cache.lists.Put(k, &listEntry{config: v.ConfigVersion, items: copies(items), size: len(items)})
	return items, nil
}

// copies are shallow copies of xs' elements.
func copies[T any](xs []*T) []*T {
	out := make([]*T, len(xs))
	for i, x := range xs {
		c := *x
		out[i] = &c
	}
	return out
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
