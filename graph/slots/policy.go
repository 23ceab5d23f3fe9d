package slots

import (
	"errors"
	"time"
)

// Policy is a unit's booking policy.
type Policy struct {
	Step        time.Duration // slots start every Step (wall clock) from the start of each working span
	MinLead     time.Duration // earliest bookable start is now + MinLead
	HorizonDays int           // last bookable local day is today (in the unit's zone) + HorizonDays
}

// Window errors: which rule of the booking window a requested start breaks.
var (
	ErrInPast        = errors.New("slots: start is in the past")
	ErrTooSoon       = errors.New("slots: start is sooner than the minimum lead time")
	ErrBeyondHorizon = errors.New("slots: start is beyond the booking horizon")
)

// Admits reports whether a booking starting at instant start is inside the
// booking window at instant now, for a unit in loc. It returns nil or the
// first broken rule among ErrInPast, ErrTooSoon and ErrBeyondHorizon.
//
// Lead time is elapsed time; the horizon counts calendar days in the unit's
// zone, because "book up to 30 days ahead" means days on the shop's wall
// calendar, not multiples of 24 hours.
func (p Policy) Admits(now, start time.Time, loc *time.Location) error {
	switch {
	case start.Before(now):
		return ErrInPast
	case start.Before(now.Add(p.MinLead)):
		return ErrTooSoon
	case DateOf(start, loc).Compare(p.lastDay(now, loc)) > 0:
		return ErrBeyondHorizon
	}
	return nil
}

func (p Policy) lastDay(now time.Time, loc *time.Location) Date {
	return DateOf(now, loc).AddDays(p.HorizonDays)
}
