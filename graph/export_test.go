package graph

import (
	"context"

	"barberd/ent"
	"barberd/graph/catalog"
	"barberd/graph/waitlist"
)

// ObserveFreed returns ctx with f, which is told of each Freed that
// timeFreed passes in ctx once its transaction commits.
func ObserveFreed(ctx context.Context, f func(Freed)) context.Context {
	return context.WithValue(ctx, freedObserverKey{}, f)
}

// Waitlist is the resolver's waitlist, for its jobs.
func (r *Resolver) Waitlist() *waitlist.Waitlist { return r.waitlist }

// BeforeLockStart returns ctx with f, which an offer pass made in ctx
// calls in its transaction right before it locks the barber to check the
// start it found, read without the lock.
func BeforeLockStart(ctx context.Context, f func(*ent.Tx, *catalog.Offer)) context.Context {
	return context.WithValue(ctx, beforeLockStartKey{}, f)
}

// BeforeGuardedWrite returns ctx with f, which a hold or a create made in ctx calls
// with its barber between its unlocked read of the barber's day and its
// guarded write (PostgreSQL).
func BeforeGuardedWrite(ctx context.Context, f func(barberID string)) context.Context {
	return context.WithValue(ctx, beforeGuardedWriteKey{}, f)
}
