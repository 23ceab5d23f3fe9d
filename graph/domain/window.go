package domain

// The windows of availability over several days: a range of days, and the
// next free times in a daily window and on some weekdays.

import (
	"barberd/graph/slots"
)

// MaxRangeDays is the most days one range covers, from and to included.
const MaxRangeDays = 31

// Bounds of a next free times search.
const (
	DefaultNextLimit = 3
	MaxNextLimit     = 20
)

// CheckAvailabilityRange checks a range request: from and to are dates, to
// not before from, at most MaxRangeDays days in all.
func CheckAvailabilityRange(unitID, serviceID string, barberID *string, from, to string) Problems {
	var p Problems
	Required(&p, "unit_id", unitID)
	Required(&p, "service_id", serviceID)
	CheckOptionalID(&p, "barber_id", barberID)
	f, t := RequiredDate(&p, "from", from), RequiredDate(&p, "to", to)
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

// NextSearch is a checked NextSlotsQuery.
type NextSearch struct {
	After    *slots.WallTime
	Limit    int
	From, To int // seconds since local midnight
	Weekdays [8]bool
}

// CheckNextSlots checks a next free times request.
func CheckNextSlots(q NextSlotsQuery) Problems {
	_, p := NextSearchOf(q)
	return p
}

// NextSearchOf checks q and returns it checked.
func NextSearchOf(q NextSlotsQuery) (NextSearch, Problems) {
	var p Problems
	s := NextSearch{Limit: DefaultNextLimit, To: int(slots.EndOfDay) * 60}
	Required(&p, "unit_id", q.UnitID)
	Required(&p, "service_id", q.ServiceID)
	CheckOptionalID(&p, "barber_id", q.BarberID)
	if q.After != nil && Required(&p, "after", *q.After) {
		if w, err := slots.ParseWallTime(*q.After); err != nil {
			p.Add("after", WallTimeForm)
		} else {
			s.After = &w
		}
	}
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit > MaxNextLimit {
			p.Add("limit", "must be between 1 and %d", MaxNextLimit)
		}
		s.Limit = *q.Limit
	}
	clock := func(field string, v *string, into *int) bool {
		if v == nil || !CheckText(&p, field, *v) {
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
	fromOK, toOK := clock("time_from", q.TimeFrom, &s.From), clock("time_to", q.TimeTo, &s.To)
	if fromOK && toOK && s.To <= s.From {
		p.Add("time_to", "must be after time_from")
	}
	for _, d := range q.Weekdays {
		if d < 1 || d > 7 {
			p.Add("weekdays", "must be ISO weekdays, 1 (Monday) to 7 (Sunday)")
			break
		}
		s.Weekdays[d] = true
	}
	if len(q.Weekdays) == 0 {
		for d := range s.Weekdays {
			s.Weekdays[d] = true
		}
	}
	return s, p
}

// ISOWeekday is the ISO number of d's weekday: 1 Monday .. 7 Sunday.
func ISOWeekday(d slots.Date) int { return (int(d.Weekday())+6)%7 + 1 }
