package slots

import (
	"slices"
	"time"
)

// Interval is a half-open span of instants [Start, End).
type Interval struct {
	Start, End time.Time
}

// Overlaps reports whether a and b share an instant. Intervals are half-open,
// so back-to-back bookings (one ends at 10:00, the next starts at 10:00) do
// not overlap, and an empty interval overlaps nothing.
func (a Interval) Overlaps(b Interval) bool {
	return a.Start.Before(a.End) && b.Start.Before(b.End) &&
		a.Start.Before(b.End) && b.Start.Before(a.End)
}

// blockers answers "does this interval overlap any of these?" in O(log n),
// which matters because every candidate slot of every barber asks it.
// Intervals are sorted by start; maxEnd[i] is the latest end among the first
// i+1 of them, so only a prefix needs looking at and one number decides it.
type blockers struct {
	starts []time.Time
	maxEnd []time.Time
}

func newBlockers(in []Interval) blockers {
	sorted := make([]Interval, 0, len(in))
	for _, iv := range in {
		if iv.Start.Before(iv.End) {
			sorted = append(sorted, iv)
		}
	}
	slices.SortFunc(sorted, func(a, b Interval) int { return a.Start.Compare(b.Start) })
	b := blockers{starts: make([]time.Time, len(sorted)), maxEnd: make([]time.Time, len(sorted))}
	for i, iv := range sorted {
		b.starts[i] = iv.Start
		b.maxEnd[i] = iv.End
		if i > 0 && b.maxEnd[i-1].After(iv.End) {
			b.maxEnd[i] = b.maxEnd[i-1]
		}
	}
	return b
}

// hit reports whether iv (assumed non-empty) overlaps any blocker: among the
// blockers starting before iv ends, does any end after iv starts?
func (b blockers) hit(iv Interval) bool {
	n, _ := slices.BinarySearchFunc(b.starts, iv.End, func(s, end time.Time) int {
		if s.Before(end) {
			return -1
		}
		return 1
	})
	return n > 0 && b.maxEnd[n-1].After(iv.Start)
}
