package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/graph/fresh"
	"barberd/graph/store"
)

// maxTxAttempts bounds the retries of a transaction that lost a
// serialization race, hit a deadlock or found SQLite busy.
const maxTxAttempts = 6

// inTx runs fn in a transaction and commits it, retrying a bounded number of
// times when the database asks for it. fn must be safe to run again. A
// transaction whose connection broke is not retried: its outcome is unknown
// and the error says unavailable, so the client retries with what makes its
// request idempotent.
func (r *Resolver) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := r.tryTx(ctx, fn)
		if err == nil {
			return nil
		}
		if _, domain := AsError(err); !domain && ctx.Err() != nil {
			// database/sql rolls the transaction back when the context ends,
			// and what fn meets then (sql.ErrTxDone, say) says nothing more.
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		switch kind := store.Classify(err); {
		case kind == store.Overlap:
			// The database's no-overlap guarantee caught a race the barber
			// lock did not: the slot is taken.
			return Errorf(CodeSlotUnavailable, "The slot was just taken.")
		case kind == store.Unique:
			return err // the caller knows which unique index it raced for
		case kind != store.Retry || attempt == maxTxAttempts:
			return err
		}
		backoff := time.Duration(attempt*attempt) * 5 * time.Millisecond
		select {
		case <-time.After(backoff/2 + rand.N(backoff)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *Resolver) tryTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	tx, err := r.cfg.DB.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			_ = tx.Rollback()
			panic(v)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(); err == nil {
		fresh.Committed(ctx)
	}
	return err
}

// forUpdate locks the rows a query reads until the transaction ends, on
// PostgreSQL. SQLite has no row locks: its write transactions hold the
// database's write lock from their start.
func forUpdate[Q interface{ ForUpdate(...sql.LockOption) Q }](r *Resolver, q Q) Q {
	if r.cfg.DB.Dialect == dialect.Postgres {
		return q.ForUpdate()
	}
	return q
}
