package store

import (
	"context"
	"database/sql"

	"barberd/ent"
	"barberd/ent/hold"
)

// ReadHold reads a hold, unlocked (sql.ErrNoRows when the account has no
// such hold), in one statement that also upserts the customer riding on
// ctx (RideCustomer): a create with a hold under a guard reads its hold
// before anything else, and takes the customer's record in the same round
// trip, before its statement locks the barber, as a create without a hold
// takes it in its read of the barber's day. Why not ent: its read of a
// hold is a statement of its own, so the hold's columns are scanned here
// (TestReadHold holds them to ent's).
func ReadHold(ctx context.Context, q Queryer, id string) (*ent.Hold, error) {
	var a sqlArgs
	acct, err := tenantFilter(ctx, a.add, "h.")
	if err != nil {
		return nil, err
	}
	cr := riding(ctx)
	var query string
	if cr == nil {
		query = `SELECT ` + holdColumns + `, NULL FROM holds h WHERE h.id = ` + a.add(id) + acct
	} else {
		upsert, err := customerQuery(a.add, cr.c)
		if err != nil {
			return nil, err
		}
		// One row whether or not the hold is found: the customer's id.
		query = `WITH customer AS (` + upsert + `)
SELECT ` + holdColumns + `, (SELECT id FROM customer) FROM (SELECT 1) AS one
LEFT JOIN holds h ON h.id = ` + a.add(id) + acct
	}
	return queryRows(ctx, q, query, a, func(rows *sql.Rows) (*ent.Hold, error) {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return nil, err
			}
			return nil, sql.ErrNoRows
		}
		// Each column may be NULL: a hold not found (the LEFT JOIN's).
		var (
			id, account, key, unit, service, barber, status, entry, customerID sql.NullString
			created, updated, starts, ends, expires                            sql.NullTime
		)
		if err := rows.Scan(&id, &account, &created, &updated, &key, &unit, &service, &barber,
			&starts, &ends, &status, &expires, &entry, &customerID); err != nil {
			return nil, err
		}
		if cr != nil {
			cr.id = customerID.String
		}
		if !id.Valid {
			return nil, sql.ErrNoRows
		}
		h := &ent.Hold{ID: id.String, AccountID: account.String, CreatedAt: created.Time, UpdatedAt: updated.Time,
			APIKeyID: key.String, UnitID: unit.String, ServiceID: service.String, BarberID: barber.String,
			StartsAt: starts.Time, EndsAt: ends.Time, Status: hold.Status(status.String), ExpiresAt: expires.Time}
		if entry.Valid {
			h.WaitlistEntryID = &entry.String
		}
		return h, nil
	})
}

// holdColumns are a hold's columns in ReadHold's order.
const holdColumns = `h.id, h.account_id, h.created_at, h.updated_at, h.api_key_id, h.unit_id, h.service_id, h.barber_id,
h.starts_at, h.ends_at, h.status, h.expires_at, h.waitlist_entry_id`
