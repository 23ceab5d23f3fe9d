package store_test

import (
	"context"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestStatementCache checks, on PostgreSQL (SQLite prepares nothing of
// barberd's), that a connection keeps a statement with arguments prepared
// and runs it again on its plan, that statement_cache=off prepares nothing,
// that a statement the server forgot (DISCARD ALL, as a pooler does) is
// prepared again without failing a statement outside a transaction, and
// that a bad statement_cache value is refused.
func TestStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The cache on, whatever the tests' databases say.
	dbURL := urlWith(t, storetest.URL(t, dialect.Postgres), "statement_cache", "on")
	const query = `SELECT count(*) FROM pg_class WHERE relname = $1`
	run := func(t *testing.T, db *store.DB) {
		t.Helper()
		var n int
		if err := db.SQL.QueryRowContext(ctx, query, "no_such_table").Scan(&n); err != nil || n != 0 {
			t.Fatalf("count: %d, %v", n, err)
		}
	}
	oneConn := func(t *testing.T, u string) *store.DB {
		db, err := store.Open(u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.SQL.SetMaxOpenConns(1) // pg_prepared_statements is the session's
		return db
	}

	t.Run("on", func(t *testing.T) {
		db := oneConn(t, dbURL)
		for range 8 {
			run(t, db)
		}
		custom, generic := storetest.PreparedRuns(t, db.SQL, query)
		if custom+generic != 8 || generic == 0 {
			t.Errorf("8 runs: %d on plans of their own, %d on the generic plan; want 8 in all, some generic", custom, generic)
		}
		if _, err := db.SQL.ExecContext(ctx, `DISCARD ALL`); err != nil {
			t.Fatal(err)
		}
		run(t, db) // prepared again
		if custom, generic := storetest.PreparedRuns(t, db.SQL, query); custom+generic != 1 {
			t.Errorf("after DISCARD ALL: %d runs prepared, want 1", custom+generic)
		}
	})
	t.Run("off", func(t *testing.T) {
		db := oneConn(t, urlWith(t, dbURL, "statement_cache", "off"))
		for range 3 {
			run(t, db)
		}
		if custom, generic := storetest.PreparedRuns(t, db.SQL, query); custom != -1 || generic != -1 {
			t.Errorf("statement_cache=off: the query was prepared (%d, %d runs)", custom, generic)
		}
	})
	t.Run("refused", func(t *testing.T) {
		if _, err := store.Open(urlWith(t, dbURL, "statement_cache", "sometimes")); err == nil || !strings.Contains(err.Error(), "statement_cache") {
			t.Errorf("statement_cache=sometimes: %v, want refused", err)
		}
	})
}
