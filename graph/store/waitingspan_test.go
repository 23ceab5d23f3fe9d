package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestWaitingSpanIndex: on PostgreSQL, a query written with
// store.WaitingSpan, as the freeings' probe and the offer pass's
// candidates are, finds the waiting entries whose times reach a freed span
// by their span's index, with thousands waiting over two months: an event
// that frees time reads the entries that may want it, not the others.
func TestWaitingSpanIndex(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("PostgreSQL's index; SQLite walks the index by earliest start")
		}
		ctx := context.Background()
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range []string{
			`SET session_replication_role = replica`, // the entries' accounts, units and keys are not made
			`INSERT INTO waitlist_entries (id, created_at, updated_at, from_date, to_date, weekdays, earliest_start,
latest_end, window_end, customer_id, client_name, client_phone, offer_hold_seconds, status, waiting,
account_id, unit_id, service_id, api_key_id)
SELECT 'wle_' || i, now(), now(), '2027-03-01', '2027-03-01', '[]', t, t + interval '2 hours',
t + interval '3 hours', 'cli_1', 'Ana', '+351' || i, 600, 'waiting', true, 'acc_1', 'unt_1', 'svc_1', 'key_1'
FROM generate_series(1, 5000) i,
LATERAL (SELECT timestamptz '2027-03-01 09:00Z' + (i % 60) * interval '1 day' + (i % 8) * interval '1 hour' AS t) s`,
			`ANALYZE waitlist_entries`,
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		from := time.Date(2027, 3, 20, 10, 0, 0, 0, time.UTC)
		var plan string
		err = conn.QueryRowContext(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM waitlist_entries
WHERE account_id = $1 AND waiting AND `+store.WaitingSpan+` && tstzrange($2, $3, '[)')`,
			"acc_1", from, from.Add(30*time.Minute)).Scan(&plan)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, store.WaitingSpanIndex) {
			t.Errorf("the entries reaching a span were not found by %s:\n%s", store.WaitingSpanIndex, plan)
		}
	})
}
