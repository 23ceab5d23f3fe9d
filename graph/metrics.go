package graph

import (
	"barberd/graph/metrics"
)

// Metrics receives the domain events that operators count (package
// metrics); nil Settings.Metrics counts nothing.
type Metrics = metrics.Events

// metrics returns the resolver's metrics, never nil.
func (r *Resolver) metrics() Metrics {
	if r == nil || r.cfg.Metrics == nil {
		return metrics.None{}
	}
	return r.cfg.Metrics
}
