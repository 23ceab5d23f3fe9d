package graph

import (
	"context"
	"time"

	"barberd/ent"
)

// Metrics receives the domain events that operators count: the resolver
// calls it at the one place each event happens, and a Prometheus
// implementation lives with the HTTP server (rest.Metrics). A nil
// Config.Metrics counts nothing, so tests need not set one.
//
// Events written inside a transaction are reported only once it commits: a
// transaction retried after a serialization failure counts once.
type Metrics interface {
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
	// NotificationWritten: a notification of type typ was committed.
	NotificationWritten(typ string)
	// CacheLookup: a request looked in one of this process's caches
	// (api_key, catalog, availability) and found a usable entry, or not.
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

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) AppointmentCreated(string)           {}
func (noMetrics) SlotConflict()                       {}
func (noMetrics) HoldCreated()                        {}
func (noMetrics) HoldsExpired(int)                    {}
func (noMetrics) NotificationWritten(string)          {}
func (noMetrics) CacheLookup(string, bool)            {}
func (noMetrics) VersionRead(int)                     {}
func (noMetrics) Admission(int, int)                  {}
func (noMetrics) AdmissionWaited(time.Duration, bool) {}

// metrics returns the resolver's metrics, never nil.
func (r *Resolver) metrics() Metrics {
	if r == nil || r.cfg.Metrics == nil {
		return noMetrics{}
	}
	return r.cfg.Metrics
}

// onCommit runs count once tx commits (not if it rolls back), so an event
// written in a transaction that is retried or aborted is not counted.
func onCommit(tx *ent.Tx, count func()) {
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				count()
			}
			return err
		})
	})
}
