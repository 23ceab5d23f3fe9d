package slots_test

import (
	"errors"
	"testing"
	"time"

	"barberd/graph/slots"
)

func TestPolicyAdmits(t *testing.T) {
	loc := mustLoad(t, "Europe/Lisbon")
	policy := slots.Policy{Step: 15 * time.Minute, MinLead: time.Hour, HorizonDays: 7}
	now := at(t, loc, "2026-06-15T22:00:00")
	tests := []struct {
		name   string
		policy slots.Policy
		start  string
		want   error
	}{
		{"one second ago", policy, "2026-06-15T21:59:59", slots.ErrInPast},
		{"inside the lead time", policy, "2026-06-15T22:59:59", slots.ErrTooSoon},
		{"exactly at the lead time", policy, "2026-06-15T23:00:00", nil},
		{"now with no lead time", slots.Policy{HorizonDays: 7}, "2026-06-15T22:00:00", nil},
		{"last minute of the last day", policy, "2026-06-22T23:59:00", nil},
		{"first minute after the last day", policy, "2026-06-23T00:00:00", slots.ErrBeyondHorizon},
		{"horizon zero allows today only", slots.Policy{}, "2026-06-15T23:30:00", nil},
		{"horizon zero refuses tomorrow", slots.Policy{}, "2026-06-16T00:30:00", slots.ErrBeyondHorizon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Admits(now, at(t, loc, tt.start), loc); !errors.Is(got, tt.want) {
				t.Errorf("Admits = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPolicyHorizonCountsLocalDays: at 23:30 in Lisbon it is already the
// next day in Chatham, so the same instant has a different horizon there.
func TestPolicyHorizonCountsLocalDays(t *testing.T) {
	now := utc(t, "2026-06-15T12:00:00Z") // 13:00 in Lisbon, 00:45 on the 16th in Chatham
	start := utc(t, "2026-06-16T22:00:00Z")
	policy := slots.Policy{HorizonDays: 1}
	tests := []struct {
		name string
		zone string
		want error
	}{
		{"Lisbon: start is the 16th, today the 15th", "Europe/Lisbon", nil},
		{"Chatham: start is the 17th, today the 16th", "Pacific/Chatham", nil},
		{"New York: start is the 16th, today the 15th", "America/New_York", nil},
		{"Tokyo: start is the 17th, today the 15th", "Asia/Tokyo", slots.ErrBeyondHorizon},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policy.Admits(now, start, mustLoad(t, tt.zone)); !errors.Is(got, tt.want) {
				t.Errorf("Admits = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIntervalOverlaps(t *testing.T) {
	base := utc(t, "2026-06-15T10:00:00Z")
	iv := func(from, to int) slots.Interval {
		return slots.Interval{Start: base.Add(time.Duration(from) * time.Minute), End: base.Add(time.Duration(to) * time.Minute)}
	}
	tests := []struct {
		name string
		a, b slots.Interval
		want bool
	}{
		{"disjoint", iv(0, 30), iv(40, 60), false},
		{"touching", iv(0, 30), iv(30, 60), false},
		{"overlap by one minute", iv(0, 31), iv(30, 60), true},
		{"contained", iv(0, 60), iv(10, 20), true},
		{"identical", iv(0, 30), iv(0, 30), true},
		{"empty inside another", iv(10, 10), iv(0, 30), false},
		{"reversed is empty", iv(30, 0), iv(0, 30), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Overlaps(tt.b); got != tt.want {
				t.Errorf("a.Overlaps(b) = %v, want %v", got, tt.want)
			}
			if got := tt.b.Overlaps(tt.a); got != tt.want {
				t.Errorf("b.Overlaps(a) = %v, want %v", got, tt.want)
			}
		})
	}
}
