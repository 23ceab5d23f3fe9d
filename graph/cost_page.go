package graph

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

// checkPage reports a first or last over MaxPageSize. Negative ones are
// left to ent's paginator, which refuses them.
func checkPage(p *domain.Problems, first, last *int) {
	for _, a := range []struct {
		name string
		v    *int
	}{{"first", first}, {"last", last}} {
		if a.v != nil && *a.v > MaxPageSize {
			p.Add(a.name, "must be at most %d", MaxPageSize)
		}
	}
}

// page bounds a connection's page: without first or last it is the first
// DefaultPageSize items. Errors: validation_failed (first or last over
// MaxPageSize).
func page(first, last *int) (*int, error) {
	var p domain.Problems
	checkPage(&p, first, last)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return defaultPage(first, last), nil
}

// adminPage is page for the connections only admin keys may read.
// Errors: missing_api_key, insufficient_scope, validation_failed.
func adminPage(ctx context.Context, first, last *int) (*int, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	return page(first, last)
}

// listPage is how many items one page of a list field (bookableBarbers,
// apiKeys, activeHolds, ...) holds: first, or DefaultPageSize without it.
// Errors: validation_failed (first negative or over MaxPageSize).
func listPage(first *int) (int, error) {
	if first == nil {
		return DefaultPageSize, nil
	}
	var p domain.Problems
	if *first < 0 || *first > MaxPageSize {
		p.Add("first", "must be between 0 and %d", MaxPageSize)
	}
	return *first, p.Err()
}

// defaultPage is first, or DefaultPageSize when neither first nor last is
// given.
func defaultPage(first, last *int) *int {
	if first == nil && last == nil {
		n := DefaultPageSize
		return &n
	}
	return first
}

// checkNodeIDs bounds one nodes(ids:) lookup: each id is a query of its
// own. Errors: validation_failed (more than MaxPageSize ids).
func checkNodeIDs(ids []string) error {
	var p domain.Problems
	if len(ids) > MaxPageSize {
		p.Add("ids", "must be at most %d ids", MaxPageSize)
	}
	return p.Err()
}
