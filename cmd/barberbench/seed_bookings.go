package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"barberd/ent/schema/pulid"
)

// seedCustomer is a customer record, whose client each of its appointments
// records as booked.
type seedCustomer struct {
	id, name, phone string
	email           any // a string, or nil
}

// barberDay is one working day of one barber.
type barberDay struct {
	unit   *seedUnit
	barber *seedBarber
	day    time.Time // local midnight
	shift  *shift
}

// workingDays lists the barbers' working days from `from` to `to` days
// after today (inclusive), without their time off.
func (s *seeder) workingDays(from, to int) []barberDay {
	var out []barberDay
	for _, u := range s.units {
		for d := from; d <= to; d++ {
			day := s.localDay(u.loc, d)
			for _, b := range u.barbers {
				sh := b.week[day.Weekday()]
				if sh == nil || (!day.Before(b.offFrom) && day.Before(b.offTo)) || day.Equal(b.futureOff) {
					continue
				}
				out = append(out, barberDay{u, b, day, sh})
			}
		}
	}
	return out
}

// pickService draws a bookable service of the barber, weighted by popularity.
func (s *seeder) pickService(b *seedBarber) int {
	total := 0
	for _, k := range b.services {
		total += seedServices[k].weight
	}
	r := s.rng.IntN(total)
	for _, k := range b.services {
		if r -= seedServices[k].weight; r < 0 {
			return k
		}
	}
	return b.services[0]
}

// booking is one appointment placed in a barber's day.
type booking struct {
	service    int
	start, end time.Time // end without buffer
	overflow   bool      // placed over an earlier booking of the day (history denser than the hours allow)
}

// fillAll books a working day whole: the barber's shortest service, one
// after another on the unit's slot grid, from each opening to its break or
// closing (the last booking may run past it), so no start is left for any
// service, and cancelling one booking frees a start of it (the waitlist
// scenario).
func (s *seeder) fillAll(bd barberDay) []booking {
	k := bd.barber.services[0]
	for _, c := range bd.barber.services {
		if seedServices[c].minutes < seedServices[k].minutes {
			k = c
		}
	}
	sv := seedServices[k]
	step := (sv.minutes + sv.buf + seedSlotStep - 1) / seedSlotStep * seedSlotStep
	sh := bd.shift
	var out []booking
	from := sh.open
	for _, until := range append(slices.Clone(sh.breaks), [2]int{sh.close, sh.close}) {
		for t := from; t < until[0]; t += step {
			start := time.Date(bd.day.Year(), bd.day.Month(), bd.day.Day(), t/60, t%60, 0, 0, bd.unit.loc)
			out = append(out, booking{k, start.UTC(), start.Add(time.Duration(sv.minutes) * time.Minute).UTC(), false})
		}
		from = until[1]
	}
	return out
}

// fill places n bookings one after another through a working day, leaving
// gaps when the day has room, skipping breaks. Past the end of the day it
// starts again at opening (overflow), unless stopAtClose.
func (s *seeder) fill(bd barberDay, n int, stopAtClose bool) []booking {
	sh := bd.shift
	work := sh.close - sh.open
	for _, br := range sh.breaks {
		work -= br[1] - br[0]
	}
	// Gaps spread the day's spare time; 65 minutes is the longest booking
	// with its buffer, also the most a break can waste.
	gap := 0
	if n > 0 {
		gap = max(0, (work-n*65-65*len(sh.breaks))/n)
	}
	out := make([]booking, 0, n)
	t, overflow := sh.open, false
	for len(out) < n {
		k := s.pickService(bd.barber)
		sv := seedServices[k]
		if gap > 0 {
			t += 15 * s.rng.IntN(gap/15+1)
		}
		for _, br := range sh.breaks {
			if t < br[1] && br[0] < t+sv.minutes+sv.buf {
				t = br[1]
			}
		}
		if t+sv.minutes > sh.close {
			if stopAtClose {
				break
			}
			t, overflow = sh.open, true
			continue
		}
		start := time.Date(bd.day.Year(), bd.day.Month(), bd.day.Day(), t/60, t%60, 0, 0, bd.unit.loc)
		out = append(out, booking{k, start.UTC(), start.Add(time.Duration(sv.minutes) * time.Minute).UTC(), overflow})
		t += sv.minutes + sv.buf
	}
	return out
}

var appointmentCols = []string{"id", "created_at", "updated_at", "external_reference", "status", "starts_at", "ends_at",
	"source", "cancelled_at", "cancellation_reason", "reminded_at", "version", "account_id", "unit_id", "service_id",
	"barber_id", "customer_id", "client_name", "client_phone", "client_email", "api_key_id", "hold_id"}

// appointments writes the history, the future bookings and the
// reservations of every confirmed appointment, as barberd keeps them.
func (s *seeder) appointments(ctx context.Context) error {
	w, err := s.writer(ctx, "appointments", appointmentCols...)
	if err != nil {
		return err
	}
	type rsv struct {
		barberID, appointmentID string
		start, end              time.Time
	}
	var reservations []rsv
	write := func(bd barberDay, bk booking, status string, seq int) error {
		id := pulid.New("apt")
		sv := seedServices[bk.service]
		created := bk.start.Add(-time.Duration(1+s.rng.IntN(14*24)) * time.Hour)
		if created.After(s.now) {
			created = s.now.Add(-time.Duration(s.rng.IntN(3600)) * time.Second)
		}
		var ref, cancelledAt, reason, remindedAt any
		source := "api"
		if s.rng.IntN(5) == 0 {
			source = "admin"
		} else if s.rng.IntN(10) < 7 {
			ref = fmt.Sprintf("hist-%d", seq)
		}
		updated, version := created, 1
		switch status {
		case "cancelled":
			c := bk.start.Add(-time.Duration(1+s.rng.IntN(48)) * time.Hour)
			if c.Before(created) {
				c = created
			}
			cancelledAt, reason, updated, version = c, "Client asked to cancel", c, 2
		case "completed", "no_show":
			updated, version = bk.end, 2
			remindedAt = bk.start.Add(-24 * time.Hour)
		}
		if status == "confirmed" {
			reservations = append(reservations, rsv{bd.barber.id, id, bk.start, bk.end.Add(time.Duration(sv.buf) * time.Minute)})
		}
		cu := s.customers[s.rng.IntN(len(s.customers))]
		return w.add(id, created, updated, ref, status, bk.start, bk.end, source, cancelledAt, reason, remindedAt,
			version, s.accountID, bd.unit.id, bd.unit.services[bk.service], bd.barber.id,
			cu.id, cu.name, cu.phone, cu.email, s.keyID, nil)
	}

	seq := 0
	history := s.workingDays(-s.c.days, -1)
	if s.c.appointments > 0 && len(history) == 0 {
		return errors.New("no working day in the history window; raise --days")
	}
	overflowed := 0
	for i, bd := range history {
		// Spread N evenly over the barber-days.
		n := s.c.appointments*(i+1)/len(history) - s.c.appointments*i/len(history)
		recent := !bd.day.Before(s.localDay(bd.unit.loc, -2))
		for _, bk := range s.fill(bd, n, false) {
			r := s.rng.IntN(100)
			status := "completed"
			switch {
			case recent && !bk.overflow && r < 60:
				status = "confirmed" // not yet marked completed by the shop
			case r >= 82 && r < 94:
				status = "cancelled"
			case r >= 94:
				status = "no_show"
			}
			if bk.overflow {
				overflowed++
			}
			seq++
			if err := write(bd, bk, status, seq); err != nil {
				return err
			}
		}
	}
	s.res.Appointments = seq
	if overflowed > 0 {
		fmt.Fprintf(s.log, "barberbench seed: %d of %d history appointments overlap others of their barber's day (more history than the hours hold; raise --units or --days for a sparser one)\n", overflowed, seq)
	}
	future := 0
	for _, bd := range s.workingDays(0, s.c.fullDays-1) {
		for _, bk := range s.fillAll(bd) {
			seq++
			future++
			if err := write(bd, bk, "confirmed", seq); err != nil {
				return err
			}
		}
	}
	for _, bd := range s.workingDays(max(1, s.c.fullDays), s.c.futureDays) {
		sh := bd.shift
		capacity := float64(sh.close-sh.open) / 38
		n := int(capacity*s.c.futureFill + s.rng.Float64())
		for _, bk := range s.fill(bd, n, true) {
			seq++
			future++
			if err := write(bd, bk, "confirmed", seq); err != nil {
				return err
			}
		}
	}
	s.res.Future = future
	if err := s.done(w); err != nil {
		return err
	}
	rw, err := s.writer(ctx, "reservations", "id", "starts_at", "ends_at", "expires_at", "account_id", "barber_id", "hold_id", "appointment_id")
	if err != nil {
		return err
	}
	for _, r := range reservations {
		if err := rw.add(pulid.New("rsv"), r.start, r.end, nil, s.accountID, r.barberID, nil, r.appointmentID); err != nil {
			return err
		}
	}
	s.res.Reservations = len(reservations)
	return s.done(rw)
}
