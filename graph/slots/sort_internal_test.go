package slots

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sortSlots orders any slots as sorting by compareSlots does.
func TestSortSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC)
	for round := range 500 {
		n := rng.IntN(60)
		var ss []Slot
		for range n {
			start := base.Add(time.Duration(rng.IntN(12)) * 15 * time.Minute)
			ss = append(ss, Slot{Start: start, End: start.Add(30 * time.Minute), BarberID: fmt.Sprintf("brb_%d", rng.IntN(8))})
		}
		want := slices.Clone(ss)
		slices.SortStableFunc(want, compareSlots)
		if got := sortSlots(ss); !slices.Equal(got, want) {
			t.Fatalf("round %d: got %v, want %v", round, got, want)
		}
	}
}
