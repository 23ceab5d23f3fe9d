package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestBeginRides checks on PostgreSQL that a transaction's BEGIN is sent
// with its first statement, not in a round trip of its own (one round trip
// fewer than the same transaction on a connection with
// deferred_begin=off), and that the transaction is the same for it: what
// its first statement writes is rolled back with it, whether that
// statement has arguments (the extended protocol, BEGIN in front of it) or
// not (a simple query, BEGIN sent alone before it), and BEGIN's options
// (read only, the isolation level) hold from the first statement on, as
// does GenericTx's plan setting (riding with BEGIN, in no round trip of
// its own), which ends with the transaction. An
// empty transaction sends nothing.
func TestBeginRides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := storetest.URL(t, dialect.Postgres)
	on, off := connWith(t, dbURL, "deferred_begin", "on"), connWith(t, dbURL, "deferred_begin", "off")
	if _, err := on.ExecContext(ctx, `CREATE TABLE rides (v text)`); err != nil {
		t.Fatal(err)
	}
	writes := func(conn *sql.Conn) int64 {
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
		if err := on.QueryRowContext(ctx, `SELECT count(*) FROM rides WHERE v = $1`, v).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// insert runs a transaction on conn whose first statement inserts v,
	// and returns its round trips.
	insert := func(t *testing.T, conn *sql.Conn, v string, args bool, commit bool) int64 {
		t.Helper()
		before := writes(conn)
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
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
		return writes(conn) - before
	}
	// Each statement is run once first, so both connections have it
	// prepared (with the statement cache on) when they are compared.
	for _, args := range []bool{true, false} {
		insert(t, on, "warm", args, false)
		insert(t, off, "warm", args, false)
	}

	t.Run("with arguments", func(t *testing.T) {
		for _, commit := range []bool{false, true} {
			v := fmt.Sprintf("arguments, commit %v", commit)
			riding, alone := insert(t, on, v, true, commit), insert(t, off, "", true, false)
			if riding != alone-1 {
				t.Errorf("commit %v: %d round trips, want %d (one fewer than deferred_begin=off)", commit, riding, alone-1)
			}
			want := 0
			if commit {
				want = 1
			}
			if n := count(v); n != want {
				t.Errorf("commit %v: the first statement left %d rows, want %d", commit, n, want)
			}
		}
	})
	t.Run("simple query", func(t *testing.T) {
		// BEGIN alone, then the query: as many round trips as lib/pq's.
		riding, alone := insert(t, on, "simple", false, false), insert(t, off, "", false, false)
		if riding != alone {
			t.Errorf("%d round trips, want %d", riding, alone)
		}
		if n := count("simple"); n != 0 {
			t.Errorf("the first statement of a rolled back transaction left %d rows", n)
		}
	})
	t.Run("read only", func(t *testing.T) {
		tx, err := on.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
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
			tx, err := on.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
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
	t.Run("generic", func(t *testing.T) {
		// Under GenericTx the first statement already sees the setting, at
		// no round trip more, whatever the form of the first statement;
		// the next transaction is as the connection's default says.
		mode := func(tx *sql.Tx, args bool) string {
			t.Helper()
			var mode string
			var err error
			if args {
				err = tx.QueryRowContext(ctx, `SELECT current_setting($1)`, "plan_cache_mode").Scan(&mode)
			} else {
				err = tx.QueryRowContext(ctx, `SHOW plan_cache_mode`).Scan(&mode)
			}
			if err != nil {
				t.Fatal(err)
			}
			return mode
		}
		for _, args := range []bool{true, false} {
			before := writes(on)
			tx, err := on.BeginTx(store.GenericTx(ctx), nil)
			if err != nil {
				t.Fatal(err)
			}
			generic := mode(tx, args)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			want := int64(2) // the statement (BEGIN and the setting with it), COMMIT
			if !args {
				want = 3 // BEGIN and the setting alone first
			}
			if n := writes(on) - before; generic != "force_generic_plan" || n != want {
				t.Errorf("first statement (arguments %v) under GenericTx: plan_cache_mode %s, %d round trips; want force_generic_plan, %d", args, generic, n, want)
			}
			tx, err = on.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			after := mode(tx, args)
			_ = tx.Rollback()
			if after != "auto" {
				t.Errorf("the transaction after: plan_cache_mode %s, want auto", after)
			}
		}
		// With deferred_begin=off the setting follows BEGIN.
		tx, err := off.BeginTx(store.GenericTx(ctx), nil)
		if err != nil {
			t.Fatal(err)
		}
		if generic := mode(tx, true); generic != "force_generic_plan" {
			t.Errorf("under GenericTx with deferred_begin=off: plan_cache_mode %s", generic)
		}
		_ = tx.Rollback()
		// An empty transaction sends nothing still.
		before := writes(on)
		if tx, err = on.BeginTx(store.GenericTx(ctx), nil); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil || writes(on) != before {
			t.Errorf("an empty transaction under GenericTx: %v, %d round trips", err, writes(on)-before)
		}
	})
	t.Run("empty", func(t *testing.T) {
		for _, commit := range []bool{true, false} {
			for conn, want := range map[*sql.Conn]int64{on: 0, off: 2} {
				before := writes(conn)
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
				if n := writes(conn) - before; n != want {
					t.Errorf("empty transaction (commit %v): %d round trips, want %d", commit, n, want)
				}
			}
		}
		// The connection goes on as before, in and out of transactions.
		if n := insert(t, on, "after empty", true, true); count("after empty") != 1 {
			t.Errorf("after empty transactions: %d round trips, %d rows", n, count("after empty"))
		}
	})
	t.Run("refused", func(t *testing.T) {
		if _, err := store.Open(urlWith(t, dbURL, "deferred_begin", "sometimes")); err == nil || !strings.Contains(err.Error(), "deferred_begin") {
			t.Errorf("deferred_begin=sometimes: %v, want refused", err)
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
			conn := connWith(b, dbURL, "deferred_begin", mode)
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

// urlWith is dbURL with its parameter name set to value.
func urlWith(tb testing.TB, dbURL, name, value string) string {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// connWith is a connection of its own to dbURL with its parameter name
// set to value, closed with its database when the test ends.
func connWith(tb testing.TB, dbURL, name, value string) *sql.Conn {
	tb.Helper()
	db, err := store.Open(urlWith(tb, dbURL, name, value))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	conn, err := db.SQL.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}
