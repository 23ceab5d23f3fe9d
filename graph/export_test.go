package graph

import (
	"barberd/graph/waitlist"
	"context"
)

// ObserveFreed returns ctx with f, which is told of each Freed that
// timeFreed passes in ctx once its transaction commits.
func ObserveFreed(ctx context.Context, f func(Freed)) context.Context {
	return context.WithValue(ctx, freedObserverKey{}, f)
}

// Waitlist is the resolver's waitlist, for its jobs.
func (r *Resolver) Waitlist() *waitlist.Waitlist { return r.waitlist }
