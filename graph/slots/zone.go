package slots

import (
	"errors"
	"sync"
	"time"
)

// zones caches loaded time zones: time.LoadLocation reads and parses the
// zone file on every call, and every availability request needs one.
var zones sync.Map // name -> *time.Location

// errNoZone is a name that is not an IANA time zone.
var errNoZone = errors.New("slots: not an IANA time zone name")

// Zone returns the IANA time zone with the given name ("" and "Local" name
// none).
func Zone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, errNoZone
	}
	zones.Store(name, loc)
	return loc, nil
}

// UTC formats an instant as RFC 3339 in UTC, the form of every instant
// barberd shows (Local is the form of wall times).
func UTC(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// AppendUTC appends UTC(t) to dst, as AppendLocal does.
func AppendUTC(dst []byte, t time.Time) []byte {
	if y := t.UTC().Year(); y < 1000 || y > 9999 {
		return t.UTC().AppendFormat(dst, time.RFC3339)
	}
	return append(appendWall(dst, t.UTC()), 'Z')
}
