package slots

import (
	"fmt"
	"time"
)

// Date is a calendar day in some zone (no zone attached).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses strictly "YYYY-MM-DD" naming a real calendar day.
func ParseDate(s string) (Date, error) {
	d, ok := parseDate(s)
	if !ok {
		return Date{}, fmt.Errorf("invalid date %q: must be a calendar day in the form YYYY-MM-DD", s)
	}
	return d, nil
}

// parseDate reads exactly "YYYY-MM-DD" and rejects days the calendar does not
// have (2026-02-30), which time.Date would silently normalise.
func parseDate(s string) (Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, time.Month(m)) {
		return Date{}, false
	}
	return Date{Year: y, Month: time.Month(m), Day: d}, true
}

// digits parses a fixed-width run of ASCII digits; strconv would also accept
// signs, which these formats do not allow.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// String formats d as "YYYY-MM-DD".
func (d Date) String() string {
	if d.Year < 0 || d.Year > 9999 || d.Month < 0 || d.Month > 99 || d.Day < 0 || d.Day > 99 {
		return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
	}
	// Without fmt: availability names its cached days by their dates.
	m := int(d.Month)
	b := [10]byte{
		byte('0' + d.Year/1000), byte('0' + d.Year/100%10), byte('0' + d.Year/10%10), byte('0' + d.Year%10), '-',
		byte('0' + m/10), byte('0' + m%10), '-',
		byte('0' + d.Day/10), byte('0' + d.Day%10),
	}
	return string(b[:])
}

// Weekday reports the day of the week of d.
func (d Date) Weekday() time.Weekday {
	return d.utcMidnight().Weekday()
}

// AddDays returns the calendar day n days after d (before, if n < 0).
func (d Date) AddDays(n int) Date {
	return dateOfTime(d.utcMidnight().AddDate(0, 0, n))
}

// Compare returns -1, 0 or +1 as d is before, equal to or after e.
func (d Date) Compare(e Date) int {
	return d.utcMidnight().Compare(e.utcMidnight())
}

// DateOf returns the local calendar day of instant t in loc.
func DateOf(t time.Time, loc *time.Location) Date {
	return dateOfTime(t.In(loc))
}

// Start is the first instant of day d in loc: its midnight or, on a day
// whose clocks skip midnight, the instant they resume. Day d in loc is
// [d.Start(loc), d.AddDays(1).Start(loc)).
func (d Date) Start(loc *time.Location) time.Time {
	return WallTime{Date: d}.atOrAfterGap(loc)
}

func dateOfTime(t time.Time) Date {
	y, m, d := t.Date()
	return Date{Year: y, Month: m, Day: d}
}

// utcMidnight is calendar arithmetic only: UTC has no daylight saving, so
// adding days there never lands on a missing or repeated hour.
func (d Date) utcMidnight() time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}
