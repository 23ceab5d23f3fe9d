package slots_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"barberd/graph/slots"
)

// CountStarts agrees with FreeSlots on a day without a daylight saving
// change, bookings or time off, for any hours, breaks, step, duration and
// daily window.
func TestCountStarts(t *testing.T) {
	loc := mustLoad(t, "Europe/Lisbon")
	date := mustDate(t, "2027-03-03")
	now := at(t, loc, "2027-03-02T00:00:00")
	rng := rand.New(rand.NewPCG(23, 1))
	clock := func() slots.Clock { return slots.Clock(rng.IntN(289) * 5) }
	spanOf := func() slots.Span {
		a, b := clock(), clock()
		return slots.Span{From: min(a, b), To: max(a, b)}
	}
	for i := range 2000 {
		var hours, breaks []slots.Span
		for range 1 + rng.IntN(2) {
			hours = append(hours, spanOf())
		}
		for range rng.IntN(3) {
			breaks = append(breaks, spanOf())
		}
		step := time.Duration(5*(1+rng.IntN(12))) * time.Minute
		duration := time.Duration(5*(1+rng.IntN(24))) * time.Minute
		w := spanOf()
		free := slots.FreeSlots(slots.Day{
			Date: date, Location: loc, Now: now, Policy: slots.Policy{Step: step, HorizonDays: 10},
			Duration: duration, Barbers: []slots.Barber{{ID: "b", Hours: hours, Breaks: breaks}},
		})
		want := 0
		for _, s := range free {
			l := s.Start.In(loc)
			if c := slots.Clock(l.Hour()*60 + l.Minute()); w.From <= c && c < w.To {
				want++
			}
		}
		if got := slots.CountStarts(slots.WorkingSpans(hours, breaks), step, duration, w.From, w.To); got != want {
			t.Fatalf("case %d: hours %v breaks %v step %v duration %v window %v: %d starts, FreeSlots offers %d", i, hours, breaks, step, duration, w, got, want)
		}
	}
}
