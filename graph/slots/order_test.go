package slots_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/graph/slots"
)

// FreeSlots orders a day of many barbers by start, then barber id, whatever
// the order of the barbers, their grids (spans starting off each other's
// grid) and their bookings: the same slots each barber has alone, merged.
func TestFreeSlotsOrder(t *testing.T) {
	loc := mustLoad(t, "Europe/Lisbon")
	date := mustDate(t, "2026-06-15")
	rng := rand.New(rand.NewPCG(3, 4))
	total := 0
	for round := range 300 {
		day := slots.Day{
			Date: date, Location: loc, Now: at(t, loc, "2026-06-15T06:00:00"),
			Policy:   slots.Policy{Step: time.Duration(5+5*rng.IntN(3)) * time.Minute, HorizonDays: 30},
			Duration: 30 * time.Minute, Buffer: time.Duration(rng.IntN(2)) * 5 * time.Minute,
		}
		var want []slots.Slot
		for range rng.IntN(14) {
			open := 8*60 + rng.IntN(8)*7 // minutes: grids off one another
			b := slots.Barber{
				ID:     fmt.Sprintf("brb_%d", rng.IntN(40)), // ids repeat now and then
				Hours:  []slots.Span{{From: slots.Clock(open), To: slots.Clock(open + 60*(2+rng.IntN(9)))}},
				Breaks: []slots.Span{{From: slots.Clock(12*60 + rng.IntN(4)*15), To: slots.Clock(13 * 60)}},
			}
			for range rng.IntN(6) {
				start := at(t, loc, "2026-06-15T08:00:00").Add(time.Duration(rng.IntN(600)) * time.Minute)
				b.Busy = append(b.Busy, slots.Interval{Start: start, End: start.Add(time.Duration(10+rng.IntN(50)) * time.Minute)})
			}
			alone := day
			alone.Barbers = []slots.Barber{b}
			want = append(want, slots.FreeSlots(alone)...)
			day.Barbers = append(day.Barbers, b)
		}
		slices.SortStableFunc(want, func(a, b slots.Slot) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return strings.Compare(a.BarberID, b.BarberID)
		})
		got := slots.FreeSlots(day)
		if !slices.EqualFunc(got, want, func(a, b slots.Slot) bool {
			return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.BarberID == b.BarberID
		}) {
			t.Fatalf("round %d: got %d slots %v, want %d %v", round, len(got), got, len(want), want)
		}
		total += len(got)
		f := slots.FreeStarts(day)
		for i, s := range f.Starts {
			if !f.Start(s).Equal(got[i].Start) || day.Barbers[s.Barber].ID != got[i].BarberID {
				t.Fatalf("round %d: FreeStarts[%d] = %v %s, FreeSlots has %v", round, i, f.Start(s), day.Barbers[s.Barber].ID, got[i])
			}
		}
	}
	if total < 10_000 {
		t.Fatalf("%d slots in all: the days are too busy to test an order", total)
	}
}
