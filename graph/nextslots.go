package graph

import (
	"context"
	"fmt"

	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/quota"
	"barberd/graph/slots"
)

// Availability over more than one day: a range of days, and the next free
// times. Both take their days from availabilityDays, so they agree with the
// single-day answer, slot for slot, and share its cache.

// ReasonNoneWithinHorizon is why a search for the next free times found
// none: nothing is free from after through the booking horizon.
const ReasonNoneWithinHorizon = "none_within_horizon"

// AvailabilityRange is availability for each day from from to to, both
// included: each day exactly as AvailabilityDay gives it.
// Errors: those of AvailabilityDay.
func (r *Resolver) AvailabilityRange(ctx context.Context, unitID, serviceID string, barberID *string, from, to string) ([]*Day, error) {
	p := domain.CheckAvailabilityRange(unitID, serviceID, barberID, from, to)
	var dates []slots.Date
	if len(p) == 0 {
		f, _ := slots.ParseDate(from)
		t, _ := slots.ParseDate(to)
		for d := f; d.Compare(t) <= 0; d = d.AddDays(1) {
			dates = append(dates, d)
		}
	}
	return r.availabilityOf(ctx, domain.ScopeAvailabilityRead, unitID, serviceID, barberID, dates, p)
}

// availabilityRange is AvailabilityRange for GraphQL.
func (r *Resolver) availabilityRange(ctx context.Context, unitID, serviceID string, barberID *string, from, to string) (*model.AvailabilityRange, error) {
	days, err := r.AvailabilityRange(ctx, unitID, serviceID, barberID, from, to)
	if err != nil {
		return nil, err
	}
	out := &model.AvailabilityRange{
		UnitID: unitID, ServiceID: serviceID, BarberID: barberID,
		Timezone: days[0].Timezone(), From: from, To: to,
		Days: make([]*model.Availability, len(days)),
	}
	for i, d := range days {
		out.Days[i] = d.Availability(barberID)
	}
	return out, nil
}

// NextFreeSlots finds up to q.Limit first free start times at or after
// q.After (or now) within the booking horizon, in the query's daily window
// and weekdays (docs/design.md tells how it reads days and stops at its
// budget). Errors: validation_failed (also: nothing found within the
// budget), and those of AvailabilityDay.
func (r *Resolver) NextFreeSlots(ctx context.Context, q domain.NextSlotsQuery) (*model.NextFreeSlots, error) {
	s, p := domain.NextSearchOf(q)
	a, err := r.askAvailability(ctx, domain.ScopeAvailabilityRead, q.UnitID, q.ServiceID, q.BarberID, p)
	if err != nil {
		return nil, err
	}
	o := a.o
	now := r.now()
	after := now
	if s.After != nil {
		if t := s.After.AtOrAfter(o.Loc); t.After(after) {
			after = t
		}
	}
	first, last := slots.DateOf(after, o.Loc), slots.DateOf(now, o.Loc).AddDays(o.Unit.HorizonDays)
	out := &model.NextFreeSlots{
		UnitID: q.UnitID, ServiceID: q.ServiceID, BarberID: q.BarberID,
		Timezone: o.Unit.Timezone, Slots: []*model.Slot{},
	}
	// Hours tell which days can hold a start in the daily window: the
	// others are skipped unread, and each day read counts its slots
	// against the request's budget.
	week, err := r.weekHoursOf(ctx, a.v, o)
	if err != nil {
		return nil, err
	}
	budget, spent, exhausted := r.slotBudget(ctx), 0, false
	from, to := slots.Clock(s.From/60), slots.Clock((s.To+59)/60)
	var fits [7]bool // by weekday: a start can fall in the window
	cost := week.All // by weekday: the slots a day read computes
	for wd := range fits {
		fits[wd] = week.Starts(q.BarberID, wd, from, to, true) > 0
		if q.BarberID != nil {
			cost[wd] = week.Starts(q.BarberID, wd, 0, slots.EndOfDay, false)
		}
	}
	// The days are read in growing batches: most searches end in the
	// first few days, and a long one costs a batch per month.
	batch := 4
	date := first
	for ; date.Compare(last) <= 0 && len(out.Slots) < s.Limit && !exhausted; batch = min(2*batch, domain.MaxRangeDays) {
		if err := canceled(ctx); err != nil {
			return nil, err
		}
		var dates []slots.Date
		left, start := budget-spent, date
		for ; date.Compare(last) <= 0 && len(dates) < batch; date = date.AddDays(1) {
			wd := date.Weekday()
			if !s.Weekdays[domain.ISOWeekday(date)] || !fits[wd] {
				continue
			}
			if spent+cost[wd] > budget {
				exhausted = true
				break
			}
			spent += cost[wd]
			dates = append(dates, date)
		}
		if len(dates) == 0 {
			continue
		}
		if !quota.Reserve(ctx, left-(budget-spent)) {
			exhausted, date = true, start // the request's other answers took the rest
			break
		}
		days, err := r.availabilityDays(ctx, a, dates, left)
		if err != nil {
			return nil, err
		}
		for _, d := range days {
			out.Slots = d.AppendNext(out.Slots, q.BarberID, after, s.From, s.To, s.Limit)
		}
	}
	if len(out.Slots) == 0 && exhausted {
		return nil, searchExhausted(budget, date, q.BarberID)
	}
	if len(out.Slots) == 0 {
		reason := ReasonNoneWithinHorizon
		out.Reason = &reason
	}
	return out, nil
}

// searchExhausted refuses a search for the next free times that found
// nothing in as many slots as it may look at, up to date (excluded).
func searchExhausted(budget int, date slots.Date, barberID *string) error {
	var p domain.Problems
	p.Add("after", "nothing is free before %s in the %d slots one search may look at: search again with after %sT00:00:00", date, budget, date)
	what := "a later after"
	if barberID == nil {
		p.Add("barber_id", "one barber's search looks further")
		what += ", one barber (barber_id)"
	}
	e, _ := domain.AsError(p.Err())
	e.Message = fmt.Sprintf("Nothing is free before %s within the %d slots one search may look at. Search again from %s (after), or narrow it: %s or fewer weekdays.", date, budget, date, what)
	return e
}
