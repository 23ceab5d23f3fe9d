package slots

import (
	"fmt"
	"strings"
)

// ParseSpan parses a span from its two ends ("HH:MM", spaces around them
// ignored); the end must come after the start.
func ParseSpan(from, to string) (Span, error) {
	f, err := ParseClock(strings.TrimSpace(from))
	if err != nil {
		return Span{}, err
	}
	t, err := ParseClock(strings.TrimSpace(to))
	if err != nil {
		return Span{}, err
	}
	if t <= f {
		return Span{}, fmt.Errorf("%s-%s: end before start", from, to)
	}
	return Span{From: f, To: t}, nil
}

// String formats s as "HH:MM-HH:MM".
func (s Span) String() string { return s.From.String() + "-" + s.To.String() }

// Overlaps reports whether s and o share a minute.
func (s Span) Overlaps(o Span) bool { return s.From < o.To && o.From < s.To }
