package slots

import (
	"cmp"
	"slices"
	"time"
)

// Nearest returns up to n slots of free nearest in time to t, by the distance
// of their start from t, earlier start first on a tie. The chosen slots come
// back sorted by start, then barber id, like FreeSlots. free may be in any
// order and is not modified.
func Nearest(free []Slot, t time.Time, n int) []Slot {
	if n <= 0 || len(free) == 0 {
		return nil
	}
	byDistance := slices.Clone(free)
	slices.SortFunc(byDistance, func(a, b Slot) int {
		if c := cmp.Compare(distance(a.Start, t), distance(b.Start, t)); c != 0 {
			return c
		}
		return compareSlots(a, b)
	})
	nearest := slices.Clip(byDistance[:min(n, len(byDistance))])
	slices.SortFunc(nearest, compareSlots)
	return nearest
}

func distance(a, b time.Time) time.Duration {
	if a.Before(b) {
		return b.Sub(a)
	}
	return a.Sub(b)
}
