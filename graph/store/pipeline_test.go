package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestBeginRides checks on PostgreSQL that a transaction's BEGIN is sent
// with its first statement, not in a round trip of its own, and that the
// transaction is the same for it: what its first statement writes is
// rolled back with it, whether that statement has arguments (the extended
// protocol, BEGIN in front of it) or not (a simple query, BEGIN sent alone
// before it), and BEGIN's options (read only, the isolation level) hold
// from the first statement on. An empty transaction sends nothing.
func TestBeginRides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := storetest.URL(t, dialect.Postgres)
	connect := func(t *testing.T, dbURL string) *sql.Conn {
		t.Helper()
		db, err := store.Open(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	conn := connect(t, dbURL)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE rides (v text)`); err != nil {
		t.Fatal(err)
	}
	writes := func() int64 {
		t.Helper()
		n, err := store.SocketWrites(conn)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	count := func(v string) int {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM rides WHERE v = $1`, v).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// insert runs the first statement of a transaction and then ends it,
	// and returns the round trips of the whole.
	insert := func(t *testing.T, opts *sql.TxOptions, v string, args bool, commit bool) int64 {
		t.Helper()
		before := writes()
		tx, err := conn.BeginTx(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if n := writes() - before; n != 0 {
			t.Errorf("BEGIN made %d round trips of its own, want 0", n)
		}
		if args {
			_, err = tx.ExecContext(ctx, `INSERT INTO rides VALUES ($1)`, v)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO rides VALUES ('`+v+`')`)
		}
		if err != nil {
			_ = tx.Rollback()
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		return writes() - before
	}

	t.Run("off", func(t *testing.T) {
		// deferred_begin=off in the URL: BEGIN in a round trip of its own.
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("deferred_begin", "off")
		u.RawQuery = q.Encode()
		off := connect(t, u.String())
		before, err := store.SocketWrites(off)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := off.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback()
		if n, err := store.SocketWrites(off); err != nil || n-before != 2 {
			t.Errorf("BEGIN and ROLLBACK with deferred_begin=off: %d round trips (%v), want 2", n-before, err)
		}
		q.Set("deferred_begin", "sometimes")
		u.RawQuery = q.Encode()
		if _, err := store.Open(u.String()); err == nil || !strings.Contains(err.Error(), "deferred_begin") {
			t.Errorf("deferred_begin=sometimes: %v, want refused", err)
		}
	})
	t.Run("with arguments", func(t *testing.T) {
		// Prepared (Parse with BEGIN in front, then Bind), then
		// ROLLBACK: three round trips where lib/pq alone makes four. With
		// the statement cache off, Parse and Bind are sent the same way.
		if n := insert(t, nil, "rolled back", true, false); n != 3 {
			t.Errorf("%d round trips, want 3", n)
		}
		if n := count("rolled back"); n != 0 {
			t.Errorf("the first statement of a rolled back transaction left %d rows", n)
		}
		if n := insert(t, nil, "committed", true, true); n > 3 {
			t.Errorf("%d round trips, want at most 3", n)
		}
		if n := count("committed"); n != 1 {
			t.Errorf("%d rows committed, want 1", n)
		}
	})
	t.Run("simple query", func(t *testing.T) {
		// BEGIN alone, then the query, then ROLLBACK.
		if n := insert(t, nil, "simple", false, false); n != 3 {
			t.Errorf("%d round trips, want 3", n)
		}
		if n := count("simple"); n != 0 {
			t.Errorf("the first statement of a rolled back transaction left %d rows", n)
		}
	})
	t.Run("read only", func(t *testing.T) {
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO rides VALUES ($1)`, "read only")
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "25006" {
			t.Errorf("insert in a read-only transaction: %v, want read_only_sql_transaction", err)
		}
		_ = tx.Rollback()
		if n := count("read only"); n != 0 {
			t.Errorf("%d rows written by a read-only transaction", n)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		for _, args := range []bool{true, false} {
			tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
			if err != nil {
				t.Fatal(err)
			}
			var level string
			if args {
				err = tx.QueryRowContext(ctx, `SELECT current_setting($1)`, "transaction_isolation").Scan(&level)
			} else {
				err = tx.QueryRowContext(ctx, `SHOW transaction_isolation`).Scan(&level)
			}
			_ = tx.Rollback()
			if err != nil || level != "serializable" {
				t.Errorf("first statement (arguments %v): isolation %q, %v; want serializable", args, level, err)
			}
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, commit := range []bool{true, false} {
			before := writes()
			tx, err := conn.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatalf("empty transaction (commit %v): %v", commit, err)
			}
			if n := writes() - before; n != 0 {
				t.Errorf("empty transaction (commit %v): %d round trips, want 0", commit, n)
			}
		}
		// The connection goes on as before, in and out of transactions.
		if n := insert(t, nil, "after empty", true, true); n > 3 || count("after empty") != 1 {
			t.Errorf("after empty transactions: %d round trips, %d rows", n, count("after empty"))
		}
	})
}

// BenchmarkBeginRides runs a transaction of one statement and its commit,
// with BEGIN riding in the statement's round trip and in one of its own
// (deferred_begin=off), on one connection of each.
func BenchmarkBeginRides(b *testing.B) {
	ctx := context.Background()
	dbURL := storetest.URL(b, dialect.Postgres)
	for _, mode := range []string{"on", "off"} {
		b.Run("deferred_begin="+mode, func(b *testing.B) {
			u, err := url.Parse(dbURL)
			if err != nil {
				b.Fatal(err)
			}
			q := u.Query()
			q.Set("deferred_begin", mode)
			u.RawQuery = q.Encode()
			db, err := store.Open(u.String())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			conn, err := db.SQL.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			b.ResetTimer()
			for b.Loop() {
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				var n int
				if err := tx.QueryRowContext(ctx, `SELECT $1::int + 1`, 1).Scan(&n); err != nil {
					b.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
