package slots

import (
	"cmp"
	"math"
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

// blockers answers "does this span overlap any of these intervals?" in
// O(log n), which matters because every candidate slot of every barber
// asks it. Intervals are sorted by start, in Unix nanoseconds; maxEnd[i] is
// the latest end among the first i+1 of them, so only a prefix needs
// looking at and one number decides it.
type blockers struct {
	starts []int64
	maxEnd []int64
}

func newBlockers(in []Interval) blockers {
	if len(in) == 0 {
		return blockers{}
	}
	type span struct{ start, end int64 }
	sorted := make([]span, 0, len(in))
	for _, iv := range in {
		if iv.Start.Before(iv.End) {
			sorted = append(sorted, span{nanos(iv.Start), nanos(iv.End)})
		}
	}
	byStart := func(a, b span) int { return cmp.Compare(a.start, b.start) }
	if !slices.IsSortedFunc(sorted, byStart) {
		slices.SortFunc(sorted, byStart)
	}
	n := len(sorted)
	both := make([]int64, 2*n)
	b := blockers{starts: both[:n:n], maxEnd: both[n:]}
	for i, iv := range sorted {
		b.starts[i], b.maxEnd[i] = iv.start, iv.end
		if i > 0 {
			b.maxEnd[i] = max(iv.end, b.maxEnd[i-1])
		}
	}
	return b
}

// hit reports whether [start, end) (not empty) overlaps any blocker: among
// the blockers starting before it ends, does any end after it starts?
func (b blockers) hit(start, end int64) bool {
	n, _ := slices.BinarySearch(b.starts, end) // the blockers starting before end
	return n > 0 && b.maxEnd[n-1] > start
}

// nanos is t in Unix nanoseconds, held within what they can name (years
// 1678 to 2262): an instant beyond is as far as any slot is concerned.
func nanos(t time.Time) int64 {
	switch sec := t.Unix(); {
	case sec >= math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	case sec <= math.MinInt64/int64(time.Second):
		return math.MinInt64
	}
	return t.UnixNano()
}
