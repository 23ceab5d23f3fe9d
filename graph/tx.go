package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/graph/store"
)

// maxTxAttempts bounds the retries of a transaction that lost a
// serialization race, hit a deadlock or found SQLite busy.
const maxTxAttempts = 6

// inTx runs fn in a transaction and commits it, retrying a bounded number of
// times when the database asks for it. fn must be safe to run again.
func (r *Resolver) inTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := r.tryTx(ctx, fn)
		if err == nil {
			return nil
		}
		switch kind := store.Classify(err); {
		case kind == store.Overlap:
			// The database's no-overlap guarantee caught a race the barber
			// lock did not: the slot is taken.
			return Errorf(CodeSlotUnavailable, "The slot was just taken.")
		case kind == store.Unique:
			return err // the caller knows which unique index it raced for
		case kind != store.Retry || attempt == maxTxAttempts || ctx.Err() != nil:
			return r.dbError(err)
		}
		backoff := time.Duration(attempt*attempt) * 5 * time.Millisecond
		select {
		case <-time.After(backoff/2 + rand.N(backoff)):
		case <-ctx.Done():
			return r.dbError(ctx.Err())
		}
	}
}

func (r *Resolver) tryTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	tx, err := r.DB.Tx(ctx)
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
		committed(ctx)
	}
	return err
}

// forUpdate locks the rows a query reads until the transaction ends, on
// PostgreSQL. SQLite has no row locks: its write transactions hold the
// database's write lock from their start.
func forUpdate[Q interface{ ForUpdate(...sql.LockOption) Q }](r *Resolver, q Q) Q {
	if r.DB.Dialect == dialect.Postgres {
		return q.ForUpdate()
	}
	return q
}

// dbError turns an error from the database into a domain error: domain
// errors pass through, an unreachable database is "unavailable", anything
// else is internal (its cause kept for the log).
func (r *Resolver) dbError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := AsError(err); ok {
		return err
	}
	switch store.Classify(err) {
	case store.Unreachable:
		return &Error{Code: CodeUnavailable, Message: "The booking database is unreachable; try again shortly.", Err: err}
	case store.Retry:
		return &Error{Code: CodeUnavailable, Message: "The booking database is busy; try again shortly.", Err: err}
	}
	return &Error{Code: CodeInternal, Message: "Something went wrong on our side.", Err: fmt.Errorf("database: %w", err)}
}
