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

// MaxRangeDays is the most days one range covers, from and to included.
const MaxRangeDays = 31

// Bounds of a next free times search.
const (
	DefaultNextLimit = 3
	MaxNextLimit     = 20
)

// ReasonNoneWithinHorizon is why a search for the next free times found
// none: nothing is free from after through the booking horizon.
const ReasonNoneWithinHorizon = "none_within_horizon"

// CheckAvailabilityRange checks a range request: from and to are dates, to
// not before from, at most MaxRangeDays days in all.
func CheckAvailabilityRange(unitID, serviceID string, barberID *string, from, to string) domain.Problems {
	var p domain.Problems
	domain.Required(&p, "unit_id", unitID)
	domain.Required(&p, "service_id", serviceID)
	domain.CheckOptionalID(&p, "barber_id", barberID)
	f, t := domain.RequiredDate(&p, "from", from), domain.RequiredDate(&p, "to", to)
	if f != nil && t != nil {
		switch {
		case t.Compare(*f) < 0:
			p.Add("to", "must not be before from")
		case t.Compare(f.AddDays(MaxRangeDays-1)) > 0:
			p.Add("to", "must be at most %d days after from (%d days, both included): %s at the latest", MaxRangeDays-1, MaxRangeDays, f.AddDays(MaxRangeDays-1))
		}
	}
	return p
}

// AvailabilityRange is availability for each day from from to to, both
// included: each day exactly as AvailabilityDay gives it.
// Errors: those of AvailabilityDay.
func (r *Resolver) AvailabilityRange(ctx context.Context, unitID, serviceID string, barberID *string, from, to string) ([]*Day, error) {
	p := CheckAvailabilityRange(unitID, serviceID, barberID, from, to)
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

// NextSlotsQuery asks for the next free times of a service at a unit.
type NextSlotsQuery struct {
	UnitID, ServiceID string
	BarberID          *string
	// After is a unit-local wall time; starts at or after it (nil: now).
	After *string
	// Limit is how many to find, 1..MaxNextLimit (nil: DefaultNextLimit).
	Limit *int
	// TimeFrom and TimeTo bound the local time of day of a start,
	// TimeFrom <= time < TimeTo, as HH:MM (nil: 00:00 and 24:00).
	TimeFrom, TimeTo *string
	// Weekdays are the ISO weekdays (1 Monday .. 7 Sunday) a start may
	// fall on (empty: all).
	Weekdays []int
}

// nextSearch is a checked NextSlotsQuery.
type nextSearch struct {
	after    *slots.WallTime
	limit    int
	from, to int // seconds since local midnight
	weekdays [8]bool
}

// CheckNextSlots checks a next free times request.
func CheckNextSlots(q NextSlotsQuery) domain.Problems {
	_, p := checkNextSlots(q)
	return p
}

func checkNextSlots(q NextSlotsQuery) (nextSearch, domain.Problems) {
	var p domain.Problems
	s := nextSearch{limit: DefaultNextLimit, to: int(slots.EndOfDay) * 60}
	domain.Required(&p, "unit_id", q.UnitID)
	domain.Required(&p, "service_id", q.ServiceID)
	domain.CheckOptionalID(&p, "barber_id", q.BarberID)
	if q.After != nil && domain.Required(&p, "after", *q.After) {
		if w, err := slots.ParseWallTime(*q.After); err != nil {
			p.Add("after", domain.WallTimeForm)
		} else {
			s.after = &w
		}
	}
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > MaxNextLimit {
			p.Add("limit", "must be between 1 and %d", MaxNextLimit)
		}
		s.limit = *q.Limit
	}
	clock := func(field string, v *string, into *int) bool {
		if v == nil || !domain.CheckText(&p, field, *v) {
			return v == nil
		}
		c, err := slots.ParseClock(*v)
		if err != nil {
			p.Add(field, "must be a local time of day in the form HH:MM, from 00:00 to 24:00")
			return false
		}
		*into = int(c) * 60
		return true
	}
	fromOK, toOK := clock("time_from", q.TimeFrom, &s.from), clock("time_to", q.TimeTo, &s.to)
	if fromOK && toOK && s.to <= s.from {
		p.Add("time_to", "must be after time_from")
	}
	for _, d := range q.Weekdays {
		if d < 1 || d > 7 {
			p.Add("weekdays", "must be ISO weekdays, 1 (Monday) to 7 (Sunday)")
			break
		}
		s.weekdays[d] = true
	}
	if len(q.Weekdays) == 0 {
		for d := range s.weekdays {
			s.weekdays[d] = true
		}
	}
	return s, p
}

// isoWeekday is the ISO number of d's weekday: 1 Monday .. 7 Sunday.
func isoWeekday(d slots.Date) int { return (int(d.Weekday())+6)%7 + 1 }

// NextFreeSlots finds up to q.Limit first free start times at or after
// q.After (or now) within the booking horizon, in the query's daily window
// and weekdays (docs/design.md tells how it reads days and stops at its
// budget). Errors: validation_failed (also: nothing found within the
// budget), and those of AvailabilityDay.
func (r *Resolver) NextFreeSlots(ctx context.Context, q NextSlotsQuery) (*model.NextFreeSlots, error) {
	s, p := checkNextSlots(q)
	a, err := r.askAvailability(ctx, domain.ScopeAvailabilityRead, q.UnitID, q.ServiceID, q.BarberID, p)
	if err != nil {
		return nil, err
	}
	o := a.o
	now := r.now()
	after := now
	if s.after != nil {
		if t := s.after.AtOrAfter(o.Loc); t.After(after) {
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
	from, to := slots.Clock(s.from/60), slots.Clock((s.to+59)/60)
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
	for ; date.Compare(last) <= 0 && len(out.Slots) < s.limit && !exhausted; batch = min(2*batch, MaxRangeDays) {
		if err := canceled(ctx); err != nil {
			return nil, err
		}
		var dates []slots.Date
		left, start := budget-spent, date
		for ; date.Compare(last) <= 0 && len(dates) < batch; date = date.AddDays(1) {
			wd := date.Weekday()
			if !s.weekdays[isoWeekday(date)] || !fits[wd] {
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
			out.Slots = d.AppendNext(out.Slots, q.BarberID, after, s.from, s.to, s.limit)
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
