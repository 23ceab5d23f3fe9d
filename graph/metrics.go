package graph

import (
	"context"

	"barberd/ent"
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
