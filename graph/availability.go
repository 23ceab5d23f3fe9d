package graph

import (
	"context"
	"slices"
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
	v, err := r.checkAvailability(ctx, unitID, serviceID, barberID, date)
	if err != nil {
		return nil, err
	}
	a, err := r.computeAvailability(ctx, v, unitID, serviceID, barberID, date, false)
	if err != nil {
		return nil, err
	}
	return a.answer, nil
}

// A PreparedDay is an adapter's own form of a day's availability for every
// eligible barber of a unit and service, from which it renders any answer
// for that day: every barber's slots, or one barber's. Size is what it costs
// to keep, in bytes.
type PreparedDay interface{ Size() int }

// PreparedAvailability is availability for an adapter that renders answers
// from days it prepared (prepare is given the day for every eligible
// barber). It answers from the availability cache when the day there is
// still what the database says (cache.go), and otherwise from the
// database, caching the prepared day. When barberID is given, the day
// returned lists that barber among its eligible ones: the adapter picks
// their slots.
func (r *Resolver) PreparedAvailability(ctx context.Context, unitID, serviceID string, barberID *string, date string, prepare func(*model.Availability) PreparedDay) (PreparedDay, error) {
	v, err := r.checkAvailability(ctx, unitID, serviceID, barberID, date)
	if err != nil {
		return nil, err
	}
	key := newAvailabilityKey(v.AccountID, unitID, serviceID, date)
	c := r.caches()
	e, err := c.cachedAvailability(ctx, v, key, r.now())
	if err != nil {
		return nil, r.dbError(err)
	}
	if e != nil && (barberID == nil || slices.Contains(e.barbers, *barberID)) {
		return e.day, nil
	}
	if barberID != nil {
		// The barber's own errors (barber_not_found, barber_not_eligible)
		// come before the day is read.
		if _, err := r.resolveCatalog(ctx, unitID, serviceID, barberID); err != nil {
			return nil, r.dbError(err)
		}
	}
	a, err := r.computeAvailability(ctx, v, unitID, serviceID, nil, date, v.versioned)
	if err != nil {
		return nil, err
	}
	day := prepare(a.answer)
	if a.cacheable {
		c.availability.Put(key, &availabilityEntry{
			config: v.configVersion, barbers: a.barbers, bookings: a.bookings,
			from: a.at, until: a.until, day: day,
		})
	}
	if barberID != nil && !slices.Contains(a.barbers, *barberID) {
		// The catalog changed between the two reads: answer as the
		// barber's own day says, without caching it.
		if a, err = r.computeAvailability(ctx, v, unitID, serviceID, barberID, date, false); err != nil {
			return nil, err
		}
		day = prepare(a.answer)
	}
	return day, nil
}

// checkAvailability checks the caller's scope and the request.
func (r *Resolver) checkAvailability(ctx context.Context, unitID, serviceID string, barberID *string, date string) (*Viewer, error) {
	v, err := require(ctx, ScopeAvailabilityRead)
	if err != nil {
		return nil, err
	}
	return v, CheckAvailability(unitID, serviceID, barberID, date).Err()
}

// computedAvailability is an answer read from the database, with what it
// takes to cache it.
type computedAvailability struct {
	answer    *model.Availability
	at, until time.Time // the answer holds from at until until, if nothing is written
	barbers   []string  // the barbers it covers
	cacheable bool      // their versions were read before their reservations:
	bookings  []int64
}

// computeAvailability reads a day's availability from the database; with
// versioned, it reads the barbers' bookings versions first, so the answer
// can be cached under them.
func (r *Resolver) computeAvailability(ctx context.Context, v *Viewer, unitID, serviceID string, barberID *string, date string, versioned bool) (*computedAvailability, error) {
	o, err := r.resolveCatalog(ctx, unitID, serviceID, barberID)
	if err != nil {
		return nil, r.dbError(err)
	}
	o.date, _ = slots.ParseDate(date)
	barbers, err := o.candidates(ctx, r.DB.Client)
	if err != nil {
		return nil, r.dbError(err)
	}
	a := &computedAvailability{at: r.now(), barbers: make([]string, len(barbers))}
	for i, b := range barbers {
		a.barbers[i] = b.ID
	}
	if versioned {
		// Read before the reservations, so the answer is at least as new
		// as the versions say.
		a.bookings, err = r.caches().bookingVersions(ctx, v, a.barbers)
		a.cacheable = err == nil
	}
	d, err := o.day(ctx, r.DB.Client, r.DB.Dialect, a.at, barbers)
	if err != nil {
		return nil, r.dbError(err)
	}
	free := slots.FreeSlots(d)
	a.until = validUntil(d, free, o.holdsUntil)
	a.answer = &model.Availability{
		UnitID: o.unit.ID, ServiceID: o.service.ID, BarberID: barberID,
		Date: o.date.String(), Timezone: o.unit.Timezone,
		Slots: slotModels(free, o.loc),
	}
	return a, nil
}

// validUntil is when the passing of time alone may change a day's free
// slots: when the first of them comes closer than the minimum lead, at the
// next midnight in the unit's zone (the booking horizon moves), or when a
// hold that blocks a slot expires.
func validUntil(d slots.Day, free []slots.Slot, holdsUntil time.Time) time.Time {
	tomorrow := slots.DateOf(d.Now, d.Location).AddDays(1)
	until := time.Date(tomorrow.Year, tomorrow.Month, tomorrow.Day, 0, 0, 0, 0, d.Location)
	if len(free) > 0 { // sorted by start
		until = earliest(until, free[0].Start.Add(-d.Policy.MinLead))
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
	d, err := o.day(ctx, r.DB.Client, r.DB.Dialect, r.now(), barbers)
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
