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
	acct, err := tenantFilter(ctx, a.add, "k.")
	if err != nil {
		return KeyHolds{}, err
	}
	id, def, active, at := a.add(keyID), a.add(int64(defaultCap)), a.add(string(hold.StatusActive)), a.add(now)
	q := `SELECT k.max_active_holds, CASE WHEN COALESCE(k.max_active_holds, ` + def + `) > 0 THEN (SELECT COUNT(*) FROM holds h
WHERE h.api_key_id = k.id AND h.status = ` + active + ` AND h.expires_at > ` + at + ` AND h.account_id = k.account_id) ELSE 0 END
FROM api_keys k WHERE k.id = ` + id + acct
	rows, err := c.QueryContext(ctx, q, a...)
	if err != nil {
		return KeyHolds{}, err
	}
	defer rows.Close()
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
	return out, rows.Close()
}
