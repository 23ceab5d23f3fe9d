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

// Migrate brings the schema up to date: ent's tables and indexes, then the
// database-level guarantee that no two reservations of one barber overlap
// and the triggers that keep the change versions (versions.go).
// It is safe to run from several processes at once.
func (db *DB) Migrate(ctx context.Context) error {
	// ent's migration writes to package-level table descriptors: one at a
	// time per process.
	migrating.Lock()
	defer migrating.Unlock()
	if db.Dialect == dialect.Postgres {
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock) //nolint:errcheck // released with the session anyway
	}
	if err := db.createSchema(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	stmts := append(sqliteNoOverlap, sqliteVersions()...)
	if db.Dialect == dialect.Postgres {
		stmts = append(postgresNoOverlap, postgresVersions()...)
	}
	for _, s := range stmts {
		if _, err := db.SQL.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("migrate: triggers and constraints: %w", err)
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
