package graph

import (
	"barberd/graph/catalog"
	"context"
	"errors"
	"fmt"

	"barberd/ent/workinghours"
	"barberd/graph/admit"
	"barberd/graph/domain"
	"barberd/graph/quota"
	"barberd/graph/slots"
)

// Slots is l.MaxSlots, or its default.
func (l Limits) Slots() int {
	if l.MaxSlots <= 0 {
		return quota.DefaultMaxSlots
	}
	return l.MaxSlots
}

// slotBudget is the most slots a request made with ctx may list or compute.
func (r *Resolver) slotBudget(ctx context.Context) int {
	return quota.Of(ctx, r.cfg.Limits.Slots())
}

// weekHoursOf reads the working hours of the offer's eligible barbers, or
// takes them from the account's catalog cache entry of the unit and
// service while it is current.
func (r *Resolver) weekHoursOf(ctx context.Context, v *domain.Viewer, o *catalog.Offer) (*slots.Week, error) {
	key := catalog.NewKey(v.AccountID, o.Unit.ID, o.Service.ID, nil)
	e, cached := r.cache.catalogs.Get(key)
	cached = cached && v.Versioned && e.Config == v.ConfigVersion
	if cached {
		if w := e.Week.Load(); w != nil {
			return w, nil
		}
	}
	barbers := o.Eligible
	if o.Barber != nil || barbers == nil {
		var err error
		if barbers, err = (&catalog.Offer{Unit: o.Unit, Service: o.Service}).Candidates(ctx, r.cfg.DB.Client); err != nil {
			return nil, err
		}
	}
	w := &slots.Week{Step: o.Policy().Step, Duration: o.Duration(), Barbers: make(map[string]*[7][]slots.Span, len(barbers))}
	ids := make([]string, len(barbers))
	hours, breaks := make(map[string]*[7][]slots.Span, len(barbers)), make(map[string]*[7][]slots.Span, len(barbers))
	for i, b := range barbers {
		ids[i] = b.ID
		w.Barbers[b.ID], hours[b.ID], breaks[b.ID] = new([7][]slots.Span), new([7][]slots.Span), new([7][]slots.Span)
	}
	rows, err := r.cfg.DB.WorkingHours.Query().
		Where(workinghours.UnitID(o.Unit.ID), workinghours.BarberIDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range rows {
		work, b, err := domain.SpansOf(h)
		if err != nil {
			return nil, err
		}
		hours[h.BarberID][h.Weekday] = append(hours[h.BarberID][h.Weekday], work)
		breaks[h.BarberID][h.Weekday] = append(breaks[h.BarberID][h.Weekday], b...)
	}
	for id, week := range w.Barbers {
		for wd := range week {
			week[wd] = slots.WorkingSpans(hours[id][wd], breaks[id][wd])
		}
	}
	for wd := range w.All {
		w.All[wd] = w.Starts(nil, wd, 0, slots.EndOfDay, false)
	}
	if cached {
		e.Week.Store(w)
	}
	return w, nil
}

// slotsFor bounds the slots the days of an offer hold for barberID (nil:
// every eligible barber), stopping past budget. It first bounds them by the
// slot step alone, and reads the barbers' hours only when that bound is
// over budget.
func (r *Resolver) slotsFor(ctx context.Context, a *availabilityAsk, barberID *string, dates []slots.Date, budget int) (int, error) {
	if n := dayBound(a.o, barberID) * len(dates); n <= budget {
		return n, nil // nothing allocated
	}
	w, err := r.weekHoursOf(ctx, a.v, a.o)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range dates {
		if barberID == nil {
			n += w.All[d.Weekday()]
		} else {
			n += w.Starts(barberID, int(d.Weekday()), 0, slots.EndOfDay, false)
		}
		if n > budget {
			break
		}
	}
	return n, nil
}

// dayBound bounds the slots of a day of the offer's unit and service by
// its step alone: a slot every step, around the clock, for each barber.
func dayBound(o *catalog.Offer, barberID *string) int {
	n := len(o.Eligible)
	if barberID != nil {
		n = 1
	}
	return n * o.StartsPerDay()
}

// admitSlots waits until computing slots (a bound) is admitted and returns
// the release of that admission.
// Errors: unavailable (the wait ran out, or the request's time).
func (r *Resolver) admitSlots(ctx context.Context, slots int) (func(), error) {
	release, err := r.cache.gate.Acquire(ctx, slots)
	switch {
	case errors.Is(err, admit.ErrBusy):
		return nil, &domain.Error{Code: domain.CodeUnavailable, Message: "The server is busy computing other large answers; try again shortly, or ask for less (fewer days, one barber).", Err: err}
	case err != nil:
		return nil, canceled(ctx)
	}
	return release, nil
}

// checkSlots refuses an availability request over dates that could list
// more slots than the request's budget, before any day is computed; it
// returns the budget left to compute them.
// Errors: validation_failed.
func (r *Resolver) checkSlots(ctx context.Context, a *availabilityAsk, dates []slots.Date) (int, error) {
	budget := r.slotBudget(ctx)
	n, err := r.slotsFor(ctx, a, a.barberID, dates, budget)
	switch {
	case err != nil:
		return 0, err
	case n <= budget && quota.Reserve(ctx, n):
		return r.slotBudget(ctx), nil
	}
	return 0, tooManySlots(r.slotBudget(ctx), a.barberID, len(dates)) // less, when the request's other answers took some
}

// tooManySlots is the refusal of an answer of days that would hold more
// than budget slots, naming what to narrow.
func tooManySlots(budget int, barberID *string, days int) error {
	var p domain.Problems
	what := "one barber (barber_id)"
	if days > 1 {
		p.Add("to", "must leave fewer days: the answer would list more than %d slots", budget)
		what = "fewer days"
		if barberID == nil {
			what += " or one barber (barber_id)"
		}
	}
	if barberID == nil {
		p.Add("barber_id", "name one barber: every barber's slots would be more than %d", budget)
	}
	if len(p) == 0 {
		p.Add("date", "the day has more than %d slots for this barber", budget)
		what = "another day"
	}
	e, _ := domain.AsError(p.Err())
	e.Message = fmt.Sprintf("This unit has too many slots for one answer: %d day(s) would list more than %d. Ask for %s.", days, budget, what)
	return e
}
