package slots

import (
	"slices"
	"time"
)

// Span is a wall-clock range within a day, [From, To).
type Span struct {
	From, To Clock
}

// workingSpans is hours minus breaks, clipped to the day, merged and sorted.
// Adjacent spans merge, so the slot grid runs on across a seam in the rota
// (09:00-12:00 plus 12:00-15:00 is one span from 09:00).
func workingSpans(hours, breaks []Span) []Span {
	work := mergeSpans(hours)
	for _, b := range mergeSpans(breaks) {
		var next []Span
		for _, w := range work {
			if b.To <= w.From || w.To <= b.From {
				next = append(next, w)
				continue
			}
			if w.From < b.From {
				next = append(next, Span{w.From, b.From})
			}
			if b.To < w.To {
				next = append(next, Span{b.To, w.To})
			}
		}
		work = next
	}
	return work
}

func mergeSpans(in []Span) []Span {
	var spans []Span
	for _, s := range in {
		s.From, s.To = max(s.From, 0), min(s.To, EndOfDay)
		if s.From < s.To {
			spans = append(spans, s)
		}
	}
	slices.SortFunc(spans, func(a, b Span) int { return int(a.From - b.From) })
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && s.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, s.To)
			continue
		}
		out = append(out, s)
	}
	return out
}

// wallAt is the wall time at c on day d; 24:00 is midnight of the next day.
func wallAt(d Date, c Clock) WallTime {
	if c >= EndOfDay {
		return WallTime{Date: d.AddDays(1)}
	}
	return WallTime{Date: d, Hour: int(c) / 60, Minute: int(c) % 60}
}

// bounds resolves a working span to instants. Every bound takes the first
// occurrence of an ambiguous wall time, and a bound inside a spring-forward
// gap moves to where the gap ends. One rule for both ends keeps shifts that
// straddle a change easy to predict; the price is that a shift ending at
// 01:30 on a fall-back night ends at the first 01:30.
func (s Span) bounds(d Date, loc *time.Location) Interval {
	return Interval{
		Start: wallAt(d, s.From).atOrAfterGap(loc),
		End:   wallAt(d, s.To).atOrAfterGap(loc),
	}
}

// WorkingSpans is hours minus breaks, merged and sorted: the spans whose
// wall-clock grids FreeSlots offers starts on.
func WorkingSpans(hours, breaks []Span) []Span { return workingSpans(hours, breaks) }

// CountStarts is how many slot starts working spans (WorkingSpans) hold
// with a start at a wall-clock time of day in [from, to) and a service of
// duration ending within its span, on the wall clock: what FreeSlots can
// offer one barber on a day without time off, bookings or daylight saving
// change (such a change moves it by an hour's worth).
func CountStarts(spans []Span, step, duration time.Duration, from, to Clock) int {
	st, dur := int(step/time.Second), int(duration/time.Second)
	if st <= 0 || dur <= 0 {
		return 0
	}
	n := 0
	for _, s := range spans {
		first, last := int(s.From)*60, int(s.To)*60-dur // seconds since midnight
		lo, hi := max(first, int(from)*60), min(last, int(to)*60-1)
		if lo > hi {
			continue
		}
		// Starts are first + k*st; count k with lo <= first + k*st <= hi.
		kLo := (lo - first + st - 1) / st
		kHi := (hi - first) / st
		if kHi >= kLo {
			n += kHi - kLo + 1
		}
	}
	return n
}

// A Week is the working spans of a unit's barbers by weekday (Sunday 0),
// with a service's step and duration: what a day's slots can be at most.
type Week struct {
	Step, Duration time.Duration
	Barbers        map[string]*[7][]Span // working spans (WorkingSpans)
	All            [7]int                // every barber's starts, each weekday
}

// Starts is how many slots barberID (nil: every barber) can be offered on
// a weekday with a start in [from, to) local time. slack counts starts
// whose service would end up to an hour past their span, which a day that
// falls back an hour may offer.
func (w *Week) Starts(barberID *string, weekday int, from, to Clock, slack bool) int {
	d := w.Duration
	if slack {
		d = max(d-time.Hour, time.Second)
	}
	if barberID != nil {
		if week, ok := w.Barbers[*barberID]; ok {
			return CountStarts(week[weekday], w.Step, d, from, to)
		}
		return 0
	}
	n := 0
	for _, week := range w.Barbers {
		n += CountStarts(week[weekday], w.Step, d, from, to)
	}
	return n
}
