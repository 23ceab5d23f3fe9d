package slots

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sortSlots orders any slots as sorting by compareSlots does: on a grid of
// whole seconds (packed keys), and off it.
func TestSortSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC)
	for round := range 500 {
		n := rng.IntN(60)
		var ss []Slot
		for range n {
			start := base.Add(time.Duration(rng.IntN(12)) * 15 * time.Minute)
			if round%2 == 1 {
				start = start.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			}
			ss = append(ss, Slot{Start: start, End: start.Add(30 * time.Minute), BarberID: fmt.Sprintf("brb_%d", rng.IntN(8))})
		}
		want := slices.Clone(ss)
		slices.SortStableFunc(want, compareSlots)
		if got := sortSlots(ss); !slices.Equal(got, want) {
			t.Fatalf("round %d: got %v, want %v", round, got, want)
		}
	}
}

// BenchmarkSortSlots sorts a free day of 12 barbers on a 5-minute grid
// (1,080 slots), as a large unit's every-barber answer has them.
func BenchmarkSortSlots(b *testing.B) {
	base := time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC)
	var ss []Slot
	for barber := range 12 {
		for k := range 90 {
			start := base.Add(time.Duration(k) * 5 * time.Minute)
			ss = append(ss, Slot{Start: start, End: start.Add(30 * time.Minute), BarberID: fmt.Sprintf("brb_%02d", barber)})
		}
	}
	work := make([]Slot, len(ss))
	b.ReportAllocs()
	for b.Loop() {
		copy(work, ss)
		sortSlots(work)
	}
}
