package store

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
)

// The schema's history is the migration files under migrations/, one
// directory per database, written by `go run ./cmd/migrations new NAME`
// (docs/migrations.md) and embedded here. They are the whole truth of the
// schema: Ent's tables and indexes and the hand-written DDL (HandWrittenDDL).
// A database records the migrations it has had in versionTable.
//
//go:embed migrations
var embedded embed.FS

// versionTable lists the migrations a database has had.
const versionTable = "barberd_schema_migrations"

// migrationLock is the PostgreSQL advisory lock key that serialises schema
// migrations of replicas starting at once.
const migrationLock = 0x62617262 // "barb"

// Migration is one migration file.
type Migration struct {
	Version string   // the file name's leading timestamp, e.g. 20261123053405
	Name    string   // what it does, from the file name
	Stmts   []string // its statements, in order
	// NoTx is set by the directive "-- atlas:txmode none": the statements
	// run one by one outside a transaction (CREATE INDEX CONCURRENTLY).
	NoTx bool
}

func (m Migration) String() string { return m.Version + "_" + m.Name }

// MigrationsDir is the directory of a dialect's migration files, under
// graph/store/migrations.
func MigrationsDir(dia string) string {
	if dia == dialect.Postgres {
		return "postgres"
	}
	return "sqlite"
}

// Migrations are the migrations built into barberd for the dialect, oldest
// first.
func Migrations(dia string) ([]Migration, error) {
	sub, err := fs.Sub(embedded, "migrations/"+MigrationsDir(dia))
	if err != nil {
		return nil, err
	}
	return ReadMigrations(sub, dia)
}

// ReadMigrations reads a directory of migration files, oldest first, after
// checking them against its atlas.sum.
func ReadMigrations(fsys fs.FS, dia string) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	files := make([]migrate.File, 0, len(names))
	var ms []Migration
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		f := migrate.NewLocalFile(name, data)
		files = append(files, f)
		stmts, err := ScanStatements(dia, string(data))
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", name, err)
		}
		ms = append(ms, Migration{Version: f.Version(), Name: f.Desc(), Stmts: stmts,
			NoTx: slices.Contains(f.Directive("txmode"), "none")})
	}
	sum, err := fs.ReadFile(fsys, migrate.HashFileName)
	if err != nil {
		return nil, err
	}
	want, err := migrate.NewHashFile(files)
	if err != nil {
		return nil, err
	}
	if text, _ := want.MarshalText(); !bytes.Equal(bytes.TrimSpace(sum), bytes.TrimSpace(text)) {
		return nil, errors.New("migration files differ from their atlas.sum: a file was edited by hand; write migrations with go run ./cmd/migrations")
	}
	return ms, nil
}

// ScanStatements splits a migration file into its statements, keeping
// SQLite's trigger bodies and PostgreSQL's dollar-quoted bodies whole.
func ScanStatements(dia, text string) ([]string, error) {
	opts := migrate.ScannerOptions{MatchBegin: true}
	if dia == dialect.Postgres {
		opts = migrate.ScannerOptions{MatchBeginAtomic: true, MatchDollarQuote: true, EscapedStringExt: true}
	}
	stmts, err := (&migrate.Scanner{ScannerOptions: opts}).Scan(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = s.Text
	}
	return out, nil
}

// Migrate applies the migrations built into barberd that the database has
// not had. It is safe to run from several processes at once: each
// migration is applied once.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.Upgrade(ctx)
	return err
}

// Upgrade is Migrate, returning the migrations it applied.
func (db *DB) Upgrade(ctx context.Context) ([]Migration, error) {
	ms, err := Migrations(db.Dialect)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	applied, err := db.Apply(ctx, ms)
	var newer *NewerSchemaError
	if err != nil && !errors.As(err, &newer) {
		return applied, fmt.Errorf("schema: %w", err)
	}
	return applied, err
}

// queryer is a connection or a transaction.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Apply brings the database to the last of ms, applying those it has not
// had in order, under a lock: PostgreSQL's advisory lock, each migration in
// a transaction of its own unless NoTx; on SQLite, the write lock of one
// transaction for them all. A database made by barberd's earlier automatic
// migration, without versionTable, is adopted first (adopt.go). A database
// that has had a migration ms does not know is refused unchanged
// (*NewerSchemaError).
func (db *DB) Apply(ctx context.Context, ms []Migration) ([]Migration, error) {
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if db.Dialect == dialect.SQLite {
		return db.applySQLite(ctx, conn, ms)
	}
	if err := advisoryLock(ctx, conn); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // released with the session anyway
	pending, err := db.pending(ctx, conn, ms)
	if err != nil {
		return nil, err
	}
	var applied []Migration
	for _, m := range pending {
		if err := db.applyPostgres(ctx, conn, m); err != nil {
			return applied, fmt.Errorf("migration %s: %w", m, err)
		}
		applied = append(applied, m)
	}
	return applied, nil
}

// advisoryLock takes the migration lock, trying every 100 ms rather than
// waiting inside a statement: a waiting statement holds a snapshot, which
// the holder's CREATE INDEX CONCURRENTLY would wait for (a deadlock).
func advisoryLock(ctx context.Context, conn *sql.Conn) error {
	for {
		var ok bool
		if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1)", migrationLock).Scan(&ok); err != nil || ok {
			return err
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// applySQLite applies every pending migration in one immediate transaction
// with foreign keys off, as SQLite's procedure for rebuilding a table asks
// (a dropped table would otherwise cascade to the rows referring to it),
// and checks the foreign keys before it commits. Another process migrating
// at once waits for the write lock, then finds nothing left to do.
func (db *DB) applySQLite(ctx context.Context, conn *sql.Conn, ms []Migration) ([]Migration, error) {
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return nil, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON") //nolint:errcheck // a failure surfaces on the next migration of this connection
	var tx *sql.Tx
	var err error
	for attempt := 1; ; attempt++ { // busy_timeout bounds one wait; a long migration elsewhere may take longer
		if tx, err = conn.BeginTx(ctx, nil); err == nil || Classify(err) != Retry || attempt == 30 {
			break
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	pending, err := db.pending(ctx, tx, ms)
	if err != nil {
		return nil, err
	}
	if len(pending) == 0 {
		return nil, tx.Commit() // an adoption's record, if any
	}
	for _, m := range pending {
		for _, s := range m.Stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return nil, fmt.Errorf("migration %s: %w", m, err)
			}
		}
		if err := record(ctx, tx, m); err != nil {
			return nil, err
		}
	}
	rows, err := tx.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return nil, err
	}
	broken := rows.Next()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if broken {
		return nil, errors.New("the migrations would leave rows referring to missing ones (PRAGMA foreign_key_check); nothing was changed")
	}
	return pending, tx.Commit()
}

// applyPostgres applies one migration on the locked connection: in a
// transaction with its record, or, for NoTx, statement by statement and
// recorded at the end. A NoTx migration is written to be run again after a
// failure: its CREATE INDEX CONCURRENTLY IF NOT EXISTS first drops an
// invalid index a failed build left.
func (db *DB) applyPostgres(ctx context.Context, conn *sql.Conn, m Migration) error {
	if m.NoTx {
		for _, s := range m.Stmts {
			if err := dropInvalidIndex(ctx, conn, s); err != nil {
				return err
			}
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return record(ctx, conn, m)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	for _, s := range m.Stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	if err := record(ctx, tx, m); err != nil {
		return err
	}
	return tx.Commit()
}

// dropInvalidIndex drops the index that statement s creates concurrently
// when an earlier, failed build left it invalid.
func dropInvalidIndex(ctx context.Context, conn *sql.Conn, s string) error {
	f := strings.Fields(strings.ToUpper(s))
	if len(f) < 7 || f[1] != "INDEX" || f[2] != "CONCURRENTLY" || f[3] != "IF" {
		return nil
	}
	name := strings.Trim(strings.Fields(s)[6], `"`)
	var invalid bool
	err := conn.QueryRowContext(ctx, `SELECT NOT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`, name).Scan(&invalid)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !invalid) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS "`+name+`"`)
	return err
}

func record(ctx context.Context, q queryer, m Migration) error {
	_, err := q.ExecContext(ctx, "INSERT INTO "+versionTable+" (version, name, applied_at) VALUES ($1, $2, $3)",
		m.Version, m.Name, time.Now().UTC().Format(time.RFC3339))
	return err
}

// pending returns the migrations of ms still to apply. It refuses a newer
// database before changing anything, adopts one from before versionTable,
// and creates versionTable if need be.
func (db *DB) pending(ctx context.Context, q queryer, ms []Migration) ([]Migration, error) {
	recorded, err := tableExists(ctx, q, db.Dialect, versionTable)
	if err != nil {
		return nil, err
	}
	var had, adopted []Migration
	if recorded {
		if had, err = appliedVersions(ctx, q); err != nil {
			return nil, err
		}
	}
	todo, err := unapplied(ms, had)
	if err != nil {
		return nil, err
	}
	if len(had) == 0 {
		legacy, err := tableExists(ctx, q, db.Dialect, "accounts")
		if err != nil {
			return nil, err
		}
		if legacy {
			if adopted, err = db.adopt(ctx, q, ms); err != nil {
				return nil, err
			}
			todo = ms[len(adopted):]
		}
	}
	if !recorded {
		if _, err := q.ExecContext(ctx, "CREATE TABLE "+versionTable+
			" (version varchar(32) NOT NULL PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)"); err != nil {
			return nil, err
		}
	}
	for _, m := range adopted {
		if err := record(ctx, q, m); err != nil {
			return nil, err
		}
	}
	return todo, nil
}

// unapplied returns the migrations of ms not in had, or a
// *NewerSchemaError when had holds one ms does not know.
func unapplied(ms []Migration, had []Migration) ([]Migration, error) {
	known := map[string]bool{}
	for _, m := range ms {
		known[m.Version] = true
	}
	for _, h := range had {
		if !known[h.Version] {
			e := &NewerSchemaError{Database: had[len(had)-1]}
			if len(ms) > 0 {
				e.Binary = ms[len(ms)-1]
			}
			return nil, e
		}
	}
	var out []Migration
	for _, m := range ms {
		if !slices.ContainsFunc(had, func(h Migration) bool { return h.Version == m.Version }) {
			out = append(out, m)
		}
	}
	return out, nil
}

// NewerSchemaError refuses a database migrated by a newer barberd.
type NewerSchemaError struct{ Database, Binary Migration }

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("the database's schema is at migration %s, which this barberd (latest migration %s) does not know: "+
		"it was migrated by a newer barberd; run that version or a newer one (nothing was changed)", e.Database, e.Binary)
}

// appliedVersions reads versionTable, oldest first.
func appliedVersions(ctx context.Context, q queryer) ([]Migration, error) {
	rows, err := q.QueryContext(ctx, "SELECT version, name FROM "+versionTable+" ORDER BY version")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Migration
	for rows.Next() {
		var m Migration
		if err := rows.Scan(&m.Version, &m.Name); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func tableExists(ctx context.Context, q queryer, dia, table string) (bool, error) {
	query := `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = $1`
	if dia == dialect.Postgres {
		query = `SELECT to_regclass($1) IS NOT NULL`
	}
	var ok bool
	err := q.QueryRowContext(ctx, query, table).Scan(&ok)
	return ok, err
}

// SchemaState is what a database has had of the migrations built into
// barberd.
type SchemaState struct {
	Current Migration   // the last it had; zero for a new database or one from before versioned migrations
	Latest  Migration   // the last built into barberd
	Pending []Migration // still to apply
	Legacy  bool        // made by the earlier automatic migration: migrate adopts it
}

// CheckSchema reads the database's migrations without changing anything;
// a database newer than barberd gives a *NewerSchemaError.
func (db *DB) CheckSchema(ctx context.Context) (SchemaState, error) {
	ms, err := Migrations(db.Dialect)
	if err != nil || len(ms) == 0 {
		return SchemaState{}, fmt.Errorf("schema: no migrations: %v", err)
	}
	st := SchemaState{Latest: ms[len(ms)-1], Pending: ms}
	recorded, err := tableExists(ctx, db.SQL, db.Dialect, versionTable)
	if err != nil {
		return st, err
	}
	if !recorded {
		st.Legacy, err = tableExists(ctx, db.SQL, db.Dialect, "accounts")
		return st, err
	}
	had, err := appliedVersions(ctx, db.SQL)
	if err != nil {
		return st, err
	}
	if st.Pending, err = unapplied(ms, had); err != nil {
		return st, err
	}
	if len(had) > 0 {
		st.Current = had[len(had)-1]
	}
	return st, nil
}
