package store

import (
	"context"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/barber"
)

// Row locks serialise writers on PostgreSQL. On SQLite every write
// transaction holds the database's write lock from its start (immediate
// transactions), so there is nothing more to lock.

// LockBarber serialises writers of one barber's time until tx ends.
func (db *DB) LockBarber(ctx context.Context, tx *ent.Tx, id string) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	_, err := tx.Barber.Query().Where(barber.ID(id)).ForUpdate().OnlyID(ctx)
	return err
}

// LockOwner runs lock, which locks the row of an owner whose rows are
// counted against a cap, where the database needs it.
func (db *DB) LockOwner(lock func() error) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	return lock()
}
