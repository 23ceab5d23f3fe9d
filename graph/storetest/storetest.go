// Package storetest gives integration tests real databases: every test runs
// against SQLite and against PostgreSQL, each on a fresh database of its own,
// so tests can run in parallel. Nothing is mocked.
//
// PostgreSQL is reached at BARBERD_TEST_POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). When it is
// unreachable the PostgreSQL half is skipped, unless CI=true or
// BARBERD_REQUIRE_POSTGRES=1, when it fails.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/graph/store"
)

// Dialects are the databases every integration test runs against: both,
// unless BARBERD_TEST_DIALECTS names some of them (comma-separated). CI
// runs every test on both, then again under the race detector on
// PostgreSQL alone (.ci/run; docs/design.md, "Tests").
var Dialects = dialects(os.Getenv("BARBERD_TEST_DIALECTS"))

// dialects is the list BARBERD_TEST_DIALECTS names, in Dialects' order;
// both when it names none. It panics on a name it does not know: a typo
// must not run no test at all.
func dialects(names string) []string {
	all := []string{dialect.SQLite, dialect.Postgres}
	if strings.TrimSpace(names) == "" {
		return all
	}
	var out []string
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(all, n) {
			panic(fmt.Sprintf("BARBERD_TEST_DIALECTS: %q is none of %v", n, all))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(all, a) - slices.Index(all, b) })
	return out
}

// Each runs fn as a subtest per database, each with a fresh, migrated one.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d, func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// Open returns a fresh, migrated database of the given dialect, removed when
// the test ends.
func Open(t testing.TB, d string) *store.DB {
	t.Helper()
	return OpenURL(t, URL(t, d))
}

// OpenURL opens and migrates the database at dbURL (from URL, or through a
// Proxy), closed when the test ends.
func OpenURL(t testing.TB, dbURL string) *store.DB {
	t.Helper()
	db, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// URL creates a fresh, empty database of the given dialect and returns its
// URL; it is dropped when the test ends.
func URL(t testing.TB, d string) string {
	t.Helper()
	if d == dialect.SQLite {
		return "sqlite:" + filepath.Join(t.TempDir(), "barberd.db")
	}
	admin := adminDB(t)
	name := "barberd_test_" + randomHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(postgresURL())
	u.Path = "/" + name
	if v := os.Getenv("BARBERD_TEST_STATEMENT_CACHE"); v != "" {
		// The other form of the statements the cache changes (.ci/run).
		q := u.Query()
		q.Set("statement_cache", v)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func postgresURL() string {
	if v := os.Getenv("BARBERD_TEST_POSTGRES_URL"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// PostgresRequired reports whether an unreachable PostgreSQL fails tests
// rather than skipping them.
func PostgresRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("BARBERD_REQUIRE_POSTGRES") == "1"
}

var (
	adminOnce sync.Once
	admin     *sql.DB
	adminErr  error
)

// adminDB is the shared connection that creates and drops test databases.
func adminDB(t testing.TB) *sql.DB {
	t.Helper()
	adminOnce.Do(func() {
		admin, adminErr = sql.Open("postgres", postgresURL())
		if adminErr == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			adminErr = admin.PingContext(ctx)
		}
	})
	if adminErr != nil {
		msg := fmt.Sprintf("PostgreSQL unreachable at %s: %v", store.Redact(postgresURL()), adminErr)
		if PostgresRequired() {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set CI=true or BARBERD_REQUIRE_POSTGRES=1 to fail instead)")
	}
	return admin
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Count runs a query that returns one integer, such as SELECT count(*);
// its placeholders are ?, on PostgreSQL too.
func Count(t testing.TB, db *store.DB, query string, args ...any) int {
	t.Helper()
	if db.Dialect == dialect.Postgres {
		query = dollarArgs(query)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := db.SQL.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// dollarArgs turns ? placeholders into PostgreSQL's $1, $2, ...
func dollarArgs(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// LibPQURL is dbURL as lib/pq takes it (store.LibPQURL): for a connection
// of the test's own around barberd's driver.
func LibPQURL(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := store.LibPQURL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// StatementCache reports whether the PostgreSQL databases of the tests keep
// their statements prepared (BARBERD_TEST_STATEMENT_CACHE is not "off").
func StatementCache() bool { return os.Getenv("BARBERD_TEST_STATEMENT_CACHE") != "off" }
