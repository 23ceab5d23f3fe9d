package graph

import (
	"context"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/paging"
)

// The bookable lists as connections: the same items in the same order (by
// name, then id), paged by package paging.

// nameAfter reads a cursor of the catalog connections: the name and id of
// the last item of the page before. Errors: validation_failed.
func nameAfter(after *ent.Cursor) (name, id string, err error) {
	name, ok := after.Value.(string)
	if !ok || !domain.PlausibleID(after.ID) {
		var p domain.Problems
		p.Add("after", "is not a cursor of this list")
		return "", "", p.Err()
	}
	return name, after.ID, nil
}

// bookableUnitsConnection pages bookableUnits.
// Errors: validation_failed.
func (r *Resolver) bookableUnitsConnection(ctx context.Context, first *int, after *ent.Cursor) (*ent.UnitConnection, error) {
	n, err := catalogPage(ctx, nil, nil, first)
	if err != nil {
		return nil, err
	}
	q := r.bookableUnitsQuery()
	us, cs, total, info, err := paging.ByName[*ent.Unit]{
		Count: q.Clone().Count,
		Read:  nameAfter,
		After: func(name, id string) { q.Where(unit.Or(unit.NameGT(name), unit.And(unit.Name(name), unit.IDGT(id)))) },
		All: func(ctx context.Context, n int) ([]*ent.Unit, error) {
			return q.Order(unit.ByName(), unit.ByID()).Limit(n).All(ctx)
		},
		Cursor: func(u *ent.Unit) ent.Cursor { return ent.Cursor{ID: u.ID, Value: u.Name} },
	}.Page(ctx, n, after)
	if err != nil {
		return nil, err
	}
	conn := &ent.UnitConnection{Edges: []*ent.UnitEdge{}, TotalCount: total, PageInfo: info}
	for i, u := range us {
		conn.Edges = append(conn.Edges, &ent.UnitEdge{Node: u, Cursor: cs[i]})
	}
	return conn, nil
}

// bookableServicesConnection pages bookableServices.
// Errors: validation_failed, unit_not_found.
func (r *Resolver) bookableServicesConnection(ctx context.Context, unitID *string, first *int, after *ent.Cursor) (*ent.ServiceConnection, error) {
	n, err := catalogPage(ctx, unitID, nil, first)
	if err != nil {
		return nil, err
	}
	q, err := r.bookableServicesQuery(ctx, unitID)
	if err != nil {
		return nil, err
	}
	ss, cs, total, info, err := paging.ByName[*ent.Service]{
		Count: q.Clone().Count,
		Read:  nameAfter,
		After: func(name, id string) {
			q.Where(service.Or(service.NameGT(name), service.And(service.Name(name), service.IDGT(id))))
		},
		All: func(ctx context.Context, n int) ([]*ent.Service, error) {
			return q.Order(service.ByName(), service.ByID()).Limit(n).All(ctx)
		},
		Cursor: func(s *ent.Service) ent.Cursor { return ent.Cursor{ID: s.ID, Value: s.Name} },
	}.Page(ctx, n, after)
	if err != nil {
		return nil, err
	}
	conn := &ent.ServiceConnection{Edges: []*ent.ServiceEdge{}, TotalCount: total, PageInfo: info}
	for i, s := range ss {
		conn.Edges = append(conn.Edges, &ent.ServiceEdge{Node: s, Cursor: cs[i]})
	}
	return conn, nil
}

// bookableBarbersConnection pages bookableBarbers.
// Errors: validation_failed, unit_not_found, service_not_found.
func (r *Resolver) bookableBarbersConnection(ctx context.Context, unitID, serviceID *string, first *int, after *ent.Cursor) (*ent.BarberConnection, error) {
	n, err := catalogPage(ctx, unitID, serviceID, first)
	if err != nil {
		return nil, err
	}
	q, err := r.bookableBarbersQuery(ctx, unitID, serviceID)
	if err != nil {
		return nil, err
	}
	bs, cs, total, info, err := paging.ByName[*ent.Barber]{
		Count: q.Clone().Count,
		Read:  nameAfter,
		After: func(name, id string) {
			q.Where(barber.Or(barber.NameGT(name), barber.And(barber.Name(name), barber.IDGT(id))))
		},
		All: func(ctx context.Context, n int) ([]*ent.Barber, error) {
			return q.Order(barber.ByName(), barber.ByID()).Limit(n).All(ctx)
		},
		Cursor: func(b *ent.Barber) ent.Cursor { return ent.Cursor{ID: b.ID, Value: b.Name} },
	}.Page(ctx, n, after)
	if err != nil {
		return nil, err
	}
	conn := &ent.BarberConnection{Edges: []*ent.BarberEdge{}, TotalCount: total, PageInfo: info}
	for i, b := range bs {
		conn.Edges = append(conn.Edges, &ent.BarberEdge{Node: b, Cursor: cs[i]})
	}
	return conn, nil
}
