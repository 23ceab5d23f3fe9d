// Package catalog is the offer a request names (a unit, a service, a barber
// or any eligible one) looked up against an account's catalog, and the
// barber days it reads for the slot engine. Catalog rules shared by every
// operation that names a unit, service or barber: an id of another account
// behaves exactly like an unknown one (the tenant filter sees to that), and
// a deactivated unit is closed for booking, so it is "not found" to
// chatbots. The resolver caches offers by Key while the account's
// configuration is unchanged (graph/cache.go).
package catalog

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/predicate"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/free"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// Offer is what a booking request asks for, resolved against the catalog:
// a service at a unit, at an instant, with a barber or with any eligible one.
type Offer struct {
	Unit    *ent.Unit
	Loc     *time.Location
	Service *ent.Service
	Barber  *ent.Barber // nil: any eligible barber
	// eligible are the eligible barbers, by name, when barber is nil
	// (never nil then, once resolveCatalog has listed them).
	Eligible []*ent.Barber
	Start    time.Time
	Date     slots.Date
}

// Policy is the unit's booking policy.
func (o *Offer) Policy() slots.Policy {
	return slots.Policy{
		Step:        time.Duration(o.Unit.SlotStepMinutes) * time.Minute,
		MinLead:     time.Duration(o.Unit.MinLeadMinutes) * time.Minute,
		HorizonDays: o.Unit.HorizonDays,
	}
}

// Duration is the service's length.
func (o *Offer) Duration() time.Duration {
	return time.Duration(o.Service.DurationMinutes) * time.Minute
}

// Of is what the offer's days are of (package free).
func (o *Offer) Of() free.Of {
	return free.Of{UnitID: o.Unit.ID, ServiceID: o.Service.ID, Timezone: o.Unit.Timezone, Location: o.Loc, Duration: o.Duration()}
}

// Buffer is the service's buffer after each appointment.
func (o *Offer) Buffer() time.Duration { return time.Duration(o.Service.BufferMinutes) * time.Minute }

// Lookup finds the unit, the service and (when given) the barber of a
// request in the database and checks that they go together.
// Errors: unit_not_found, service_not_found, barber_not_found,
// service_not_bookable, barber_not_eligible.
func Lookup(ctx context.Context, c *ent.Client, unitID, serviceID string, barberID *string) (*Offer, error) {
	u, err := ActiveUnit(ctx, c, unitID)
	if err != nil {
		return nil, err
	}
	loc, err := MustZone(u.Timezone)
	if err != nil {
		return nil, err
	}
	// The happy path costs one query per entity; telling why one does not
	// fit costs another, only then.
	s, err := c.Service.Query().Where(service.ID(serviceID), service.HasUnitsWith(unit.ID(u.ID))).Only(ctx)
	if ent.IsNotFound(err) {
		if s, err = domain.FindService(ctx, c, serviceID); err == nil {
			err = domain.Errorf(domain.CodeServiceNotBookable, "The service %q is not offered at %s.", s.Name, u.Name)
		}
	}
	if err != nil {
		return nil, err
	}
	if !s.Active || !s.BookableOnline {
		return nil, domain.Errorf(domain.CodeServiceNotBookable, "The service %q cannot be booked online.", s.Name)
	}
	o := &Offer{Unit: u, Loc: loc, Service: s}
	if barberID != nil {
		b, err := c.Barber.Query().Where(barber.ID(*barberID), EligibleBarbers(u.ID, s.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			err = Ineligible(ctx, c, o, *barberID)
		}
		if err != nil {
			return nil, err
		}
		o.Barber = b
	}
	return o, nil
}

// Ineligible is why a barber is not among the offer's eligible ones.
// Errors: barber_not_found, barber_not_eligible.
func Ineligible(ctx context.Context, c *ent.Client, o *Offer, barberID string) error {
	b, err := domain.FindBarber(ctx, c, barberID)
	if err != nil {
		return err
	}
	return domain.Errorf(domain.CodeBarberNotEligible, "%s does not perform %q at %s.", b.Name, o.Service.Name, o.Unit.Name)
}

// EligibleBarbers selects the active barbers who work at a unit and perform
// a service.
func EligibleBarbers(unitID, serviceID string) predicate.Barber {
	return barber.And(barber.Active(true), barber.HasUnitsWith(unit.ID(unitID)), barber.HasServicesWith(service.ID(serviceID)))
}

// At resolves the requested local start time of the offer.
// Errors: invalid_local_time (a wall time skipped by a daylight saving change).
func (o *Offer) At(startsAt string) error {
	w, err := slots.ParseWallTime(startsAt)
	if err != nil {
		return (&domain.Problems{{Field: "starts_at", Message: domain.WallTimeForm}}).Err()
	}
	start, err := w.In(o.Loc)
	if err != nil {
		return domain.Errorf(domain.CodeInvalidLocalTime, "%s does not exist in %s: the clocks skip it for daylight saving time.", startsAt, o.Unit.Timezone)
	}
	o.Start, o.Date = start.UTC(), w.Date
	return nil
}

// EligibleBarber is the barber of id among those the offer lists
// eligible (Eligible), or nil.
func (o *Offer) EligibleBarber(id string) *ent.Barber {
	if i := slices.IndexFunc(o.Eligible, func(b *ent.Barber) bool { return b.ID == id }); i >= 0 {
		return o.Eligible[i]
	}
	return nil
}

// Candidates returns the barbers the offer may be booked with: the one asked
// for, or every eligible barber (as Eligible lists them, when it does).
func (o *Offer) Candidates(ctx context.Context, c *ent.Client) ([]*ent.Barber, error) {
	if o.Barber != nil {
		return []*ent.Barber{o.Barber}, nil
	}
	if o.Eligible != nil {
		return o.Eligible, nil
	}
	return c.Barber.Query().Where(EligibleBarbers(o.Unit.ID, o.Service.ID)).Order(barber.ByName(), barber.ByID()).All(ctx)
}

// Key names what a booking request resolves: a unit, a service and
// a barber (or any) of an account.
type Key struct {
	account, unit, service, barber string
	anyBarber                      bool
}

// NewKey is the key of a request of account (barberID nil: any barber).
func NewKey(account, unitID, serviceID string, barberID *string) Key {
	k := Key{account: account, unit: unitID, service: serviceID, anyBarber: barberID == nil}
	if barberID != nil {
		k.barber = *barberID
	}
	return k
}

// Entry is a cached offer and the config version it is current at.
type Entry struct {
	Config int64
	Offer  Offer // unit, loc, service, barber and eligible barbers
	// Week is the eligible barbers' hours, once weekHoursOf read them
	// (entries of every barber only).
	Week atomic.Pointer[slots.Week]
}

// ActiveUnit returns the active unit with the given id.
// Errors: unit_not_found.
func ActiveUnit(ctx context.Context, c *ent.Client, id string) (*ent.Unit, error) {
	u, err := c.Unit.Query().Where(unit.ID(id), unit.Active(true)).Only(ctx)
	return u, domain.NotFound(err, domain.CodeUnitNotFound, "unit", id)
}

// MustZone returns a stored unit's zone; it was validated when the unit was
// saved, so a failure means a broken row, reported as internal.
func MustZone(name string) (*time.Location, error) {
	loc, err := domain.Zone(name)
	if err != nil {
		return nil, domain.Internal(err)
	}
	return loc, nil
}

// Day loads everything the slot engine needs to compute the offer's day for
// the given barbers: their hours and breaks at the unit, their time off, and
// the reservations that block them (but those of the appointment or hold
// being moved, listed in ignore), from c, a database of dialect dia.
func (o *Offer) Day(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, ignore ...string) (slots.Day, error) {
	ds, err := o.Days(ctx, c, dia, now, barbers, []slots.Date{o.Date}, ignore...)
	if err != nil {
		return slots.Day{}, err
	}
	return ds[0].Day, nil
}

// StartDay is Day as a writer needs it to check the offer's start: the
// barbers' hours, and only their time off and reservations that overlap
// the start's block (its slot and buffer), which are all that can keep the
// start from being free (slots.FreeSlots checks a start against those it
// overlaps), where a day's read spans four days of them. The day it
// returns offers the start exactly when the whole day would.
func (o *Offer) StartDay(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, ignore ...string) (slots.Day, error) {
	r := o.dayRead(now, barbers, []slots.Date{o.Date})
	from, to := o.block()
	ds, err := o.read(ctx, c, dia, r, from, to, now, ignore)
	if err != nil {
		return slots.Day{}, err
	}
	return ds[0].Day, nil
}

// block is the span the offer's start keeps its barber from other
// bookings: the slot and the service's buffer after it.
func (o *Offer) block() (from, to time.Time) {
	return o.Start, o.Start.Add(o.Duration() + o.Buffer())
}

// DayInput is a day as the slot engine takes it, and when the first hold
// blocking it expires (zero: none).
type DayInput struct {
	slots.Day
	HoldsUntil time.Time
}

// Days is Day for several dates (ascending) at once, read in one statement.
func (o *Offer) Days(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, dates []slots.Date, ignore ...string) ([]DayInput, error) {
	r := o.dayRead(now, barbers, dates)
	if len(barbers) == 0 || len(dates) == 0 {
		return r.out, nil
	}
	return o.read(ctx, c, dia, r, r.from(), r.to(), now, ignore)
}

// VersionedDays is Days with the barbers' bookings versions read in the
// same statement (bookings[i] is barbers[i]'s, -1 for a barber not found):
// the days are at least as new as those versions, so a cache can keep them
// under them.
func (o *Offer) VersionedDays(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, dates []slots.Date) (_ []DayInput, bookings []int64, _ error) {
	r := o.dayRead(now, barbers, dates)
	if len(barbers) == 0 || len(dates) == 0 {
		return r.out, nil, nil
	}
	r.bookings = make([]int64, len(barbers))
	for i := range r.bookings {
		r.bookings[i] = -1
	}
	days, err := o.read(ctx, c, dia, r, r.from(), r.to(), now, nil)
	return days, r.bookings, err
}

// read fills r's days with its barbers' hours, and their time off and
// reservations over from to to (but those in ignore), read in one
// statement; with r.bookings, their bookings versions as well.
func (o *Offer) read(ctx context.Context, c *ent.Client, dia string, r *dayRead, from, to, now time.Time, ignore []string) ([]DayInput, error) {
	err := store.EachScheduleRow(ctx, c, dia, o.Unit.ID, r.ids, r.weekdays, from, to, now, r.bookings != nil,
		func(row *store.ScheduleRow) error { return r.add(row, ignore) })
	return r.out, err
}

// LockedDay is StartDay for one barber read by a writer under the
// barber's lock (store.DB.LockedSchedule: the lock, then the deletion of
// the barber's holds expired at now and the day in one statement). It
// returns the reservations it deleted, for the caller to record as freed.
func (o *Offer) LockedDay(ctx context.Context, tx *ent.Tx, db *store.DB, now time.Time, b *ent.Barber, ignore ...string) (slots.Day, []store.Reservation, error) {
	r := o.dayRead(now, []*ent.Barber{b}, []slots.Date{o.Date})
	from, to := o.block()
	locked, err := db.LockedSchedule(ctx, tx.Client(), o.Unit.ID, b.ID, r.weekdays, from, to, now)
	if err != nil {
		return slots.Day{}, nil, err
	}
	ds, err := r.fill(locked.Rows, ignore)
	if err != nil {
		return slots.Day{}, locked.Expired, err
	}
	return ds[0].Day, locked.Expired, nil
}

// dayRead is the reading of some barbers' days: the days as the slot
// engine takes them, filled from their schedule rows.
type dayRead struct {
	out      []DayInput
	ids      []string
	index    map[string]int
	weekdays []int
	dates    []slots.Date
	spans    []slots.Interval
	bookings []int64 // the barbers' bookings versions, when read
}

// dayRead prepares the days of barbers on dates (ascending), empty.
func (o *Offer) dayRead(now time.Time, barbers []*ent.Barber, dates []slots.Date) *dayRead {
	r := &dayRead{out: make([]DayInput, len(dates)), dates: dates,
		ids: make([]string, len(barbers)), index: make(map[string]int, len(barbers))}
	for i, date := range dates {
		r.out[i].Day = slots.Day{
			Date: date, Location: o.Loc, Now: now, Policy: o.Policy(),
			Duration: o.Duration(), Buffer: o.Buffer(),
			Barbers: make([]slots.Barber, len(barbers)),
		}
		for j, b := range barbers {
			r.out[i].Barbers[j].ID = b.ID
		}
	}
	for i, b := range barbers {
		r.ids[i] = b.ID
		r.index[b.ID] = i
	}
	for _, d := range dates {
		if w := int(d.Weekday()); !slices.Contains(r.weekdays, w) {
			r.weekdays = append(r.weekdays, w)
		}
	}
	r.spans = make([]slots.Interval, len(dates))
	for i, d := range dates {
		r.spans[i] = DaySpan(d, o.Loc, o.Duration()+o.Buffer())
	}
	return r
}

// daySlack is how far a clock change can move a local midnight: an hour
// almost everywhere, two in a few zones' history; taken wide.
const daySlack = 3 * time.Hour

// DaySpan is the span over which the time off and reservations that can
// touch a slot of the local date d in loc lie, for a service whose slot
// and buffer take block: from the day's midnight (its first start) to the
// next midnight plus block (where a slot starting at the day's last
// instant ends), with daySlack either side. What a day's read asks for
// (the cold scenario's floor reads the same).
func DaySpan(d slots.Date, loc *time.Location, block time.Duration) slots.Interval {
	start := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
	end := time.Date(d.Year, d.Month, d.Day+1, 0, 0, 0, 0, loc)
	return slots.Interval{Start: start.Add(-daySlack).UTC(), End: end.Add(block + daySlack).UTC()}
}

// from and to bound the span the days' rows are read over.
func (r *dayRead) from() time.Time { return r.spans[0].Start }
func (r *dayRead) to() time.Time   { return r.spans[len(r.spans)-1].End }

// fill puts the schedule rows on the days, but the reservations of the
// appointments or holds in ignore.
func (r *dayRead) fill(rows []store.ScheduleRow, ignore []string) ([]DayInput, error) {
	for i := range rows {
		if err := r.add(&rows[i], ignore); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// add puts a schedule row on the days it touches, but the reservation of
// an appointment or hold in ignore. It keeps nothing row points to.
func (r *dayRead) add(row *store.ScheduleRow, ignore []string) error {
	out, dates, spans := r.out, r.dates, r.spans
	b := r.index[row.BarberID]
	switch row.Kind {
	case store.RowHours:
		work, breaks, err := domain.SpansOf(&ent.WorkingHours{ID: row.ID, BarberID: row.BarberID, OpensAt: row.OpensAt, ClosesAt: row.ClosesAt, Breaks: row.Breaks})
		if err != nil {
			return err
		}
		for i := range out {
			if int(dates[i].Weekday()) == row.Weekday {
				d := &out[i].Barbers[b]
				d.Hours = append(d.Hours, work)
				d.Breaks = append(d.Breaks, breaks...)
			}
		}
	case store.RowTimeOff:
		iv := slots.Interval{Start: row.StartsAt, End: row.EndsAt}
		for i := range out {
			if iv.Overlaps(spans[i]) {
				out[i].Barbers[b].TimeOff = append(out[i].Barbers[b].TimeOff, iv)
			}
		}
	case store.RowBookings:
		if r.bookings != nil {
			r.bookings[b] = row.Bookings
		}
	case store.RowReservation:
		if row.Of(ignore) {
			return nil
		}
		iv := slots.Interval{Start: row.StartsAt, End: row.EndsAt}
		for i := range out {
			if !iv.Overlaps(spans[i]) {
				continue
			}
			out[i].Barbers[b].Busy = append(out[i].Barbers[b].Busy, iv)
			if e := row.ExpiresAt; e != nil && (out[i].HoldsUntil.IsZero() || e.Before(out[i].HoldsUntil)) {
				out[i].HoldsUntil = *e
			}
		}
	}
	return nil
}

// Offers reports whether the day offers a slot at start with the barber.
func Offers(d slots.Day, barberID string, start time.Time) bool {
	for _, s := range slots.FreeSlots(d) {
		if s.BarberID == barberID && s.Start.Equal(start) {
			return true
		}
	}
	return false
}

// StartsPerDay bounds one barber's starts in a day: one every step.
func (o *Offer) StartsPerDay() int {
	step := max(o.Unit.SlotStepMinutes, 1)
	return (24*60 + step - 1) / step
}
