package domain

import (
	"context"
	"fmt"
	"strings"

	"barberd/ent"
	"barberd/graph/slots"
)

// Lookups of the catalog through the tenant-filtered client: another
// account's id is "not found", answered with the entity's own code.

// FindUnit returns the unit with the given id, active or not.
// Errors: unit_not_found.
func FindUnit(ctx context.Context, c *ent.Client, id string) (*ent.Unit, error) {
	u, err := c.Unit.Get(ctx, id)
	return u, NotFound(err, CodeUnitNotFound, "unit", id)
}

// FindService returns the service with the given id, bookable or not.
// Errors: service_not_found.
func FindService(ctx context.Context, c *ent.Client, id string) (*ent.Service, error) {
	s, err := c.Service.Get(ctx, id)
	return s, NotFound(err, CodeServiceNotFound, "service", id)
}

// FindBarber returns the barber with the given id, active or not.
// Errors: barber_not_found.
func FindBarber(ctx context.Context, c *ent.Client, id string) (*ent.Barber, error) {
	b, err := c.Barber.Get(ctx, id)
	return b, NotFound(err, CodeBarberNotFound, "barber", id)
}

// SpansOf reads a working-hours row into wall-clock spans.
func SpansOf(h *ent.WorkingHours) (slots.Span, []slots.Span, error) {
	work, err := slots.ParseSpan(h.OpensAt, h.ClosesAt)
	if err != nil {
		return work, nil, fmt.Errorf("working hours %s: %w", h.ID, err)
	}
	breaks := make([]slots.Span, 0, len(h.Breaks))
	for _, b := range h.Breaks {
		from, to, _ := strings.Cut(b, "-")
		s, err := slots.ParseSpan(from, to)
		if err != nil {
			return work, nil, fmt.Errorf("working hours %s: break: %w", h.ID, err)
		}
		breaks = append(breaks, s)
	}
	return work, breaks, nil
}
