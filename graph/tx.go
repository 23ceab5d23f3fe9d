package graph

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/graph/store"
)

// inTx runs fn in a transaction and commits it, retrying a bounded number of
// times when the database asks for it (store.DB.InTx). fn must be safe to
// run again. A transaction whose connection broke is not retried: its
// outcome is unknown and the error says unavailable, so the client retries
// with what makes its request idempotent.
func (r *Resolver) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	err := r.cfg.DB.InTx(ctx, fn)
	if err == nil {
		fresh.Committed(ctx)
		return nil
	}
	if _, domain := domain.AsError(err); !domain && ctx.Err() != nil && err != ctx.Err() {
		// database/sql rolls the transaction back when the context ends,
		// and what fn meets then (sql.ErrTxDone, say) says nothing more.
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if store.Classify(err) == store.Overlap {
		// The database's no-overlap guarantee caught a race the barber
		// lock did not: the slot is taken.
		return domain.Errorf(domain.CodeSlotUnavailable, "The slot was just taken.")
	}
	return err // a unique index's: the caller knows which it raced for
}

// forUpdate locks the rows a query reads until the transaction ends
// (store.ForUpdate).
func forUpdate[Q interface{ ForUpdate(...sql.LockOption) Q }](r *Resolver, q Q) Q {
	return store.ForUpdate(r.cfg.DB, q)
}

// lockedAppointment is the query of one appointment of the viewer's
// account under its row lock. On PostgreSQL the same statement first takes
// the account's waitlist fence (store.DB.FenceIn), which freeing the
// appointment's time needs: the returned ctx says it is held, one round
// trip fewer for a cancel, a reschedule or a mark.
func (r *Resolver) lockedAppointment(ctx context.Context, tx *ent.Tx, v *domain.Viewer, id string) (context.Context, *ent.AppointmentQuery) {
	ctx, fence := r.cfg.DB.FenceIn(ctx, v.AccountID)
	return ctx, forUpdate(r, tx.Appointment.Query().Where(fence, appointment.ID(id)))
}

// lockBarber serialises writers of one barber's time until the transaction
// ends (store.DB.LockBarber).
func (r *Resolver) lockBarber(ctx context.Context, tx *ent.Tx, id string) error {
	return r.cfg.DB.LockBarber(ctx, tx, id)
}

// guardedTx runs attempt's transaction: on PostgreSQL the guarded way
// (attempt(true): the barber's day, or the hold, read unlocked, the
// barber's lock taken by the write's statement, pickFree, readHold and
// bookFree) with generic plans from its first statement (store.GenericTx:
// planned for their values, the unlocked read and the guarded statement
// cost PostgreSQL more than the round trip the guard saves), and again
// the locking way (attempt(false)) should the time have been booked since
// it was read for any barber, or the hold have changed (errRelock);
// elsewhere (SQLite writes serially), the locking way.
func (r *Resolver) guardedTx(ctx context.Context, attempt func(guarded bool) func(tx *ent.Tx) error) error {
	if store.SerialWrites(r.cfg.DB.Dialect) {
		return r.inTx(ctx, attempt(false))
	}
	err := r.inTx(store.GenericTx(ctx), attempt(true))
	if errors.Is(err, errRelock) {
		err = r.inTx(ctx, attempt(false))
	}
	return err
}
