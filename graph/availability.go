package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/ent/workinghours"
	"barberd/graph/admit"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/free"
	"barberd/graph/fresh"
	"barberd/graph/model"
	"barberd/graph/quota"
	"barberd/graph/slots"
)

// availability lists the free slots of one day in the unit's zone, for one
// barber or every eligible one, sorted by time, then barber. A past day, a
// closed day or a day beyond the horizon has no slots.
// Errors: validation_failed, unit_not_found, service_not_found,
// barber_not_found, service_not_bookable, barber_not_eligible.
func (r *Resolver) availability(ctx context.Context, unitID, serviceID string, barberID *string, date string) (*model.Availability, error) {
	d, err := r.AvailabilityDay(ctx, unitID, serviceID, barberID, date)
	if err != nil {
		return nil, err
	}
	return d.Availability(barberID), nil
}

// A Day is one day's free slots of a unit and service (package free).
type Day = free.Day

// Why a day has no slots: the values of Availability.reason.
const (
	ReasonOutsideBookingWindow = free.ReasonOutsideBookingWindow
	ReasonClosed               = free.ReasonClosed
	ReasonTimeOff              = free.ReasonTimeOff
	ReasonFullyBooked          = free.ReasonFullyBooked
)

// dayTags numbers the days cached in this process.
var dayTags atomic.Uint64

// AvailabilityDay is availability as a Day, from which the adapter takes
// its answer (every barber's slots, or barberID's).
// Errors: validation_failed, unit_not_found, service_not_found,
// barber_not_found, service_not_bookable, barber_not_eligible.
func (r *Resolver) AvailabilityDay(ctx context.Context, unitID, serviceID string, barberID *string, date string) (*Day, error) {
	d, p := checkAvailability(unitID, serviceID, barberID, date)
	days, err := r.availabilityOf(ctx, domain.ScopeAvailabilityRead, unitID, serviceID, barberID, []slots.Date{d}, p)
	if err != nil {
		return nil, err
	}
	return days[0], nil
}

// availabilityOf is the one path of every answer of given days (a day, a
// range): the viewer and the offer are looked up once, the days' slots
// bounded, then each day served from the cache or computed.
// Errors: missing_api_key, insufficient_scope, validation_failed (p, or
// too many slots), those of resolveCatalog. The caller needs scope.
func (r *Resolver) availabilityOf(ctx context.Context, scope, unitID, serviceID string, barberID *string, dates []slots.Date, p domain.Problems) ([]*Day, error) {
	a, err := r.askAvailability(ctx, scope, unitID, serviceID, barberID, p)
	if err != nil {
		return nil, err
	}
	budget, err := r.checkSlots(ctx, a, dates)
	if err != nil {
		return nil, err
	}
	return r.availabilityDays(ctx, a, dates, budget)
}

// availabilityDays returns the Days of dates (ascending, distinct) of an
// offer, for every eligible barber (or, rarely, for the barber asked for
// alone). Each comes from the availability cache while it is still what the
// database says (cache.go); the others are computed together, then cached.
// When every barber's missing days would compute more than budget slots,
// the barber's days are computed alone, not cached.
func (r *Resolver) availabilityDays(ctx context.Context, a *availabilityAsk, dates []slots.Date, budget int) ([]*Day, error) {
	keys := make([]availabilityKey, len(dates))
	for i, d := range dates {
		keys[i] = newAvailabilityKey(a.v.AccountID, a.o.Unit.ID, a.o.Service.ID, d.String())
	}
	entries, covered := r.cache.cachedDays(a.v, keys, a.barberID, r.now())
	if covered != nil { // some day is cached: are its barbers' bookings unchanged?
		got, err := r.versions(ctx, a, covered)
		if err != nil {
			return nil, err
		}
		r.cache.dropChanged(a.v, entries, got)
	}
	r.cache.countLookups(entries)
	out := make([]*Day, len(dates))
	var missing []slots.Date
	var at []int // missing[j] is dates[at[j]]
	for i, e := range entries {
		if e != nil {
			out[i] = e.day
		} else {
			missing, at = append(missing, dates[i]), append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	barbers, cache := a.o.Eligible, a.v.Versioned
	if a.barber != nil {
		n, err := r.slotsFor(ctx, a, nil, missing, budget)
		if err != nil {
			return nil, err
		}
		if n > budget {
			barbers, cache = []*ent.Barber{a.barber}, false
		}
	}
	c, err := r.computeDays(ctx, a.o, barbers, missing, cache)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = c.days[j]
		if cache {
			c.days[j].Tag = dayTags.Add(1)
			r.cache.availability.Put(keys[i], &availabilityEntry{
				config: a.v.ConfigVersion, barbers: c.barbers, bookings: c.bookings,
				from: c.at, until: c.until[j], day: c.days[j],
			})
		}
	}
	return out, nil
}

// versions reads, once a request, the bookings versions of the offer's
// eligible barbers and of also (package fresh).
func (r *Resolver) versions(ctx context.Context, a *availabilityAsk, also []string) (fresh.Versions, error) {
	if a.read {
		return a.versions, nil
	}
	ids := also // mostly the eligible barbers already
	for _, b := range a.o.Eligible {
		if !slices.Contains(ids, b.ID) {
			if len(ids) == len(also) {
				ids = slices.Grow(slices.Clip(ids), len(a.o.Eligible)) // never append to an entry's
			}
			ids = append(ids, b.ID)
		}
	}
	got, err := r.cache.fence.Read(ctx, a.v.AccountID, ids)
	if err != nil {
		return got, err
	}
	a.versions, a.read = got, true
	return got, nil
}

// computedDays are days read from the database, with what it takes to
// cache them.
type computedDays struct {
	days     []*Day
	at       time.Time   // the days hold from at
	until    []time.Time // until until[i], if nothing is written
	barbers  []string    // the barbers they cover, with
	bookings []int64     // their bookings versions, when read (-1: not found)
}

// computeDays computes the days of an offer for barbers from the database:
// it reads them, then computes them once the admission gate lets it
// (admitSlots). With versioned, it reads the barbers' bookings versions in
// the same statement (catalog's VersionedDays), so the days can be cached
// under them without waiting for the fence: they are at least as new as
// those versions.
// Errors: unavailable (not admitted in time), request_canceled.
func (r *Resolver) computeDays(ctx context.Context, o *catalog.Offer, barbers []*ent.Barber, dates []slots.Date, versioned bool) (*computedDays, error) {
	c := &computedDays{at: r.now(), barbers: make([]string, len(barbers))}
	for i, b := range barbers {
		c.barbers[i] = b.ID
	}
	var (
		inputs []catalog.DayInput
		err    error
	)
	if versioned {
		sent := time.Now()
		inputs, c.bookings, err = o.VersionedDays(ctx, r.cfg.DB.Client, r.cfg.DB.Dialect, c.at, barbers, dates)
		if err == nil && c.bookings != nil {
			// As a fence query sent at sent would have: the next
			// requests for these barbers' days need not ask again.
			r.cache.fence.Learn(c.barbers, c.bookings, sent)
		}
	} else {
		inputs, err = o.Days(ctx, r.cfg.DB.Client, r.cfg.DB.Dialect, c.at, barbers, dates)
	}
	if err != nil {
		return nil, err
	}
	// The gate admits the computing, once the rows are read: a request
	// waiting for the database holds no share of the cores.
	release, err := r.admitSlots(ctx, len(barbers)*len(dates)*o.StartsPerDay())
	if err != nil {
		return nil, err
	}
	defer release()
	c.days, c.until = make([]*Day, len(inputs)), make([]time.Time, len(inputs))
	for i, in := range inputs {
		// A day of a large unit takes a good part of a second: stop
		// between days once nobody waits for the answer.
		if err := canceled(ctx); err != nil {
			return nil, err
		}
		open := slots.FreeStarts(in.Day)
		inWindow := in.InWindow()
		var empty []slots.BarberStage
		if inWindow {
			empty = slots.Stages(withoutSlots(in.Day, open))
		}
		c.until[i] = validUntil(in.Day, open, empty, in.HoldsUntil)
		c.days[i] = free.NewDay(o.Of(), in.Date, c.barbers, open, inWindow, empty)
	}
	return c, nil
}

// canceled is the error of a request whose context is done: its caller
// went away, or its time ran out.
func canceled(ctx context.Context) error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return &domain.Error{Code: domain.CodeUnavailable, Message: "The request ran out of time before it finished; ask for less (fewer days, one barber) or try again.", Err: err}
	default:
		return domain.DomainError(err)
	}
}

// withoutSlots is d with only its barbers that have none of the free slots.
func withoutSlots(d slots.Day, open slots.Free) slots.Day {
	has := make([]bool, len(d.Barbers))
	n := len(d.Barbers)
	for _, s := range open.Starts {
		if !has[s.Barber] {
			has[s.Barber], n = true, n-1
		}
	}
	rest := make([]slots.Barber, 0, n)
	for i, b := range d.Barbers {
		if !has[i] {
			rest = append(rest, b)
		}
	}
	d.Barbers = rest
	return d
}

// validUntil is when the passing of time alone may change a day's free
// slots or why a barber has none (empty, the stages of those): when the
// first free slot, or the last start a stage rests on, comes closer than
// the minimum lead, at the next midnight in the unit's zone (the booking
// window moves), or when a hold that blocks a slot expires.
func validUntil(d slots.Day, open slots.Free, empty []slots.BarberStage, holdsUntil time.Time) time.Time {
	tomorrow := slots.DateOf(d.Now, d.Location).AddDays(1)
	until := time.Date(tomorrow.Year, tomorrow.Month, tomorrow.Day, 0, 0, 0, 0, d.Location)
	if len(open.Starts) > 0 { // sorted by start
		until = earliest(until, open.Start(open.Starts[0]).Add(-d.Policy.MinLead))
	}
	for _, b := range empty {
		if !b.Until.IsZero() {
			until = earliest(until, b.Until)
		}
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
func (r *Resolver) freeSlots(ctx context.Context, o *catalog.Offer) ([]slots.Slot, error) {
	barbers, err := o.Candidates(ctx, r.cfg.DB.Client)
	if err != nil {
		return nil, err
	}
	d, err := o.Day(ctx, r.cfg.DB.Client, r.cfg.DB.Dialect, r.now(), barbers)
	if err != nil {
		return nil, err
	}
	return slots.FreeSlots(d), nil
}

// unavailable is the slot_unavailable error of an offer, with up to three
// nearest free slots of the same day (with the same barber when one was
// asked for).
func (r *Resolver) unavailable(ctx context.Context, o *catalog.Offer) error {
	r.metrics().SlotConflict()
	e := domain.Errorf(domain.CodeSlotUnavailable, "%s is not free for this service. Pick another time, for example one of the alternatives.", slots.Local(o.Start, o.Loc))
	if ss, err := r.freeSlots(ctx, o); err == nil {
		e.Alternatives = slotModels(slots.Nearest(ss, o.Start, 3), o.Loc)
	} else {
		r.cfg.Log.WarnContext(ctx, "computing alternatives", "err", err)
	}
	return e
}

func slotModels(ss []slots.Slot, loc *time.Location) []*model.Slot {
	out := make([]*model.Slot, len(ss))
	for i, s := range ss {
		out[i] = free.SlotModel(s, loc)
	}
	return out
}

// The slot budget of an answer: the days it asks for are bounded before
// any is computed, and computing waits for the admission gate.

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
