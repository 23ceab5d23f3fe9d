package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestAnalyzeGrown: on PostgreSQL, a connection's check of a hold's
// reservation's foreign key, planned while there was one hold, scans the
// holds, and keeps scanning them once there are thousands; AnalyzeGrown
// with GrowingTables gathers the holds' statistics, and the same
// connection's check finds the hold by its key. Then nothing is stale.
func TestAnalyzeGrown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if db.Dialect != dialect.Postgres {
			if n, err := db.AnalyzeGrown(ctx, store.GrowingTables); n != 0 || err != nil {
				t.Fatalf("SQLite: analyzed %d, %v", n, err)
			}
			t.Skip("PostgreSQL's plans; SQLite keeps none")
		}
		sys := tenant.System(ctx)
		acc := db.Account.Create().SetName("Chain").SaveX(sys)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(sys)
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// holds inserts holds hld_from… without the foreign keys' checks
		// (their unit, service and key do not exist), on a connection of
		// its own: changing session_replication_role drops the session's
		// plans.
		holds := func(from, n int) {
			t.Helper()
			tx, err := db.SQL.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // committed below
			for _, q := range []string{`SET LOCAL session_replication_role = replica`,
				`INSERT INTO holds (id, created_at, updated_at, starts_at, ends_at, status, expires_at, account_id, unit_id, service_id, barber_id, api_key_id)
SELECT 'hld_' || i, now(), now(), s, s + interval '30 minutes', 'active', s, $1, 'unt_1', 'svc_1', $2, 'key_1'
FROM generate_series($3::int, $3::int + $4::int - 1) i, LATERAL (SELECT timestamptz '2027-03-01 09:00Z' + i * interval '1 hour' AS s) t`,
				`SELECT pg_stat_force_next_flush()`,
			} {
				var args []any
				if strings.HasPrefix(q, "INSERT") {
					args = []any{acc.ID, b.ID, from, n}
				}
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := tx.Commit(); err != nil { // and reports its counts
				t.Fatal(err)
			}
		}
		// holdScans reserves hold hld_0's time, checking its foreign keys,
		// and says how many times that scanned the holds (the counts of
		// the connection's transactions that it has not reported yet
		// included: read before and after).
		holdScans := func() int64 {
			t.Helper()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // nothing to keep
			scans := func() (n int64) {
				t.Helper()
				if err := tx.QueryRowContext(ctx, `SELECT pg_stat_get_xact_numscans('holds'::regclass)`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			before := scans()
			start := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
			if _, err := tx.ExecContext(ctx, `INSERT INTO reservations (id, starts_at, ends_at, expires_at, account_id, barber_id, hold_id)
VALUES ('rsv_0', $1, $2, $1, $3, $4, 'hld_0')`, start, start.Add(30*time.Minute), acc.ID, b.ID); err != nil {
				t.Fatal(err)
			}
			return scans() - before
		}
		// The autovacuum daemon would gather the statistics itself, at a
		// moment of its choosing, and replan the check before this test
		// does; the holds of this test's database are left to the test.
		if _, err := conn.ExecContext(ctx, `ALTER TABLE holds SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, `ANALYZE holds`); err != nil { // empty, as in a new database
			t.Fatal(err)
		}
		holds(0, 1)
		for i := range 6 { // five plans for the values, then the one kept
			if n := holdScans(); n != 1 {
				t.Fatalf("check %d with one hold: %d scans of the holds, want 1 (a scan is the cheapest plan), and this test shows nothing", i, n)
			}
		}
		holds(1, 5000)
		switch n := holdScans(); n {
		case 1: // the plan kept, stale
		case 0:
			// The server drops a connection's plans itself when the
			// connection falls behind on the shared invalidation queue,
			// which other databases' DDL fills (this suite's parallel
			// tests make plenty): the check was replanned already, and
			// only what follows is shown this run (CI, 2026-11-29).
			t.Logf("with 5,001 holds, before the statistics: replanned already (0 scans), the connection's caches reset by the server; the stale plan is not shown this run")
		default:
			t.Fatalf("with 5,001 holds, before the statistics: %d scans, want the plan kept (1)", n)
		}
		deadline := time.Now().Add(10 * time.Second)
		for analyzed := false; !analyzed; {
			n, err := db.AnalyzeGrown(ctx, store.GrowingTables)
			if err != nil {
				t.Fatal(err)
			}
			analyzed = n > 0
			if !analyzed && time.Now().After(deadline) {
				t.Fatal("5,000 new holds did not make the statistics stale")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := holdScans(); n != 0 {
			t.Errorf("after AnalyzeGrown, the check scanned the holds %d times, want none (by the key)", n)
		}
		if n, err := db.AnalyzeGrown(ctx, store.GrowingTables); n != 0 || err != nil {
			t.Errorf("just analyzed: analyzed %d again, %v", n, err)
		}
	})
}
