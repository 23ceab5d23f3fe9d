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
	e, err := r.availabilityEntry(ctx, unitID, serviceID, barberID, date)
	if err != nil {
		return nil, err
	}
	return e.answer, nil
}

// EncodedAvailability is availability for an adapter that serves answers
// encoded: a cached answer is encoded once, and the encoding kept with it.
func (r *Resolver) EncodedAvailability(ctx context.Context, unitID, serviceID string, barberID *string, date string, encode func(*model.Availability) []byte) ([]byte, error) {
	e, err := r.availabilityEntry(ctx, unitID, serviceID, barberID, date)
	if err != nil {
		return nil, err
	}
	if b := e.encoded.Load(); b != nil {
		return *b, nil
	}
	b := encode(e.answer)
	e.encoded.Store(&b)
	return b, nil
}

// availabilityEntry answers availability from the cache when it can, and
// otherwise from the database, caching the answer.
func (r *Resolver) availabilityEntry(ctx context.Context, unitID, serviceID string, barberID *string, date string) (*availabilityEntry, error) {
	v, err := require(ctx, ScopeAvailabilityRead)
	if err != nil {
		return nil, err
	}
	if err := CheckAvailability(unitID, serviceID, barberID, date).Err(); err != nil {
		return nil, err
	}
	key := availabilityKey{account: v.AccountID, unit: unitID, service: serviceID, date: date, anyBarber: barberID == nil}
	if barberID != nil {
		key.barber = *barberID
	}
	c := r.caches()
	now := r.now()
	if e, err := c.cachedAvailability(ctx, v, key, now); e != nil || err != nil {
		return e, r.dbError(err)
	}
	o, err := r.resolveCatalog(ctx, unitID, serviceID, barberID)
	if err != nil {
		return nil, r.dbError(err)
	}
	o.date, _ = slots.ParseDate(date)
	barbers, err := o.candidates(ctx, r.DB.Client)
	if err != nil {
		return nil, r.dbError(err)
	}
	// The versions are read before the reservations, so the answer is at
	// least as new as they say.
	ids, bookings, verr := c.bookingVersions(ctx, v, barbers)
	d, err := o.day(ctx, r.DB.Client, now, barbers)
	if err != nil {
		return nil, r.dbError(err)
	}
	free := slots.FreeSlots(d)
	answer := &model.Availability{
		UnitID: o.unit.ID, ServiceID: o.service.ID, BarberID: barberID,
		Date: o.date.String(), Timezone: o.unit.Timezone,
		Slots: slotModels(free, o.loc),
	}
	e := &availabilityEntry{
		config: v.configVersion, barbers: ids, bookings: bookings,
		from: now, until: validUntil(d, free, o.holdsUntil), answer: answer,
	}
	if verr == nil && v.versioned {
		c.availability.put(key, e)
	}
	return e, nil
}

// validUntil is when the passing of time alone may change a day's free
// slots: when the first of them comes closer than the minimum lead, at the
// next midnight in the unit's zone (the booking horizon moves), or when a
// hold that blocks a slot expires.
func validUntil(d slots.Day, free []slots.Slot, holdsUntil time.Time) time.Time {
	tomorrow := slots.DateOf(d.Now, d.Location).AddDays(1)
	until := time.Date(tomorrow.Year, tomorrow.Month, tomorrow.Day, 0, 0, 0, 0, d.Location)
	if len(free) > 0 {
		first := free[0].Start
		for _, s := range free[1:] {
			if s.Start.Before(first) {
				first = s.Start
			}
		}
		until = earliest(until, first.Add(-d.Policy.MinLead))
	}
	if !holdsUntil.IsZero() {
		until = earliest(until, holdsUntil)
	}
	return until
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
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
