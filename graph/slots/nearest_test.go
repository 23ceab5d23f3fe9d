package slots_test

import (
	"slices"
	"testing"
	"time"

	"barberd/graph/slots"
)

func TestNearest(t *testing.T) {
	loc := time.UTC
	slot := func(hhmm, id string) slots.Slot {
		s := at(t, loc, "2026-06-15T"+hhmm+":00")
		return slots.Slot{Start: s, End: s.Add(30 * time.Minute), BarberID: id}
	}
	free := []slots.Slot{
		slot("11:00", "ana"), slot("09:00", "ana"), slot("10:00", "bea"),
		slot("10:00", "ana"), slot("12:00", "ana"), slot("09:30", "bea"),
	}
	tests := []struct {
		name   string
		target string
		n      int
		want   []string
	}{
		{"exact hit first", "10:00", 2, []string{"10:00 ana", "10:00 bea"}},
		{"three nearest, returned in start order", "10:10", 3, []string{"09:30 bea", "10:00 ana", "10:00 bea"}},
		{"tie goes to the earlier start", "10:30", 3, []string{"10:00 ana", "10:00 bea", "11:00 ana"}},
		{"tie between two starts", "09:45", 1, []string{"09:30 bea"}},
		{"before every slot", "06:00", 2, []string{"09:00 ana", "09:30 bea"}},
		{"after every slot", "23:00", 1, []string{"12:00 ana"}},
		{"more asked than there are", "10:00", 10, []string{"09:00 ana", "09:30 bea", "10:00 ana", "10:00 bea", "11:00 ana", "12:00 ana"}},
		{"none asked", "10:00", 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := slices.Clone(free)
			got := slots.Nearest(input, at(t, loc, "2026-06-15T"+tt.target+":00"), tt.n)
			if d := describe(got, loc, false); !slices.Equal(d, tt.want) {
				t.Errorf("Nearest = %q, want %q", d, tt.want)
			}
			if !slices.Equal(input, free) {
				t.Errorf("Nearest modified its input")
			}
		})
	}
	if got := slots.Nearest(nil, time.Now(), 3); len(got) != 0 {
		t.Errorf("Nearest(nil) = %v, want none", got)
	}
}
