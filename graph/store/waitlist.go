package store

import (
	"context"
	"time"

	"entgo.io/ent/dialect"
)

// openingReach is how far before a freed span a waiting entry's window may
// start and still want it: an entry spans at most 31 days (and the
// service's length), so one whose earliest start is older cannot reach the
// span, and the index range the probe walks stays bounded.
const openingReach = 33 * 24 * time.Hour

// InsertOpening records that a barber's time from start to end became free,
// with the given id, if a waiting entry of the account may want it: one
// waiting for that barber or any, whose times reach the span. Why not ent:
// the check and the insert are one round trip, and one walk of the index
// of waiting entries by earliest start (bounded by openingReach), however
// many entries wait. It reports whether it wrote the row.
func InsertOpening(ctx context.Context, c Queryer, dia, id, accountID, barberID string, start, end, now time.Time) (bool, error) {
	var a sqlArgs
	text, instant := "", "" // PostgreSQL types a SELECT list's parameters by their first use
	if dia == dialect.Postgres {
		text, instant = "::text", "::timestamptz"
	}
	account, barber := a.add(accountID)+text, a.add(barberID)+text
	from, to := a.add(start)+instant, a.add(end)+instant
	q := `INSERT INTO openings (id, account_id, barber_id, starts_at, ends_at, created_at)
SELECT ` + a.add(id) + text + `, ` + account + `, ` + barber + `, ` + from + `, ` + to + `, ` + a.add(now) + instant + `
WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.account_id = ` + account + ` AND w.waiting = ` + a.add(true) + `
AND w.earliest_start < ` + to + ` AND w.earliest_start > ` + a.add(start.Add(-openingReach)) + `
AND w.latest_end > ` + from + ` AND (w.barber_id IS NULL OR w.barber_id = ` + barber + `))
RETURNING id`
	rows, err := c.QueryContext(ctx, q, a...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	wrote := rows.Next()
	if err := rows.Err(); err != nil {
		return false, err
	}
	return wrote, rows.Close()
}
