package graph

import "context"

// ObserveFreed returns ctx with f, which is told of each Freed that
// timeFreed passes in ctx once its transaction commits.
func ObserveFreed(ctx context.Context, f func(Freed)) context.Context {
	return context.WithValue(ctx, freedObserverKey{}, f)
}
