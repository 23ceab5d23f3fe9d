package store

import (
	"context"
	"database/sql"
	"time"

	"barberd/ent/hold"
)

// KeyHolds is an API key's own cap on active holds (nil: the server's
// default) and how many holds it has active at an instant (0, uncounted,
// when it has no cap).
type KeyHolds struct {
	Cap    *int
	Active int
}

// CountKeyHolds reads a key's cap on active holds and, when it has one (its
// own, or else defaultCap when positive), counts its holds active at now,
// in one statement; sql.ErrNoRows when the account has no such key. Why
// not ent: ent reads the key and counts its holds in two round trips, and
// every hold pays them.
func CountKeyHolds(ctx context.Context, c Queryer, keyID string, defaultCap int, now time.Time) (KeyHolds, error) {
	var a sqlArgs
	q, err := countKeyHoldsQuery(ctx, a.add, keyID, defaultCap, now)
	if err != nil {
		return KeyHolds{}, err
	}
	return queryRows(ctx, c, q, a, scanKeyHolds)
}

// LockKeyHolds is CountKeyHolds under the key's row lock, on PostgreSQL
// (FOR NO KEY UPDATE, as NoKeyUpdate): the lock and the count are two
// statements, so the count, a statement of its own, sees the holds that
// committed while the lock was awaited. Both are prepared; with the
// statement cache off they go in one round trip (a simple query, its values
// as literals).
func (db *DB) LockKeyHolds(ctx context.Context, c Queryer, keyID string, defaultCap int, now time.Time) (KeyHolds, error) {
	if db.prepares {
		var a sqlArgs
		lock, err := lockKeyQuery(ctx, a.add, keyID)
		if err != nil {
			return KeyHolds{}, err
		}
		rows, err := c.QueryContext(ctx, lock, a...)
		if err != nil {
			return KeyHolds{}, err
		}
		if err := rows.Close(); err != nil {
			return KeyHolds{}, err
		}
		return CountKeyHolds(ctx, c, keyID, defaultCap, now)
	}
	lock, err := lockKeyQuery(ctx, literal, keyID)
	if err != nil {
		return KeyHolds{}, err
	}
	count, err := countKeyHoldsQuery(ctx, literal, keyID, defaultCap, now)
	if err != nil {
		return KeyHolds{}, err
	}
	rows, err := c.QueryContext(ctx, lock+";\n"+count)
	if err != nil {
		return KeyHolds{}, err
	}
	defer rows.Close()
	if err := nextResult(rows, "key holds", true); err != nil {
		return KeyHolds{}, err
	}
	out, err := scanKeyHolds(rows)
	if err != nil {
		return KeyHolds{}, err
	}
	return out, rows.Close()
}

// lockKeyQuery locks a key's row FOR NO KEY UPDATE, its values named by
// bind.
func lockKeyQuery(ctx context.Context, bind func(any) string, keyID string) (string, error) {
	acct, err := tenantFilter(ctx, bind, "")
	if err != nil {
		return "", err
	}
	return `SELECT id FROM api_keys WHERE id = ` + bind(keyID) + acct + ` FOR NO KEY UPDATE`, nil
}

// countKeyHoldsQuery is CountKeyHolds' statement, its values named by bind.
func countKeyHoldsQuery(ctx context.Context, bind func(any) string, keyID string, defaultCap int, now time.Time) (string, error) {
	acct, err := tenantFilter(ctx, bind, "k.")
	if err != nil {
		return "", err
	}
	id, def, active, at := bind(keyID), bind(int64(defaultCap)), bind(string(hold.StatusActive)), bind(now)
	return `SELECT k.max_active_holds, CASE WHEN COALESCE(k.max_active_holds, ` + def + `) > 0 THEN (SELECT COUNT(*) FROM holds h
WHERE h.api_key_id = k.id AND h.status = ` + active + ` AND h.expires_at > ` + at + ` AND h.account_id = k.account_id) ELSE 0 END
FROM api_keys k WHERE k.id = ` + id + acct, nil
}

// scanKeyHolds reads the row (a result set, not closed) of
// countKeyHoldsQuery; sql.ErrNoRows when there is none.
func scanKeyHolds(rows *sql.Rows) (KeyHolds, error) {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return KeyHolds{}, err
		}
		return KeyHolds{}, sql.ErrNoRows
	}
	var most sql.NullInt64
	var out KeyHolds
	if err := rows.Scan(&most, &out.Active); err != nil {
		return KeyHolds{}, err
	}
	if most.Valid {
		n := int(most.Int64)
		out.Cap = &n
	}
	return out, nil
}
