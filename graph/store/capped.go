package store

import "entgo.io/ent/dialect/sql"

// Capped returns full() when an owner (a key, an account, a barber) has
// most rows already (count; most <= 0: no cap). It first locks the owner's
// row (LockOwner), then counts in a statement of its own, which in READ
// COMMITTED sees what was committed while it waited.
func (db *DB) Capped(lock func() error, count func() (int, error), most int, full func() error) error {
	if most <= 0 {
		return nil
	}
	if err := db.LockOwner(lock); err != nil {
		return err
	}
	n, err := count()
	if err != nil {
		return err
	}
	if n >= most {
		return full()
	}
	return nil
}

// NoKeyUpdate locks the rows a query reads FOR NO KEY UPDATE: unlike FOR
// UPDATE, it does not wait for the key-share locks that rows referring to
// them take as they are inserted, so only writers under the same cap wait.
func NoKeyUpdate(s *sql.Selector) { s.For(sql.LockNoKeyUpdate) }
