package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/predicate"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// offer is what a booking request asks for, resolved against the catalog:
// a service at a unit, at an instant, with a barber or with any eligible one.
type offer struct {
	unit    *ent.Unit
	loc     *time.Location
	service *ent.Service
	barber  *ent.Barber // nil: any eligible barber
	// eligible are the eligible barbers, by name, when barber is nil
	// (never nil then, once resolveCatalog has listed them).
	eligible []*ent.Barber
	// holdsUntil is when the first hold that day() found blocking expires
	// (zero: none).
	holdsUntil time.Time
	start      time.Time
	date       slots.Date
}

func (o *offer) policy() slots.Policy {
	return slots.Policy{
		Step:        time.Duration(o.unit.SlotStepMinutes) * time.Minute,
		MinLead:     time.Duration(o.unit.MinLeadMinutes) * time.Minute,
		HorizonDays: o.unit.HorizonDays,
	}
}

func (o *offer) duration() time.Duration {
	return time.Duration(o.service.DurationMinutes) * time.Minute
}

func (o *offer) buffer() time.Duration { return time.Duration(o.service.BufferMinutes) * time.Minute }

// resolveCatalog finds the unit, the service and (when given) the barber of
// a request and checks that they go together; asked for any barber, it also
// lists the eligible ones. Answers come from the catalog cache while the
// account's configuration is unchanged (cache.go).
// Errors: unit_not_found, service_not_found, barber_not_found,
// service_not_bookable, barber_not_eligible.
func (r *Resolver) resolveCatalog(ctx context.Context, unitID, serviceID string, barberID *string) (*offer, error) {
	v, ok := ViewerFrom(ctx)
	var key catalogKey
	if ok {
		key = newCatalogKey(v.AccountID, unitID, serviceID, barberID)
		if o, hit := r.cache.cachedCatalog(v, key); hit {
			return o, nil
		}
	}
	o, err := lookupCatalog(ctx, r.cfg.DB.Client, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if barberID == nil {
		if o.eligible, err = o.candidates(ctx, r.cfg.DB.Client); err != nil {
			return nil, err
		}
	}
	if ok && v.versioned {
		r.cache.catalogs.Put(key, &catalogEntry{config: v.configVersion, offer: *o})
	}
	return o, nil
}

// lookupCatalog is resolveCatalog reading the database.
func lookupCatalog(ctx context.Context, c *ent.Client, unitID, serviceID string, barberID *string) (*offer, error) {
	u, err := activeUnit(ctx, c, unitID)
	if err != nil {
		return nil, err
	}
	loc, err := mustZone(u.Timezone)
	if err != nil {
		return nil, err
	}
	// The happy path costs one query per entity; telling why one does not
	// fit costs another, only then.
	s, err := c.Service.Query().Where(service.ID(serviceID), service.HasUnitsWith(unit.ID(u.ID))).Only(ctx)
	if ent.IsNotFound(err) {
		if s, err = findService(ctx, c, serviceID); err == nil {
			err = Errorf(CodeServiceNotBookable, "The service %q is not offered at %s.", s.Name, u.Name)
		}
	}
	if err != nil {
		return nil, err
	}
	if !s.Active || !s.BookableOnline {
		return nil, Errorf(CodeServiceNotBookable, "The service %q cannot be booked online.", s.Name)
	}
	o := &offer{unit: u, loc: loc, service: s}
	if barberID != nil {
		b, err := c.Barber.Query().Where(barber.ID(*barberID), eligibleBarbers(u.ID, s.ID)).Only(ctx)
		if ent.IsNotFound(err) {
			if b, err = findBarber(ctx, c, *barberID); err == nil {
				err = Errorf(CodeBarberNotEligible, "%s does not perform %q at %s.", b.Name, s.Name, u.Name)
			}
		}
		if err != nil {
			return nil, err
		}
		o.barber = b
	}
	return o, nil
}

// eligibleBarbers selects the active barbers who work at a unit and perform
// a service.
func eligibleBarbers(unitID, serviceID string) predicate.Barber {
	return barber.And(barber.Active(true), barber.HasUnitsWith(unit.ID(unitID)), barber.HasServicesWith(service.ID(serviceID)))
}

// offerAt resolves what a booking request names: its unit, service and
// barber, and its local start time.
// Errors: those of resolveCatalog and offer.at.
func (r *Resolver) offerAt(ctx context.Context, unitID, serviceID string, barberID *string, startsAt string) (*offer, error) {
	o, err := r.resolveCatalog(ctx, unitID, serviceID, barberID)
	if err != nil {
		return nil, err
	}
	if err := o.at(startsAt); err != nil {
		return nil, err
	}
	return o, nil
}

// at resolves the requested local start time of the offer.
// Errors: invalid_local_time (a wall time skipped by a daylight saving change).
func (o *offer) at(startsAt string) error {
	w, err := slots.ParseWallTime(startsAt)
	if err != nil {
		return (&Problems{{Field: "starts_at", Message: wallTimeForm}}).Err()
	}
	start, err := w.In(o.loc)
	if err != nil {
		return Errorf(CodeInvalidLocalTime, "%s does not exist in %s: the clocks skip it for daylight saving time.", startsAt, o.unit.Timezone)
	}
	o.start, o.date = start.UTC(), w.Date
	return nil
}

// candidates returns the barbers the offer may be booked with: the one asked
// for, or every eligible barber (as resolveCatalog listed them, when it did).
func (o *offer) candidates(ctx context.Context, c *ent.Client) ([]*ent.Barber, error) {
	if o.barber != nil {
		return []*ent.Barber{o.barber}, nil
	}
	if o.eligible != nil {
		return o.eligible, nil
	}
	return c.Barber.Query().Where(eligibleBarbers(o.unit.ID, o.service.ID)).Order(barber.ByName(), barber.ByID()).All(ctx)
}

// day loads everything the slot engine needs to compute the offer's day for
// the given barbers: their hours and breaks at the unit, their time off, and
// the reservations that block them (but those of the appointment or hold
// being moved, listed in ignore), from c, a database of dialect dia. It
// sets o.holdsUntil.
func (o *offer) day(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, ignore ...string) (slots.Day, error) {
	ds, err := o.days(ctx, c, dia, now, barbers, []slots.Date{o.date}, ignore...)
	if err != nil {
		return slots.Day{}, err
	}
	o.holdsUntil = ds[0].holdsUntil
	return ds[0].Day, nil
}

// dayInput is a day as the slot engine takes it, and when the first hold
// blocking it expires (zero: none).
type dayInput struct {
	slots.Day
	holdsUntil time.Time
}

// days is day for several dates (ascending) at once, read in one statement.
func (o *offer) days(ctx context.Context, c *ent.Client, dia string, now time.Time, barbers []*ent.Barber, dates []slots.Date, ignore ...string) ([]dayInput, error) {
	out := make([]dayInput, len(dates))
	for i, date := range dates {
		out[i].Day = slots.Day{
			Date: date, Location: o.loc, Now: now, Policy: o.policy(),
			Duration: o.duration(), Buffer: o.buffer(),
			Barbers: make([]slots.Barber, len(barbers)),
		}
		for j, b := range barbers {
			out[i].Barbers[j].ID = b.ID
		}
	}
	if len(barbers) == 0 || len(dates) == 0 {
		return out, nil
	}
	ids := make([]string, len(barbers))
	index := make(map[string]int, len(barbers))
	for i, b := range barbers {
		ids[i] = b.ID
		index[b.ID] = i
	}
	var weekdays []int
	for _, d := range dates {
		if w := int(d.Weekday()); !slices.Contains(weekdays, w) {
			weekdays = append(weekdays, w)
		}
	}
	// Anything that can touch a slot of a local day lies within a day and a
	// half either side of its midnight, whatever the zone's offset.
	spans := make([]slots.Interval, len(dates))
	for i, d := range dates {
		midnight := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, o.loc).UTC()
		spans[i] = slots.Interval{Start: midnight.Add(-36 * time.Hour), End: midnight.Add(60 * time.Hour)}
	}
	// Hours, time off and reservations in one statement.
	rows, err := store.ScheduleRows(ctx, c, dia, o.unit.ID, ids, weekdays, spans[0].Start, spans[len(spans)-1].End, now)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		b := index[row.BarberID]
		switch row.Kind {
		case store.RowHours:
			work, breaks, err := spansOf(&ent.WorkingHours{ID: row.ID, BarberID: row.BarberID, OpensAt: row.OpensAt, ClosesAt: row.ClosesAt, Breaks: row.Breaks})
			if err != nil {
				return nil, err
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
		case store.RowReservation:
			if row.Of(ignore) {
				continue
			}
			iv := slots.Interval{Start: row.StartsAt, End: row.EndsAt}
			for i := range out {
				if !iv.Overlaps(spans[i]) {
					continue
				}
				out[i].Barbers[b].Busy = append(out[i].Barbers[b].Busy, iv)
				if e := row.ExpiresAt; e != nil && (out[i].holdsUntil.IsZero() || e.Before(out[i].holdsUntil)) {
					out[i].holdsUntil = *e
				}
			}
		}
	}
	return out, nil
}

// spansOf reads a working-hours row into wall-clock spans.
func spansOf(h *ent.WorkingHours) (slots.Span, []slots.Span, error) {
	work, err := parseSpan(h.OpensAt, h.ClosesAt)
	if err != nil {
		return work, nil, fmt.Errorf("working hours %s: %w", h.ID, err)
	}
	breaks := make([]slots.Span, 0, len(h.Breaks))
	for _, b := range h.Breaks {
		from, to, _ := strings.Cut(b, "-")
		s, err := parseSpan(from, to)
		if err != nil {
			return work, nil, fmt.Errorf("working hours %s: break: %w", h.ID, err)
		}
		breaks = append(breaks, s)
	}
	return work, breaks, nil
}

func parseSpan(from, to string) (slots.Span, error) {
	f, err := slots.ParseClock(strings.TrimSpace(from))
	if err != nil {
		return slots.Span{}, err
	}
	t, err := slots.ParseClock(strings.TrimSpace(to))
	if err != nil {
		return slots.Span{}, err
	}
	if t <= f {
		return slots.Span{}, fmt.Errorf("%s-%s: end before start", from, to)
	}
	return slots.Span{From: f, To: t}, nil
}

// lockBarber serialises writers of one barber's time until the transaction
// ends. On SQLite every write transaction already holds the database's write
// lock from its start.
func (r *Resolver) lockBarber(ctx context.Context, tx *ent.Tx, id string) error {
	if r.cfg.DB.Dialect != dialect.Postgres {
		return nil
	}
	_, err := tx.Barber.Query().Where(barber.ID(id)).ForUpdate().OnlyID(ctx)
	return err
}

// offers reports whether the day offers a slot at start with the barber.
func offers(d slots.Day, barberID string, start time.Time) bool {
	for _, s := range slots.FreeSlots(d) {
		if s.BarberID == barberID && s.Start.Equal(start) {
			return true
		}
	}
	return false
}
