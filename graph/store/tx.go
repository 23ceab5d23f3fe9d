package store

import (
	"context"
	"math/rand/v2"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
)

// maxTxAttempts bounds the retries of a transaction that lost a
// serialization race, hit a deadlock or found SQLite busy.
const maxTxAttempts = 6

// InTx runs fn in a transaction and commits it, running it again a bounded
// number of times when the database asks for it (Retry), so fn must be safe
// to run again. Any other error, or any error once ctx has ended, is
// returned as it came; a wait between attempts cut short returns ctx.Err().
func (db *DB) InTx(ctx context.Context, fn func(tx *ent.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.tryTx(ctx, fn)
		if err == nil || ctx.Err() != nil || Classify(err) != Retry || attempt == maxTxAttempts {
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

func (db *DB) tryTx(ctx context.Context, fn func(tx *ent.Tx) error) (err error) {
	tx, err := db.Tx(ctx)
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
	return tx.Commit()
}

// ForUpdate locks the rows a query reads until the transaction ends, on
// PostgreSQL. SQLite has no row locks: its write transactions hold the
// database's write lock from their start.
func ForUpdate[Q interface{ ForUpdate(...sql.LockOption) Q }](db *DB, q Q) Q {
	if db.Dialect == dialect.Postgres {
		return q.ForUpdate()
	}
	return q
}

// OnCommit runs count once tx commits (not if it rolls back), so an event
// written in a transaction that is retried or aborted is not counted.
func OnCommit(tx *ent.Tx, count func()) {
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
