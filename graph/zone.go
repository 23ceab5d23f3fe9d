package graph

import (
	"sync"
	"time"
)

// zones caches loaded time zones: time.LoadLocation reads and parses the
// zone file on every call, and every availability request needs one.
var zones sync.Map // name -> *time.Location

// Zone returns the IANA time zone with the given name.
func Zone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, Errorf(CodeValidationFailed, "%q is not an IANA time zone name such as Europe/Lisbon.", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// mustZone returns a stored unit's zone; it was validated when the unit was
// saved, so a failure means a broken row, reported as internal.
func mustZone(name string) (*time.Location, error) {
	loc, err := Zone(name)
	if err != nil {
		return nil, Internal(err)
	}
	return loc, nil
}
