package store

import (
	"context"
	"database/sql"
	"errors"
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
// (FOR NO KEY UPDATE, as NoKeyUpdate): a sequence of the lock and the
// count, so the count sees the holds that committed while the lock was
// awaited.
func (db *DB) LockKeyHolds(ctx context.Context, c Queryer, keyID string, defaultCap int, now time.Time) (KeyHolds, error) {
	var out KeyHolds
	err := db.sequence(ctx, c, "key holds",
		step{query: func(bind func(any) string) (string, error) { return lockKeyQuery(ctx, bind, keyID) }, scan: drained},
		step{query: func(bind func(any) string) (string, error) {
			return countKeyHoldsQuery(ctx, bind, keyID, defaultCap, now)
		}, scan: func(rows *sql.Rows) (err error) {
			out, err = scanKeyHolds(rows)
			return errors.Join(err, drained(rows))
		}})
	return out, err
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
