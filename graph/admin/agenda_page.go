package admin

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"barberd/ent"
)

// agendaPage is the first page of an agenda (q, first > 0) as Paginate
// answers it, in fewer statements: no count unless the day holds more than
// the page and totalCount is asked for (otherwise it is the page's
// length), and no query for the appointments' unit when only the unit's
// own fields are asked for: u, the agenda's unit, is theirs.
func agendaPage(ctx context.Context, q *ent.AppointmentQuery, u *ent.Unit, first int, byStart ent.AppointmentPaginateOption, where *ent.AppointmentWhereInput) (*ent.AppointmentConnection, error) {
	page, ok := narrowAgenda(ctx)
	if !ok {
		return q.Paginate(ctx, nil, &first, nil, nil, byStart, ent.WithAppointmentFilter(where.Filter))
	}
	conn, err := q.Clone().Paginate(page.ctx, nil, &first, nil, nil, byStart, ent.WithAppointmentFilter(where.Filter))
	if err != nil {
		return nil, err
	}
	if page.totalCount && conn.PageInfo.HasNextPage {
		if q, err = where.Filter(q); err != nil {
			return nil, err
		}
		if conn.TotalCount, err = q.Count(ctx); err != nil {
			return nil, err
		}
	}
	if page.ownUnit {
		for _, e := range conn.Edges {
			e.Node.Edges.Unit = u
		}
	}
	return conn, nil
}

// agendaSelection is what an agenda field asks of its first page.
type agendaSelection struct {
	// ctx is the request's, its field narrowed to edges { node }, less the
	// node's unit when ownUnit.
	ctx        context.Context
	totalCount bool
	ownUnit    bool // the unit is asked for, its own fields only
}

// narrowAgenda narrows the agenda field of ctx for Paginate, which reads a
// count whenever totalCount or pageInfo is selected and loads every edge
// selected; false when ctx is no GraphQL field's or selects no edges.node.
func narrowAgenda(ctx context.Context) (agendaSelection, bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		return agendaSelection{}, false
	}
	oc := graphql.GetOperationContext(ctx)
	var out agendaSelection
	var edges, node *graphql.CollectedField
	// Paginate finds its fields by alias.
	for _, f := range graphql.CollectFields(oc, fc.Field.Selections, nil) {
		switch f.Alias {
		case "totalCount":
			out.totalCount = true
		case "edges":
			for _, e := range graphql.CollectFields(oc, f.Selections, nil) {
				if e.Alias == "node" {
					edges, node = &f, &e
				}
			}
		}
	}
	if node == nil {
		return agendaSelection{}, false
	}
	var fields []*graphql.CollectedField
	var units []*graphql.CollectedField
	for _, f := range graphql.CollectFields(oc, node.Selections, nil) {
		if f.Name == "unit" {
			units = append(units, &f)
		} else {
			fields = append(fields, &f)
		}
	}
	out.ownUnit = len(units) > 0
	for _, f := range units {
		for _, g := range graphql.CollectFields(oc, f.Selections, nil) {
			out.ownUnit = out.ownUnit && len(g.Selections) == 0
		}
	}
	if !out.ownUnit {
		fields = append(fields, units...)
	}
	// gqlgen caches collected fields by the address of a selection set
	// for the whole operation: one array holds the narrowed sets, and the
	// cache keeps it alive through the node field, so no other set is
	// ever made at the same address.
	sets := make(ast.SelectionSet, 2+len(fields))
	e, n := *edges.Field, *node.Field
	e.SelectionSet, n.SelectionSet = sets[1:2], sets[2:]
	sets[0], sets[1] = &e, &n
	for i, f := range fields {
		c := *f.Field
		c.SelectionSet = f.Selections
		sets[2+i] = &c
	}
	narrowed := *fc
	narrowed.Field.Selections = sets[:1]
	out.ctx = graphql.WithFieldContext(ctx, &narrowed)
	return out, true
}
