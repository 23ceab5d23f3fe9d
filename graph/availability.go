package graph

import (
	"context"
	"time"

	"barberd/graph/model"
	"barberd/graph/slots"
)

// availability lists the free slots of one day in the unit's zone, for one
// barber or every eligible one, sorted by time, then barber. A past day, a
// closed day or a day beyond the horizon has no slots.
// Errors: validation_failed, unit_not_found, service_not_found,
// barber_not_found, service_not_bookable, barber_not_eligible.
func (r *Resolver) availability(ctx context.Context, unitID, serviceID string, barberID *string, date string) (*model.Availability, error) {
	if _, err := require(ctx, ScopeAvailabilityRead); err != nil {
		return nil, err
	}
	if err := CheckAvailability(unitID, serviceID, barberID, date).Err(); err != nil {
		return nil, err
	}
	o, err := resolveCatalog(ctx, r.DB.Client, unitID, serviceID, barberID)
	if err != nil {
		return nil, r.dbError(err)
	}
	o.date, _ = slots.ParseDate(date)
	free, err := r.freeSlots(ctx, o)
	if err != nil {
		return nil, err
	}
	return &model.Availability{
		UnitID: o.unit.ID, ServiceID: o.service.ID, BarberID: barberID,
		Date: o.date.String(), Timezone: o.unit.Timezone,
		Slots: slotModels(free, o.loc),
	}, nil
}

// freeSlots computes the free slots of the offer's day with plain reads.
func (r *Resolver) freeSlots(ctx context.Context, o *offer) ([]slots.Slot, error) {
	barbers, err := o.candidates(ctx, r.DB.Client)
	if err != nil {
		return nil, r.dbError(err)
	}
	d, err := o.day(ctx, r.DB.Client, r.now(), barbers)
	if err != nil {
		return nil, r.dbError(err)
	}
	return slots.FreeSlots(d), nil
}

// unavailable is the slot_unavailable error of an offer, with up to three
// nearest free slots of the same day (with the same barber when one was
// asked for).
func (r *Resolver) unavailable(ctx context.Context, o *offer) error {
	r.metrics().SlotConflict()
	e := Errorf(CodeSlotUnavailable, "%s is not free for this service. Pick another time, for example one of the alternatives.", slots.Local(o.start, o.loc))
	if free, err := r.freeSlots(ctx, o); err == nil {
		e.Alternatives = slotModels(slots.Nearest(free, o.start, 3), o.loc)
	} else {
		r.Log.WarnContext(ctx, "computing alternatives", "err", err)
	}
	return e
}

func slotModels(free []slots.Slot, loc *time.Location) []*model.Slot {
	out := make([]*model.Slot, len(free))
	for i, s := range free {
		out[i] = &model.Slot{
			StartsAt: slots.Local(s.Start, loc), EndsAt: slots.Local(s.End, loc),
			StartsAtUtc: s.Start.UTC(), EndsAtUtc: s.End.UTC(),
			BarberID: s.BarberID,
		}
	}
	return out
}
