package graph

import (
	"context"
	"slices"
	"time"

	"barberd/ent"
	"barberd/graph/domain"
	"barberd/graph/slots"
	"barberd/graph/store"
)

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
			work, breaks, err := domain.SpansOf(&ent.WorkingHours{ID: row.ID, BarberID: row.BarberID, OpensAt: row.OpensAt, ClosesAt: row.ClosesAt, Breaks: row.Breaks})
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

// lockBarber serialises writers of one barber's time until the transaction
// ends (store.DB.LockBarber).
func (r *Resolver) lockBarber(ctx context.Context, tx *ent.Tx, id string) error {
	return r.cfg.DB.LockBarber(ctx, tx, id)
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
