package store_test

import (
	"context"
	"database/sql"
	"slices"
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
		ctx := context.Background()
		conn := storetest.AnalyzedEntries(t, db, 5000)
		from := time.Date(2027, 3, 20, 10, 0, 0, 0, time.UTC)
		var plan string
		err := conn.QueryRowContext(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM waitlist_entries
WHERE account_id = $1 AND waiting AND `+store.WaitingSpan+` && tstzrange($2, $3, '[)')`,
			"acc_1", from, from.Add(30*time.Minute)).Scan(&plan)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, store.WaitingSpanIndex) {
			t.Errorf("the entries reaching a span were not found by %s:\n%s", store.WaitingSpanIndex, plan)
		}

		// The freeings' probe, on the generic plan a connection keeps for
		// it after five runs: made from no values, it must still find the
		// entries by their span (a plan that walked the entries by earliest
		// start read every entry waiting in the month before the span).
		explain := prepareProbe(t, conn)
		plan = explain()
		for _, s := range storetest.EntryScans(t, plan) {
			if s != store.WaitingSpanIndex {
				t.Errorf("the probe's generic plan reads the waiting entries by %q, not by %s:\n%s", s, store.WaitingSpanIndex, plan)
			}
		}

		// The probe that rides with a cancel's freeing (store.RideFreeing)
		// is barberd_opening_wanted, called with the freed time read from
		// the deleted row: its two queries, on the generic plans PL/pgSQL
		// may keep for them, must find the entries by their span too.
		reached, rargs, wanted, wargs := store.OpeningWantedStatements(from, from.Add(-24*time.Hour))
		storetest.WantSpanIndex(t, "the riding probe's look at the span", storetest.PrepareGeneric(t, conn, "reached", reached)(rargs...))
		storetest.WantSpanIndex(t, "the riding probe's generic plan", storetest.PrepareGeneric(t, conn, "wanted", wanted)(wargs...))
		// The freeing's statement itself reads no entry: its plan starts
		// no part of the probe.
		ride, args := store.RideFreeingStatement("acc_1", "apt_1", from.Add(-24*time.Hour))
		if scans := storetest.EntryScans(t, storetest.PrepareGeneric(t, conn, "ride", ride)(args...)); len(scans) != 0 {
			t.Errorf("the freeing's statement reads waiting entries itself (%v), where barberd_opening_wanted should", scans)
		}
	})
}

// TestAnalyzeChanged: on PostgreSQL, a connection's plan of the probe,
// made while no entry waited, scans the table; once thousands joined,
// AnalyzeChanged gathers the table's statistics, and the connection's
// plan finds the entries by their span again. Without changes, it does
// nothing.
func TestAnalyzeChanged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if db.Dialect != dialect.Postgres {
			if done, err := db.AnalyzeChanged(ctx, "waitlist_entries"); done || err != nil {
				t.Fatalf("SQLite: analyzed %v, %v", done, err)
			}
			t.Skip("PostgreSQL's plans; SQLite keeps none")
		}
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `ANALYZE waitlist_entries`); err != nil {
			t.Fatal(err)
		}
		if done, err := db.AnalyzeChanged(ctx, "waitlist_entries"); done || err != nil {
			t.Fatalf("nothing changed: analyzed %v, %v", done, err)
		}
		explain := prepareProbe(t, conn)
		if plan := explain(); slices.Contains(storetest.EntryScans(t, plan), store.WaitingSpanIndex) {
			t.Fatalf("with no entry, the probe's plan already uses the span's index, and this test shows nothing:\n%s", plan)
		}
		storetest.InsertWaitingEntries(t, conn, 5000)
		if _, err := conn.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		// The inserts' counts reach the statistics when the connection
		// flushes them, at its next transaction's end.
		flushed := func() {
			t.Helper()
			if _, err := conn.ExecContext(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
		}
		// While a VACUUM holds the table (here a lock in its mode), the
		// job waits a moment and gives up until next time.
		vacuum, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := vacuum.ExecContext(ctx, `LOCK TABLE waitlist_entries IN SHARE UPDATE EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		// Until the counts are flushed the statistics look fresh, and
		// nothing waits: the call that waited (lock_timeout) is the one
		// that tried.
		began := time.Now()
		for waited := false; !waited; {
			if time.Since(began) > 10*time.Second {
				t.Fatal("AnalyzeChanged never waited for the locked table")
			}
			flushed()
			call := time.Now()
			done, err := db.AnalyzeChanged(ctx, "waitlist_entries")
			if done || err != nil {
				t.Fatalf("with the table locked: analyzed %v, %v", done, err)
			}
			waited = time.Since(call) >= 150*time.Millisecond
		}
		if err := vacuum.Rollback(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			flushed()
			done, err := db.AnalyzeChanged(ctx, "waitlist_entries")
			if err != nil {
				t.Fatal(err)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("5,000 new entries did not make the statistics stale")
			}
			time.Sleep(50 * time.Millisecond)
		}
		plan := explain()
		for _, s := range storetest.EntryScans(t, plan) {
			if s != store.WaitingSpanIndex {
				t.Errorf("after the analyze, the connection's plan reads the entries by %q, not by %s:\n%s", s, store.WaitingSpanIndex, plan)
			}
		}
		if done, err := db.AnalyzeChanged(ctx, "waitlist_entries"); done || err != nil {
			t.Errorf("just analyzed: analyzed again %v, %v", done, err)
		}
	})
}

// prepareProbe prepares the freeings' probe on conn, as the statement
// cache does, to be run on its generic plan (the plan a connection keeps
// after five runs), and returns what EXPLAIN says of that plan each time
// it is called: made from no values, it must still find the entries by
// their span (a plan that walked them by earliest start read every entry
// waiting in the month before the span).
func prepareProbe(t *testing.T, conn *sql.Conn) func() string {
	t.Helper()
	from := time.Date(2027, 3, 20, 10, 0, 0, 0, time.UTC)
	probe, args := store.InsertOpeningStatement(dialect.Postgres, "acc_1", "brb_1", from, from.Add(30*time.Minute), from.Add(-24*time.Hour))
	explain := storetest.PrepareGeneric(t, conn, "probe", probe)
	return func() string {
		t.Helper()
		plan := explain(args...)
		if len(storetest.EntryScans(t, plan)) == 0 {
			t.Fatalf("the probe's plan reads no waiting entries:\n%s", plan)
		}
		return plan
	}
}

// TestGenericTx: in a transaction begun under GenericTx, prepared
// statements run their generic plans from the first run, where PostgreSQL
// would plan each of the first five afresh; the setting ends with the
// transaction.
func TestGenericTx(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		// plans runs a statement twice in a transaction, begun under
		// GenericTx when generic, and says how many of its runs the
		// connection planned afresh and how many ran its generic plan.
		plans := func(generic bool, statement string) (custom, generics int) {
			t.Helper()
			begin := ctx
			if generic {
				begin = store.GenericTx(ctx)
			}
			tx, err := db.Tx(begin)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // read only
			for range 2 {
				rows, err := tx.QueryContext(ctx, statement, "acc_none")
				if err != nil {
					t.Fatal(err)
				}
				rows.Close()
			}
			if db.Dialect != dialect.Postgres {
				return 0, 0
			}
			if custom, generics = storetest.PreparedRuns(t, tx, statement); custom == -1 {
				t.Fatalf("%q is not prepared on the transaction's connection", statement)
			}
			return custom, generics
		}
		const q = `SELECT count(*) FROM waitlist_entries WHERE account_id = $1 AND waiting`
		db.SQL.SetMaxOpenConns(1) // every transaction on the one connection
		if db.Dialect != dialect.Postgres {
			plans(true, q) // nothing to set: it runs
			t.Skip("PostgreSQL's plans; SQLite keeps none")
		}
		if !storetest.StatementCache() {
			t.Skip("statement_cache=off: no statement stays prepared to show its plans")
		}
		if custom, generic := plans(false, q+` /* default */`); custom != 2 || generic != 0 {
			t.Errorf("by default: %d runs planned afresh, %d generic; want 2 and 0", custom, generic)
		}
		if custom, generic := plans(true, q+` /* generic */`); custom != 0 || generic != 2 {
			t.Errorf("under GenericTx: %d runs planned afresh, %d generic; want 0 and 2", custom, generic)
		}
		if custom, generic := plans(false, q+` /* after */`); custom != 2 || generic != 0 {
			t.Errorf("in the next transaction: %d runs planned afresh, %d generic; want 2 and 0 (the setting outlived its transaction)", custom, generic)
		}
	})
}
