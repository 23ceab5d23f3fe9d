package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
)

var migrating sync.Mutex

// migrationLock is the PostgreSQL advisory lock key that serialises schema
// migrations of replicas starting at once.
const migrationLock = 0x62617262 // "barb"

// Migrate brings the schema up to date: the steps ent cannot take alone
// (recordClients), ent's tables and indexes, then the database-level
// guarantee that no two reservations of one barber overlap and the triggers
// that keep the change versions (versions.go).
// It is safe to run from several processes at once.
func (db *DB) Migrate(ctx context.Context) error {
	// ent's migration writes to package-level table descriptors: one at a
	// time per process.
	migrating.Lock()
	defer migrating.Unlock()
	if db.Dialect == dialect.Postgres {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			return fmt.Errorf("schema: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("schema: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // released with the session anyway
	}
	if err := db.recordClients(ctx); err != nil {
		return fmt.Errorf("schema: appointments' clients: %w", err)
	}
	if err := db.createSchema(ctx); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	stmts := append(sqliteNoOverlap, sqliteVersions()...)
	if db.Dialect == dialect.Postgres {
		stmts = append(postgresNoOverlap, postgresVersions()...)
	}
	for _, s := range stmts {
		if _, err := db.SQL.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("schema: triggers and constraints: %w", err)
		}
	}
	return nil
}

// createSchema runs ent's migration. SQLite has no advisory lock, and ent
// plans the changes before its transaction: when another process migrates
// the same file at once, the plan can be stale by the time it is applied
// ("table already exists"). The failed apply rolls back, and planning again
// from the schema the other process committed succeeds.
func (db *DB) createSchema(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := db.Schema.Create(ctx)
		if err == nil || db.Dialect != dialect.SQLite || attempt == 5 || !stalePlan(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// stalePlan reports whether an SQLite migration failed because another
// process changed the schema (or held the write lock) meanwhile.
func stalePlan(err error) bool {
	msg := err.Error()
	return Classify(err) == Retry || strings.Contains(msg, "already exists") || strings.Contains(msg, "duplicate column name")
}

// recordClients upgrades a database from before appointments recorded their
// client (client_name, client_phone, client_email): it adds the columns and
// fills them from each appointment's customer record, which is what the
// appointment showed until then, in one transaction, so no appointment is
// ever seen without its client. ent cannot: the columns are NOT NULL, which
// neither database adds to a table with rows without a default. On SQLite
// the columns get the default ADD COLUMN needs, and ent's migration then
// rebuilds the table once without it (keeping its rows, indexes and the
// rows that refer to them). A new database, or one already upgraded, is
// left to ent.
func (db *DB) recordClients(ctx context.Context) error {
	tx, err := db.SQL.BeginTx(ctx, nil) // on SQLite, the write lock: one process upgrades
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	columns := `SELECT COUNT(*), COUNT(*) FILTER (WHERE name = 'client_name') FROM pragma_table_info('appointments')`
	stmts := []string{
		`ALTER TABLE appointments ADD COLUMN client_name text NOT NULL DEFAULT ''`,
		`ALTER TABLE appointments ADD COLUMN client_phone text NOT NULL DEFAULT ''`,
		`ALTER TABLE appointments ADD COLUMN client_email text NULL`,
		backfillClients,
	}
	if db.Dialect == dialect.Postgres {
		columns = `SELECT COUNT(*), COUNT(*) FILTER (WHERE column_name = 'client_name') FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'appointments'`
		// The columns as ent creates them in a new database.
		stmts = []string{
			`ALTER TABLE appointments ADD COLUMN client_name character varying,
ADD COLUMN client_phone character varying, ADD COLUMN client_email character varying`,
			backfillClients,
			`ALTER TABLE appointments ALTER COLUMN client_name SET NOT NULL, ALTER COLUMN client_phone SET NOT NULL`,
		}
	}
	var n, recorded int
	if err := tx.QueryRowContext(ctx, columns).Scan(&n, &recorded); err != nil {
		return err
	}
	if n == 0 || recorded > 0 {
		return nil
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// backfillClients gives every appointment its customer record's name, phone
// and e-mail (an empty e-mail was shown as none).
const backfillClients = `UPDATE appointments
SET client_name = c.name, client_phone = c.phone, client_email = NULLIF(c.email, '')
FROM customers c WHERE c.id = appointments.customer_id`

// postgresNoOverlap is the last line of defence against double booking: an
// exclusion constraint over every blocking row (active holds and confirmed
// appointments share the reservations table).
var postgresNoOverlap = []string{
	`CREATE EXTENSION IF NOT EXISTS btree_gist`,
	`DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'reservations_no_overlap') THEN
			ALTER TABLE reservations ADD CONSTRAINT reservations_no_overlap
				EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&);
		END IF;
	END $$`,
}

// sqliteNoOverlap is the SQLite equivalent, as triggers. They are created
// after every migration because a table rebuild drops them. Times are stored
// as UTC text in one format, so text comparison orders them correctly.
var sqliteNoOverlap = []string{
	`CREATE TRIGGER IF NOT EXISTS reservations_no_overlap_insert
	BEFORE INSERT ON reservations
	BEGIN
		SELECT RAISE(ABORT, 'reservations_no_overlap') WHERE EXISTS (
			SELECT 1 FROM reservations r
			WHERE r.barber_id = NEW.barber_id AND r.starts_at < NEW.ends_at AND NEW.starts_at < r.ends_at);
	END`,
	`CREATE TRIGGER IF NOT EXISTS reservations_no_overlap_update
	BEFORE UPDATE OF barber_id, starts_at, ends_at ON reservations
	BEGIN
		SELECT RAISE(ABORT, 'reservations_no_overlap') WHERE EXISTS (
			SELECT 1 FROM reservations r
			WHERE r.id <> NEW.id AND r.barber_id = NEW.barber_id AND r.starts_at < NEW.ends_at AND NEW.starts_at < r.ends_at);
	END`,
}
