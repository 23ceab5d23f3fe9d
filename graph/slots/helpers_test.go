package slots_test

import (
	"testing"
	"time"
	_ "time/tzdata" // the DST expectations must not depend on the host's zoneinfo

	"barberd/graph/slots"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func mustDate(t testing.TB, s string) slots.Date {
	t.Helper()
	d, err := slots.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustClock(t testing.TB, s string) slots.Clock {
	t.Helper()
	c, err := slots.ParseClock(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// span parses "HH:MM-HH:MM".
func span(t testing.TB, s string) slots.Span {
	t.Helper()
	if len(s) != 11 || s[5] != '-' {
		t.Fatalf("bad span %q", s)
	}
	return slots.Span{From: mustClock(t, s[:5]), To: mustClock(t, s[6:])}
}

func spans(t testing.TB, ss ...string) []slots.Span {
	t.Helper()
	var out []slots.Span
	for _, s := range ss {
		out = append(out, span(t, s))
	}
	return out
}

// at resolves a wall time "YYYY-MM-DDTHH:MM:SS" in loc, failing on gaps.
func at(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	w, err := slots.ParseWallTime(s)
	if err != nil {
		t.Fatal(err)
	}
	i, err := w.In(loc)
	if err != nil {
		t.Fatalf("%s in %s: %v", s, loc, err)
	}
	return i
}

func utc(t testing.TB, s string) time.Time {
	t.Helper()
	i, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// describe renders slots as "HH:MM barber" in loc, or with the UTC offset
// ("01:30-04:00 ana") when withOffset, which DST tests need to be unambiguous.
func describe(free []slots.Slot, loc *time.Location, withOffset bool) []string {
	layout := "15:04"
	if withOffset {
		layout = "15:04-07:00"
	}
	out := []string{}
	for _, s := range free {
		out = append(out, s.Start.In(loc).Format(layout)+" "+s.BarberID)
	}
	return out
}
