package slots

import (
	"errors"
	"fmt"
	"time"
)

// WallTime is a local date and time without zone, as clients send it.
type WallTime struct {
	Date                 Date
	Hour, Minute, Second int
}

// ErrNonexistentTime reports a wall time that falls into a spring-forward
// gap: the clocks of the zone skip it on that day.
var ErrNonexistentTime = errors.New("slots: local time does not exist (skipped by a daylight saving change)")

const wallLayout = "2006-01-02T15:04:05"

// ParseWallTime accepts exactly "YYYY-MM-DDTHH:MM:SS". Offsets, "Z",
// fractional seconds and date-only forms are refused rather than tolerated:
// a client sending an offset believes it is naming an instant, and silently
// dropping it would book the wrong hour.
func ParseWallTime(s string) (WallTime, error) {
	fail := func(why string) (WallTime, error) {
		return WallTime{}, fmt.Errorf("invalid local time %q%s: must be a local time in the form YYYY-MM-DDTHH:MM:SS, without offset", s, why)
	}
	if len(s) != len(wallLayout) || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return fail("")
	}
	d, ok := parseDate(s[:10])
	if !ok {
		return fail(" (no such calendar day)")
	}
	h, ok1 := digits(s[11:13])
	m, ok2 := digits(s[14:16])
	sec, ok3 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return fail(" (no such time of day)")
	}
	return WallTime{Date: d, Hour: h, Minute: m, Second: sec}, nil
}

// String formats w as "YYYY-MM-DDTHH:MM:SS".
func (w WallTime) String() string {
	return fmt.Sprintf("%sT%02d:%02d:%02d", w.Date, w.Hour, w.Minute, w.Second)
}

// Local formats instant t as wall time in loc: "YYYY-MM-DDTHH:MM:SS".
func Local(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(wallLayout)
}

// AppendLocal appends Local(t, loc) to dst. Availability answers format
// thousands of times, so the digits are written without reading a layout.
func AppendLocal(dst []byte, t time.Time, loc *time.Location) []byte {
	return appendWall(dst, t.In(loc))
}

// appendWall appends t's wall clock as wallLayout formats it.
func appendWall(dst []byte, t time.Time) []byte {
	y, m, d := t.Date()
	if y < 1000 || y > 9999 {
		return t.AppendFormat(dst, wallLayout)
	}
	hh, mm, ss := t.Clock()
	return append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(m)/10), byte('0'+int(m)%10), '-', byte('0'+d/10), byte('0'+d%10), 'T',
		byte('0'+hh/10), byte('0'+hh%10), ':', byte('0'+mm/10), byte('0'+mm%10), ':', byte('0'+ss/10), byte('0'+ss%10))
}

// In resolves w in loc. A wall time inside a spring-forward gap returns
// ErrNonexistentTime; one inside a fall-back overlap resolves to its first
// (earlier) occurrence, so that "01:30" on a fall-back night means the same
// instant to every caller. time.Date makes no promise for either case, so
// the answer is computed rather than inherited from it.
func (w WallTime) In(loc *time.Location) (time.Time, error) {
	t, ok := occurrence(w.wallSeconds(), loc, w)
	if !ok {
		return time.Time{}, ErrNonexistentTime
	}
	return t, nil
}

// wallSeconds encodes a wall time as the Unix seconds it would have in UTC,
// so that a wall time and an instant's wall clock in some zone compare as
// plain integers.
func (w WallTime) wallSeconds() int64 {
	return time.Date(w.Date.Year, w.Date.Month, w.Date.Day, w.Hour, w.Minute, w.Second, 0, time.UTC).Unix()
}

// wallSecondsOf is the wall clock of instant t in loc, encoded as wallSeconds.
func wallSecondsOf(t time.Time, loc *time.Location) int64 {
	_, off := t.In(loc).Zone()
	return t.Unix() + int64(off)
}

// occurrence returns the earliest instant whose wall clock in loc reads u.
// The true offset of any such instant is one of the offsets in force shortly
// before or after it; a day on either side reaches past any single transition,
// and time.Date's own guess is added for zones that change more often.
func occurrence(u int64, loc *time.Location, w WallTime) (time.Time, bool) {
	var best time.Time
	found := false
	for _, off := range candidateOffsets(u, loc, w) {
		t := time.Unix(u-off, 0).In(loc)
		if wallSecondsOf(t, loc) != u {
			continue
		}
		if !found || t.Before(best) {
			best, found = t, true
		}
	}
	return best, found
}

func candidateOffsets(u int64, loc *time.Location, w WallTime) [3]int64 {
	const day = 24 * 60 * 60
	_, before := time.Unix(u-day, 0).In(loc).Zone()
	_, after := time.Unix(u+day, 0).In(loc).Zone()
	_, guess := time.Date(w.Date.Year, w.Date.Month, w.Date.Day, w.Hour, w.Minute, w.Second, 0, loc).Zone()
	return [3]int64{int64(before), int64(after), int64(guess)}
}

// atOrAfterGap resolves w like In, except that a wall time inside a
// spring-forward gap resolves to the instant the gap ends: the first time that
// exists after it. Working-hour bounds use it, so that a shift "from 02:30"
// on a night when the clocks jump from 02:00 to 03:00 starts at 03:00.
// AtOrAfter is the instant of w in loc: its first occurrence, or for a
// wall time the clocks skip, the instant they skip to.
func (w WallTime) AtOrAfter(loc *time.Location) time.Time { return w.atOrAfterGap(loc) }

func (w WallTime) atOrAfterGap(loc *time.Location) time.Time {
	u := w.wallSeconds()
	if t, ok := occurrence(u, loc, w); ok {
		return t
	}
	// Read with the offset before the gap, a skipped wall time names an
	// instant just after the transition; the zone period containing that
	// instant starts exactly where the gap ends.
	var best time.Time
	found := false
	for _, off := range candidateOffsets(u, loc, w) {
		start, _ := time.Unix(u-off, 0).In(loc).ZoneBounds()
		if start.IsZero() {
			continue
		}
		endsGap := wallSecondsOf(start, loc) > u && wallSecondsOf(start.Add(-time.Second), loc) < u
		if endsGap && (!found || start.Before(best)) {
			best, found = start, true
		}
	}
	if !found {
		// Unreachable with real zone data; the guess of time.Date is the
		// least surprising fallback.
		return time.Date(w.Date.Year, w.Date.Month, w.Date.Day, w.Hour, w.Minute, w.Second, 0, loc)
	}
	return best.In(loc)
}
