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

// expiredHoldsIndex is the index of holds' reservations, by barber and
// expiry.
const expiredHoldsIndex = "reservation_barber_id_expires_at"

// TestExpiredHoldsIndex: the deletion of a barber's expired holds, which
// every write of the barber's time sends first, reads the barber's holds
// by their index: it does not read every reservation the barber has. On
// PostgreSQL, with the barber's thousands of appointments and live holds
// and their statistics gathered, on the plan made for its values and on
// the generic plan a connection keeps after five runs; on SQLite, which
// gathers no statistics, on its one plan.
func TestExpiredHoldsIndex(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2027, 2, 1, 9, 0, 0, 0, time.UTC) // the holds below expire in an hour
		if db.Dialect != dialect.Postgres {
			query, args := store.DeleteExpiredQuery("acc_1", "brb_1", now)
			rows, err := db.SQL.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(plan) != 1 || !strings.Contains(plan[0], "USING INDEX "+expiredHoldsIndex+" ") {
				t.Errorf("the expired holds are not read by %s: %q", expiredHoldsIndex, plan)
			}
			return
		}
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// 6,000 reservations of three barbers, an hour apart: three in four
		// an appointment's, the fourth a live hold's. Inserted without the
		// foreign keys' checks (nothing else exists).
		for _, q := range []string{
			`SET session_replication_role = replica`,
			`INSERT INTO reservations (id, starts_at, ends_at, expires_at, account_id, barber_id, hold_id, appointment_id)
SELECT 'rsv_' || i, s, s + interval '30 minutes', CASE WHEN i % 4 = 0 THEN timestamptz '2027-02-01 10:00Z' END,
'acc_1', 'brb_' || (i % 3), CASE WHEN i % 4 = 0 THEN 'hld_' || i END, CASE WHEN i % 4 <> 0 THEN 'apt_' || i END
FROM generate_series(1, 6000) i, LATERAL (SELECT timestamptz '2027-03-01 09:00Z' + i * interval '1 hour' AS s) t`,
			`SET session_replication_role = DEFAULT`,
			`ANALYZE reservations`,
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		statement, args := store.DeleteExpiredStatement("acc_1", "brb_1", now)
		for _, mode := range []string{"custom", "generic"} {
			explain := storetest.Prepare(t, conn, "expired_"+mode, statement, mode)
			plan := explain(args...)
			if scans := storetest.Scans(t, plan, "reservations"); len(scans) != 1 || scans[0] != expiredHoldsIndex {
				t.Errorf("%s plan: the expired holds are read by %q, not by %s:\n%s", mode, scans, expiredHoldsIndex, plan)
			}
		}
	})
}
