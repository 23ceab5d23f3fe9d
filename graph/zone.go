package graph

import (
	"time"

	"barberd/graph/slots"
)

// Zone returns the IANA time zone with the given name.
func Zone(name string) (*time.Location, error) {
	loc, err := slots.Zone(name)
	if err != nil {
		return nil, Errorf(CodeValidationFailed, "%q is not an IANA time zone name such as Europe/Lisbon.", name)
	}
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
