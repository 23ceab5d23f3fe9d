package paging

import (
	"context"

	"barberd/graph/domain"
)

// Page sizes of the Relay connections (appointments, barbers, customers,
// services, units, agenda), of the lists that take first (bookableUnits,
// bookableServices, bookableBarbers, apiKeys, activeHolds) and of
// nodes(ids:).
const (
	// DefaultPageSize is the page of a connection asked for without first
	// or last.
	DefaultPageSize = 50
	// MaxPageSize is the largest page (first or last) a connection serves,
	// and the most ids one nodes(ids:) looks up.
	MaxPageSize = 500
)

// CheckPage reports a first or last over MaxPageSize. Negative ones are
// left to ent's paginator, which refuses them.
func CheckPage(p *domain.Problems, first, last *int) {
	for _, a := range []struct {
		name string
		v    *int
	}{{"first", first}, {"last", last}} {
		if a.v != nil && *a.v > MaxPageSize {
			p.Add(a.name, "must be at most %d", MaxPageSize)
		}
	}
}

// Page bounds a connection's page: without first or last it is the first
// DefaultPageSize items. Errors: validation_failed (first or last over
// MaxPageSize).
func Page(first, last *int) (*int, error) {
	var p domain.Problems
	CheckPage(&p, first, last)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return DefaultFirst(first, last), nil
}

// AdminPage is Page for the connections only admin keys may read.
// Errors: missing_api_key, insufficient_scope, validation_failed.
func AdminPage(ctx context.Context, first, last *int) (*int, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	return Page(first, last)
}

// ListPage is how many items one page of a list field (bookableBarbers,
// apiKeys, activeHolds, ...) holds: first, or DefaultPageSize without it.
// Errors: validation_failed (first negative or over MaxPageSize).
func ListPage(first *int) (int, error) {
	if first == nil {
		return DefaultPageSize, nil
	}
	var p domain.Problems
	if *first < 0 || *first > MaxPageSize {
		p.Add("first", "must be between 0 and %d", MaxPageSize)
	}
	return *first, p.Err()
}

// DefaultFirst is first, or DefaultPageSize when neither first nor last is
// given.
func DefaultFirst(first, last *int) *int {
	if first == nil && last == nil {
		n := DefaultPageSize
		return &n
	}
	return first
}

// CheckNodeIDs bounds one nodes(ids:) lookup: each id is a query of its
// own. Errors: validation_failed (more than MaxPageSize ids).
func CheckNodeIDs(ids []string) error {
	var p domain.Problems
	if len(ids) > MaxPageSize {
		p.Add("ids", "must be at most %d ids", MaxPageSize)
	}
	return p.Err()
}
