package waitlist

import (
	"testing"
	"time"

	"barberd/graph/slots"
)

// TestShiftSlack: an entry's bounds get an hour of slack only on a day
// whose clocks change in its unit's zone, both ways, and none otherwise.
func TestShiftSlack(t *testing.T) {
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		date string
		loc  *time.Location
		want time.Duration
	}{
		{"2027-03-28", lisbon, time.Hour}, // clocks go forward
		{"2027-10-31", lisbon, time.Hour}, // and back
		{"2027-03-27", lisbon, 0},
		{"2027-03-29", lisbon, 0},
		{"2027-03-28", time.UTC, 0},
	} {
		d, err := slots.ParseDate(c.date)
		if err != nil {
			t.Fatal(err)
		}
		if got := shiftSlack(d, c.loc); got != c.want {
			t.Errorf("%s in %s: %v, want %v", c.date, c.loc, got, c.want)
		}
	}
}
