package slots

import "fmt"

// Clock is a wall-clock time of day in minutes since local midnight (0..1440).
// 1440 ("24:00") is only meaningful as the end of a span: the start of the
// next day.
type Clock int

// EndOfDay is "24:00", the end of a span that runs until midnight.
const EndOfDay Clock = 24 * 60

// ParseClock parses "HH:MM" from 00:00 to 24:00.
func ParseClock(s string) (Clock, error) {
	if len(s) == 5 && s[2] == ':' {
		h, ok1 := digits(s[0:2])
		m, ok2 := digits(s[3:5])
		if ok1 && ok2 && m < 60 && (h < 24 || h == 24 && m == 0) {
			return Clock(h*60 + m), nil
		}
	}
	return 0, fmt.Errorf("invalid clock time %q: must be in the form HH:MM, from 00:00 to 24:00", s)
}

// String formats c as "HH:MM".
func (c Clock) String() string {
	return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60)
}
