package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"barberd/ent"
	"barberd/ent/timeoff"
	"barberd/ent/unit"
	"barberd/ent/workinghours"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/slots"
)

// workingDay is one validated weekday of a barber's week at a unit.
type workingDay struct {
	field   string // "days[i]", for errors
	weekday int
	hours   slots.Span
	breaks  []slots.Span // sorted
}

func (d workingDay) breakStrings() []string {
	out := make([]string, len(d.breaks))
	for i, b := range d.breaks {
		out[i] = b.String()
	}
	return out
}

// parseClockField parses an "HH:MM" input field, recording a problem when
// it is not one.
func parseClockField(p *domain.Problems, field, v string) (slots.Clock, bool) {
	c, err := slots.ParseClock(v)
	if err != nil {
		p.Add(field, "must be a wall-clock time HH:MM from 00:00 to 24:00")
		return 0, false
	}
	return c, true
}

// parseWeek checks a week of working hours: weekdays 0..6 each at most
// once, HH:MM times, opening before closing, breaks inside the hours and
// apart from each other.
func parseWeek(days []*model.WorkingDayInput) ([]workingDay, domain.Problems) {
	var p domain.Problems
	week := make([]workingDay, 0, len(days))
	seen := map[int]bool{}
	for i, in := range days {
		d := workingDay{field: fmt.Sprintf("days[%d]", i), weekday: in.Weekday}
		ok := true
		switch {
		case in.Weekday < 0 || in.Weekday > 6:
			p.Add(d.field+".weekday", "must be 0 (Sunday) to 6 (Saturday)")
			ok = false
		case seen[in.Weekday]:
			p.Add(d.field+".weekday", "repeats weekday %d: give each weekday once", in.Weekday)
			ok = false
		}
		seen[in.Weekday] = true
		opens, ok1 := parseClockField(&p, d.field+".opensAt", in.OpensAt)
		closes, ok2 := parseClockField(&p, d.field+".closesAt", in.ClosesAt)
		if ok1 && ok2 && closes <= opens {
			p.Add(d.field+".closesAt", "must be after opensAt")
			ok2 = false
		}
		d.hours = slots.Span{From: opens, To: closes}
		for j, b := range in.Breaks {
			field := fmt.Sprintf("%s.breaks[%d]", d.field, j)
			from, okf := parseClockField(&p, field+".from", b.From)
			to, okt := parseClockField(&p, field+".to", b.To)
			if !okf || !okt {
				ok = false
				continue
			}
			s := slots.Span{From: from, To: to}
			switch {
			case to <= from:
				p.Add(field+".to", "must be after from")
			case ok1 && ok2 && (from < opens || to > closes):
				p.Add(field, "must lie inside the working hours %s", d.hours.String())
			default:
				for _, other := range d.breaks {
					if s.Overlaps(other) {
						p.Add(field, "overlaps the break %s", other.String())
						break
					}
				}
				d.breaks = append(d.breaks, s)
				continue
			}
			ok = false
		}
		if ok && ok1 && ok2 {
			slices.SortFunc(d.breaks, func(a, b slots.Span) int { return int(a.From - b.From) })
			week = append(week, d)
		}
	}
	return week, p
}

// SetWorkingHours replaces a barber's week at a unit: weekdays not given
// become days off there. The barber must work at the unit, and their hours
// there must not overlap their hours at another unit on the same weekday
// (compared as wall-clock times: a barber's units share a city).
// Appointments already booked are kept.
// Errors: validation_failed, barber_not_found, unit_not_found.
func (a *Admin) SetWorkingHours(ctx context.Context, in model.SetWorkingHoursInput) ([]*ent.WorkingHours, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	week, p := parseWeek(in.Days)
	if err := p.Err(); err != nil {
		return nil, err
	}
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		b, err := domain.FindBarber(ctx, tx.Client(), in.BarberID)
		if err != nil {
			return err
		}
		// Two weeks of one barber set at once, at two units, must see each other.
		if err := a.db.LockBarber(ctx, tx, b.ID); err != nil {
			return err
		}
		u, err := domain.FindUnit(ctx, tx.Client(), in.UnitID)
		if err != nil {
			return err
		}
		works, err := b.QueryUnits().Where(unit.ID(u.ID)).Exist(ctx)
		if err != nil {
			return err
		}
		if !works {
			return (&domain.Problems{{Field: "unitId", Message: "the barber does not work at this unit: add it to the barber's units first"}}).Err()
		}
		elsewhere, err := tx.WorkingHours.Query().
			Where(workinghours.BarberID(b.ID), workinghours.UnitIDNEQ(u.ID)).WithUnit().All(ctx)
		if err != nil {
			return err
		}
		if err := clashes(week, elsewhere).Err(); err != nil {
			return err
		}
		_, err = tx.WorkingHours.Delete().
			Where(workinghours.AccountID(v.AccountID), workinghours.BarberID(b.ID), workinghours.UnitID(u.ID)).Exec(ctx)
		if err != nil {
			return err
		}
		rows := make([]*ent.WorkingHoursCreate, len(week))
		for i, d := range week {
			rows[i] = tx.WorkingHours.Create().SetAccountID(v.AccountID).SetBarberID(b.ID).SetUnitID(u.ID).
				SetWeekday(d.weekday).SetOpensAt(d.hours.From.String()).SetClosesAt(d.hours.To.String()).
				SetBreaks(d.breakStrings())
		}
		if err := tx.WorkingHours.CreateBulk(rows...).Exec(ctx); err != nil {
			return err
		}
		// Hours widened free time the waitlist may want.
		return a.booking.OpenedHorizon(ctx, tx, v.AccountID, b.ID)
	})
	if err != nil {
		return nil, err
	}
	hours, err := a.db.WorkingHours.Query().
		Where(workinghours.BarberID(in.BarberID), workinghours.UnitID(in.UnitID)).
		Order(workinghours.ByWeekday()).All(ctx)
	return hours, err
}

// clashes names each day of week that overlaps the barber's hours at
// another unit on the same weekday.
func clashes(week []workingDay, elsewhere []*ent.WorkingHours) domain.Problems {
	var p domain.Problems
	for _, d := range week {
		for _, h := range elsewhere {
			if h.Weekday != d.weekday {
				continue
			}
			other, _, err := domain.SpansOf(h)
			if err == nil && d.hours.Overlaps(other) {
				p.Add(d.field, "overlaps the barber's hours %s at %s on %s", other.String(), h.Edges.Unit.Name, time.Weekday(d.weekday))
			}
		}
	}
	return p
}

// AddTimeOff records a span in which a barber takes no clients.
// Appointments already booked in it are kept.
// Errors: validation_failed, barber_not_found, catalog_full.
func (a *Admin) AddTimeOff(ctx context.Context, in model.AddTimeOffInput) (*ent.TimeOff, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	var p domain.Problems
	start, end := in.StartsAt.UTC().Truncate(time.Microsecond), in.EndsAt.UTC().Truncate(time.Microsecond)
	if !end.After(start) {
		p.Add("endsAt", "must be after startsAt")
	}
	reason := ""
	if in.Reason != nil {
		reason = strings.TrimSpace(*in.Reason)
		if utf8.RuneCountInString(reason) > 500 {
			p.Add("reason", "must be at most 500 characters")
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	var t *ent.TimeOff
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		b, err := domain.FindBarber(ctx, tx.Client(), in.BarberID)
		if err != nil {
			return err
		}
		if err := a.checkTimeOffRoom(ctx, tx, b); err != nil {
			return err
		}
		t, err = tx.TimeOff.Create().SetAccountID(v.AccountID).SetBarberID(b.ID).
			SetStartsAt(start).SetEndsAt(end).SetReason(reason).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return t.Unwrap(), nil
}

// RemoveTimeOff deletes a time off and returns its id.
// Errors: not_found.
func (a *Admin) RemoveTimeOff(ctx context.Context, id string) (string, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return "", err
	}
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		// Read through the tenant filter first: deletes do not pass it.
		t, err := tx.TimeOff.Query().Where(timeoff.ID(id)).Only(ctx)
		if err != nil {
			return domain.NotFound(err, domain.CodeNotFound, "time off", id)
		}
		if err := tx.TimeOff.DeleteOne(t).Exec(ctx); err != nil {
			return err
		}
		return a.booking.Opened(ctx, tx, t.AccountID, t.BarberID, t.StartsAt, t.EndsAt)
	})
	if err != nil {
		return "", err
	}
	return id, nil
}
