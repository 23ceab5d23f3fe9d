// Package metrics names the domain events operators count: graph calls
// Events at the one place each event happens, and a Prometheus
// implementation lives with the HTTP server (rest.Metrics). A resolver
// without one counts nothing (None), so tests need not set one.
//
// Events written inside a transaction are reported only once it commits: a
// transaction retried after a serialization failure counts once.
package metrics

import "time"

// Events receives the domain events that operators count.
type Events interface {
	// AppointmentCreated: an appointment was booked (not a replayed create),
	// by source (api, admin).
	AppointmentCreated(source string)
	// SlotConflict: a create, reschedule or hold found its slot taken
	// (slot_unavailable).
	SlotConflict()
	// HoldCreated: a slot was held.
	HoldCreated()
	// HoldsExpired: the background job recorded n holds as expired.
	HoldsExpired(n int)
	// WaitlistOffered: n waitlist entries were offered a freed start.
	WaitlistOffered(n int)
	// NotificationWritten: a notification of type typ was committed.
	NotificationWritten(typ string)
	// CacheLookup: a request looked in one of this process's caches
	// (api_key, catalog, unit, availability) and found a usable entry, or not.
	CacheLookup(cache string, hit bool)
	// VersionRead: one query of the version fence answered callers requests
	// (package fresh).
	VersionRead(callers int)
	// Admission: the weight of computing admitted, and the requests
	// waiting for it, changed (package admit).
	Admission(inUse, waiting int)
	// AdmissionWaited: a request waited d to compute days, and was
	// admitted, or not (it waited too long or went away).
	AdmissionWaited(d time.Duration, admitted bool)
}

// None counts nothing.
type None struct{}

func (None) AppointmentCreated(string)           {}
func (None) SlotConflict()                       {}
func (None) HoldCreated()                        {}
func (None) HoldsExpired(int)                    {}
func (None) WaitlistOffered(int)                 {}
func (None) NotificationWritten(string)          {}
func (None) CacheLookup(string, bool)            {}
func (None) VersionRead(int)                     {}
func (None) Admission(int, int)                  {}
func (None) AdmissionWaited(time.Duration, bool) {}
