package slots

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A grid resolves a day's wall times by its offset alone where one offset
// holds around the day, and to the same instants as WallTime.In does: in
// zones with daylight saving (an hour, half an hour), one that skipped a
// whole day (Pacific/Apia, 2011-12-30) and ones without.
func TestGridFixedOffset(t *testing.T) {
	zones := []string{"UTC", "Europe/Lisbon", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "Pacific/Apia", "Asia/Kathmandu", "America/Sao_Paulo"}
	span := Span{From: 0, To: EndOfDay}
	fixed, days := 0, 0
	for _, name := range zones {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		for d := (Date{Year: 2011, Month: time.December, Day: 1}); d.Year < 2013; d = d.AddDays(1) {
			g := newGrid(d, loc, 7*time.Minute)
			got := g.resolve(span)
			slow := newGrid(d, loc, 7*time.Minute)
			slow.fixed = false
			want := slow.resolve(span)
			if !slices.Equal(got.starts, want.starts) || got.end != want.end {
				t.Fatalf("%s %s (fixed %v): %d starts %v, want %d %v", name, d, g.fixed, len(got.starts), got.starts, len(want.starts), want.starts)
			}
			if days++; g.fixed {
				fixed++
			}
		}
	}
	if fixed < days*9/10 || fixed == days {
		t.Errorf("%d days of %d resolved by their offset alone: want most, not all (the days around a change)", fixed, days)
	}
}

// mergeRuns sorts keys whatever their runs: sorted ones (merged), empty
// ones, and one out of order (sorted whole).
func TestMergeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 500 {
		var keys []int64
		var runs []int
		for range rng.IntN(15) {
			run := make([]int64, rng.IntN(30))
			for i := range run {
				run[i] = rng.Int64N(200) - 50
			}
			if round%5 != 0 {
				slices.Sort(run)
			}
			keys = append(keys, run...)
			runs = append(runs, len(keys))
		}
		want := slices.Sorted(slices.Values(keys))
		if got := mergeRuns(keys, runs); !slices.Equal(got, want) {
			t.Fatalf("round %d: %v, want %v", round, got, want)
		}
	}
}
