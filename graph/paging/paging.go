// Package paging pages a list kept in (name, id) order after a cursor of
// (name, id), so a dashboard can tell from totalCount or pageInfo that a
// list goes on. graph's bookable lists (units, services, barbers) are
// paged with it: ent's Paginate would load their items' units and services
// whole, not the bookable ones.
package paging

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"barberd/ent"
)

// ByName is one list's query, seen through what a page needs of it.
type ByName[T any] struct {
	Count  func(context.Context) (int, error)
	Read   func(*ent.Cursor) (name, id string, err error) // reads and checks a cursor
	After  func(name, id string)                          // keeps the items after (name, id)
	All    func(context.Context, int) ([]T, error)        // by (name, id), at most n
	Cursor func(T) ent.Cursor
}

// Page reads the page of n items after a cursor, with the total when the
// GraphQL field asks for it; errors of Read (a bad cursor) come back as
// they are.
func (l ByName[T]) Page(ctx context.Context, n int, after *ent.Cursor) (nodes []T, cursors []ent.Cursor, total int, info ent.PageInfo, err error) {
	if asked(ctx, "totalCount") {
		if total, err = l.Count(ctx); err != nil {
			return nil, nil, 0, info, err
		}
	}
	if after != nil {
		name, id, err := l.Read(after)
		if err != nil {
			return nil, nil, 0, info, err
		}
		l.After(name, id)
	}
	if nodes, err = l.All(ctx, n+1); err != nil {
		return nil, nil, 0, info, err
	}
	info.HasPreviousPage, info.HasNextPage = after != nil, len(nodes) > n
	nodes = nodes[:min(n, len(nodes))]
	for _, x := range nodes {
		cursors = append(cursors, l.Cursor(x))
	}
	if len(cursors) > 0 {
		info.StartCursor, info.EndCursor = &cursors[0], &cursors[len(cursors)-1]
	}
	return nodes, cursors, total, info, nil
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
