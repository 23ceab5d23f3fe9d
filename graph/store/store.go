// Package store opens barberd's database (embedded SQLite or PostgreSQL),
// brings its schema up to date, runs transactions with their retries
// (tx.go), classifies database errors, and holds the few statements barberd
// writes as SQL of its own (queries.go) and the webhook queue's reads and
// writes (webhooks.go), so the rest of the code can stay unaware of which
// of the two it runs on.
package store

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/lib/pq"  // PostgreSQL driver
	_ "modernc.org/sqlite" // embedded SQLite driver, pure Go

	"barberd/ent"
	_ "barberd/ent/runtime" // schema defaults, hooks and the tenant interceptor
)

// DefaultURL is the database used when none is configured: an SQLite file in
// the working directory, so nothing needs installing to start.
const DefaultURL = "sqlite:barberd.db"

// DB is an open database with its ent client.
type DB struct {
	*ent.Client
	SQL     *sql.DB
	Dialect string // dialect.SQLite or dialect.Postgres
	// prepares: PostgreSQL connections keep their statements prepared
	// (pqConn.prepared), so a statement sent alone costs no planning.
	prepares bool
}

// PostgresConns is how many connections a process opens to PostgreSQL at
// most (requests, jobs and offer workers share them).
const PostgresConns = 20

// Open connects to the database named by rawURL: "postgres://..." (or
// "postgresql://...") for PostgreSQL, "sqlite:PATH" for an SQLite file.
// It does not migrate; call Migrate.
func Open(rawURL string) (*DB, error) {
	driver, dsn, dia, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	prepares := false
	if dia == dialect.Postgres {
		var c sqldriver.Connector
		if c, err = newPQConnector(dsn); err == nil {
			db = sql.OpenDB(c)
			prepares = c.(pqConnector).cache
		}
	} else {
		db, err = sql.Open(driver, dsn)
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	switch dia {
	case dialect.Postgres:
		db.SetMaxOpenConns(PostgresConns)
		db.SetMaxIdleConns(PostgresConns)
		db.SetConnMaxIdleTime(5 * time.Minute)
	case dialect.SQLite:
		// One writer at a time is SQLite's nature; a few connections let
		// readers proceed beside it under WAL.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
	}
	drv := recordingDriver{entsql.OpenDB(dia, db)}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: db, Dialect: dia, prepares: prepares}, nil
}

// Close closes the database.
func (db *DB) Close() error { return db.Client.Close() }

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.SQL.PingContext(ctx) }

func parseURL(raw string) (driver, dsn, dia string, err error) {
	switch {
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		return "postgres", postgresDefaults(raw), dialect.Postgres, nil
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "//")
		if path == "" {
			return "", "", "", errors.New("database url: sqlite: needs a file path, e.g. sqlite:barberd.db")
		}
		q := url.Values{}
		for _, p := range []string{
			"foreign_keys(1)",     // ent's migration requires them
			"busy_timeout(10000)", // wait for the write lock instead of failing at once
			"journal_mode(WAL)",   // readers do not block the writer
			"synchronous(NORMAL)",
		} {
			q.Add("_pragma", p)
		}
		// Every transaction takes the write lock at BEGIN, so check-then-insert
		// is atomic across connections and processes.
		q.Set("_txlock", "immediate")
		// Store instants in SQLite's own text form, so SQL comparisons work.
		q.Set("_time_format", "sqlite")
		return "sqlite", "file:" + path + "?" + q.Encode(), dialect.SQLite, nil
	default:
		return "", "", "", fmt.Errorf("database url %q: want postgres://... or sqlite:PATH", redact(raw))
	}
}

// postgresDefaults adds to a PostgreSQL URL the settings barberd relies on
// (connect_timeout=3, binary_parameters=yes), unless the URL (or the
// environment, for the timeout) sets them.
func postgresDefaults(raw string) string {
	// connect_timeout bounds, in seconds, the TCP connection and the
	// startup handshake: without it lib/pq waits forever on a database host
	// gone silent, ignoring the request's context, and every request that
	// needs a new connection hangs instead of answering 503.
	// binary_parameters lets lib/pq send a parameterised query in one round
	// trip (parse, bind and execute together) instead of two; every query
	// barberd makes has parameters.
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	if !q.Has("connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		q.Set("connect_timeout", "3")
	}
	if !q.Has("binary_parameters") {
		q.Set("binary_parameters", "yes")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redact hides a password in a database URL, for messages and logs.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Redact hides the password of a database URL.
func Redact(raw string) string { return redact(raw) }

// WithDriver returns a DB on the same connections whose ent client talks
// through wrap(driver); tests count SQL statements this way, e.g. with
// dialect.DebugWithContext (which sees only what is sent: a recorded
// statement, DB.InsertReserved's, is not). Close the original, not the copy.
func (db *DB) WithDriver(wrap func(dialect.Driver) dialect.Driver) *DB {
	drv := recordingDriver{wrap(entsql.OpenDB(db.Dialect, db.SQL))}
	return &DB{Client: ent.NewClient(ent.Driver(drv)), SQL: db.SQL, Dialect: db.Dialect, prepares: db.prepares}
}
