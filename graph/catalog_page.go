package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/service"
	"barberd/ent/unit"
)

// The bookable lists as connections: the same items in the same order (by
// name, then id), paged after a cursor of (name, id), so a dashboard can
// tell from totalCount or pageInfo that a list goes on. ent's Paginate
// would load the items' units and services whole, not the bookable ones.

// nameAfter reads a cursor of the catalog connections: the name and id of
// the last item of the page before. Errors: validation_failed.
func nameAfter(after *ent.Cursor) (name, id string, err error) {
	name, ok := after.Value.(string)
	if !ok || !PlausibleID(after.ID) {
		var p Problems
		p.Add("after", "is not a cursor of this list")
		return "", "", p.Err()
	}
	return name, after.ID, nil
}

// asked reports whether the GraphQL field being resolved selects field;
// outside GraphQL, everything counts as asked for.
func asked(ctx context.Context, field string) bool {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return true
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == field {
			return true
		}
	}
	return false
}

// catalogList is one of the bookable lists' queries, seen through what a
// page needs of it.
type catalogList[T any] struct {
	count  func(context.Context) (int, error)
	after  func(name, id string)                   // keeps the items after (name, id)
	all    func(context.Context, int) ([]T, error) // by (name, id), at most n
	cursor func(T) ent.Cursor
}

// page reads the page of n items after a cursor, with the total when the
// query asks for it. Errors: validation_failed (a bad cursor).
func (l catalogList[T]) page(ctx context.Context, n int, after *ent.Cursor) (nodes []T, cursors []ent.Cursor, total int, info ent.PageInfo, err error) {
	if asked(ctx, "totalCount") {
		if total, err = l.count(ctx); err != nil {
			return nil, nil, 0, info, err
		}
	}
	if after != nil {
		name, id, err := nameAfter(after)
		if err != nil {
			return nil, nil, 0, info, err
		}
		l.after(name, id)
	}
	if nodes, err = l.all(ctx, n+1); err != nil {
		return nil, nil, 0, info, err
	}
	info.HasPreviousPage, info.HasNextPage = after != nil, len(nodes) > n
	nodes = nodes[:min(n, len(nodes))]
	for _, x := range nodes {
		cursors = append(cursors, l.cursor(x))
	}
	if len(cursors) > 0 {
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[len(cursors)-1]
	}
	return nodes, cursors, total, info, nil
}

// bookableUnitsConnection pages bookableUnits.
// Errors: validation_failed.
func (r *Resolver) bookableUnitsConnection(ctx context.Context, first *int, after *ent.Cursor) (*ent.UnitConnection, error) {
	q, n, err := r.bookableUnitsQuery(ctx, first)
	if err != nil {
		return nil, err
	}
	us, cs, total, info, err := catalogList[*ent.Unit]{
		count: q.Clone().Count,
		after: func(name, id string) { q.Where(unit.Or(unit.NameGT(name), unit.And(unit.Name(name), unit.IDGT(id)))) },
		all: func(ctx context.Context, n int) ([]*ent.Unit, error) {
			return q.Order(unit.ByName(), unit.ByID()).Limit(n).All(ctx)
		},
		cursor: func(u *ent.Unit) ent.Cursor { return ent.Cursor{ID: u.ID, Value: u.Name} },
	}.page(ctx, n, after)
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
	q, n, err := r.bookableServicesQuery(ctx, unitID, first)
	if err != nil {
		return nil, err
	}
	ss, cs, total, info, err := catalogList[*ent.Service]{
		count: q.Clone().Count,
		after: func(name, id string) {
			q.Where(service.Or(service.NameGT(name), service.And(service.Name(name), service.IDGT(id))))
		},
		all: func(ctx context.Context, n int) ([]*ent.Service, error) {
			return q.Order(service.ByName(), service.ByID()).Limit(n).All(ctx)
		},
		cursor: func(s *ent.Service) ent.Cursor { return ent.Cursor{ID: s.ID, Value: s.Name} },
	}.page(ctx, n, after)
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
	q, n, err := r.bookableBarbersQuery(ctx, unitID, serviceID, first)
	if err != nil {
		return nil, err
	}
	bs, cs, total, info, err := catalogList[*ent.Barber]{
		count: q.Clone().Count,
		after: func(name, id string) {
			q.Where(barber.Or(barber.NameGT(name), barber.And(barber.Name(name), barber.IDGT(id))))
		},
		all: func(ctx context.Context, n int) ([]*ent.Barber, error) {
			return q.Order(barber.ByName(), barber.ByID()).Limit(n).All(ctx)
		},
		cursor: func(b *ent.Barber) ent.Cursor { return ent.Cursor{ID: b.ID, Value: b.Name} },
	}.page(ctx, n, after)
	if err != nil {
		return nil, err
	}
	conn := &ent.BarberConnection{Edges: []*ent.BarberEdge{}, TotalCount: total, PageInfo: info}
	for i, b := range bs {
		conn.Edges = append(conn.Edges, &ent.BarberEdge{Node: b, Cursor: cs[i]})
	}
	return conn, nil
}
