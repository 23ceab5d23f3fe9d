package store

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/postgres"
	"ariga.io/atlas/sql/schema"
	"ariga.io/atlas/sql/sqlite"
	"entgo.io/ent/dialect"
	entschema "entgo.io/ent/dialect/sql/schema"

	entmigrate "barberd/ent/migrate"
)

// Before versioned migrations, barberd migrated automatically at every
// start: Ent's auto-migration, then the hand-written DDL. Such a database
// has no versionTable. adopt compares its schema with the schema each
// migration leads to, newest first; the first that matches is recorded as
// applied with those before it, and the rest are applied as usual. A
// database that matches none (one older than the first migration) is
// refused unchanged: start the last barberd that migrated automatically on
// it once, then this one (docs/operations.md).

// adopt returns the migrations of ms up to the one the legacy database
// matches.
func (db *DB) adopt(ctx context.Context, q queryer, ms []Migration) ([]Migration, error) {
	live, err := inspect(ctx, q, db.Dialect)
	if err != nil {
		return nil, fmt.Errorf("adopt: %w", err)
	}
	var latest string
	for i := len(ms) - 1; i >= 0; i-- {
		want, err := replayShape(ctx, q, db.Dialect, ms[:i+1])
		if err != nil {
			return nil, fmt.Errorf("adopt: replay: %w", err)
		}
		diff, err := compareShapes(live, want)
		if err != nil {
			return nil, fmt.Errorf("adopt: %w", err)
		}
		if diff == "" {
			return ms[:i+1], nil
		}
		if latest == "" {
			latest = diff
		}
	}
	return nil, fmt.Errorf("the database was made before versioned migrations and its schema matches none of them "+
		"(to be at the latest it needs: %s); start the last barberd that migrated automatically on it once, then this one; nothing was changed", latest)
}

// shape is what adoption compares of a schema: Ent's part as Atlas
// inspects it, and the names of the hand-written objects.
type shape struct {
	tables  *schema.Schema
	objects map[string]string
	drv     migrate.Driver // what inspected it
}

func inspect(ctx context.Context, q queryer, dia string) (*shape, error) {
	drv, err := atlasDriver(q, dia)
	if err != nil {
		return nil, err
	}
	s, err := drv.InspectSchema(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	s.Tables = slices.DeleteFunc(s.Tables, func(t *schema.Table) bool { return t.Name == versionTable })
	objs, err := HandWritten(ctx, q, dia)
	if err != nil {
		return nil, err
	}
	return &shape{tables: s, objects: objs, drv: drv}, nil
}

func atlasDriver(q queryer, dia string) (migrate.Driver, error) {
	if dia == dialect.Postgres {
		return postgres.Open(q)
	}
	return sqlite.Open(q)
}

// compareShapes describes how have differs from want, "" when it does not:
// Atlas's plan from one to the other, and the hand-written objects missing
// or extra.
func compareShapes(have, want *shape) (string, error) {
	w := *want.tables
	w.Name = have.tables.Name
	changes, err := have.drv.SchemaDiff(have.tables, &w)
	if err != nil {
		return "", err
	}
	var diffs []string
	for _, c := range changes {
		diffs = append(diffs, describeChange(c))
	}
	for _, name := range slices.Sorted(maps.Keys(want.objects)) {
		if _, ok := have.objects[name]; !ok {
			diffs = append(diffs, "missing "+name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(have.objects)) {
		if _, ok := want.objects[name]; !ok {
			diffs = append(diffs, "extra "+name)
		}
	}
	return strings.Join(diffs, "; "), nil
}

func describeChange(c schema.Change) string {
	switch c := c.(type) {
	case *schema.AddTable:
		return "missing table " + c.T.Name
	case *schema.DropTable:
		return "extra table " + c.T.Name
	case *schema.ModifyTable:
		var parts []string
		for _, tc := range c.Changes {
			parts = append(parts, strings.TrimPrefix(fmt.Sprintf("%T", tc), "*schema."))
			switch tc := tc.(type) {
			case *schema.AddColumn:
				parts[len(parts)-1] += " " + tc.C.Name
			case *schema.DropColumn:
				parts[len(parts)-1] += " " + tc.C.Name
			case *schema.ModifyColumn:
				parts[len(parts)-1] += " " + tc.To.Name
			case *schema.AddIndex:
				parts[len(parts)-1] += " " + tc.I.Name
			case *schema.DropIndex:
				parts[len(parts)-1] += " " + tc.I.Name
			}
		}
		return "table " + c.T.Name + ": " + strings.Join(parts, ", ")
	default:
		return fmt.Sprintf("%T", c)
	}
}

// replayShape is the shape of the schema the migrations ms make, replayed
// where nothing stays: on SQLite a database in memory, on PostgreSQL a
// scratch schema in a transaction that is rolled back (an index built
// CONCURRENTLY is built plainly there, to the same shape).
func replayShape(ctx context.Context, q queryer, dia string, ms []Migration) (*shape, error) {
	if dia == dialect.SQLite {
		mem, err := sql.Open("sqlite", "file:replay?mode=memory&_pragma=foreign_keys(1)&_time_format=sqlite")
		if err != nil {
			return nil, err
		}
		defer mem.Close()
		mem.SetMaxOpenConns(1) // each connection to :memory: is a database of its own
		return replayOn(ctx, mem, dia, ms)
	}
	conn, ok := q.(*sql.Conn)
	if !ok {
		return nil, fmt.Errorf("replay on PostgreSQL needs a connection, not %T", q)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // rolled back on purpose: nothing of the replay stays
	if _, err := tx.ExecContext(ctx, "CREATE SCHEMA barberd_replay"); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path TO barberd_replay, public"); err != nil {
		return nil, err
	}
	return replayOn(ctx, tx, dia, ms)
}

func replayOn(ctx context.Context, q queryer, dia string, ms []Migration) (*shape, error) {
	for _, m := range ms {
		for _, s := range m.Stmts {
			if m.NoTx {
				s = strings.Replace(s, " CONCURRENTLY ", " ", 1)
			}
			if _, err := q.ExecContext(ctx, s); err != nil {
				return nil, fmt.Errorf("%s: %w", m, err)
			}
		}
	}
	return inspect(ctx, q, dia)
}

// HandWritten returns the objects of the current schema that Ent does not
// manage, by name, with their definitions: triggers, barberd's functions,
// exclusion constraints and the waiting entries' span index on
// PostgreSQL, triggers on SQLite.
func HandWritten(ctx context.Context, q queryer, dia string) (map[string]string, error) {
	query := `SELECT 'trigger ' || name, sql FROM sqlite_master WHERE type = 'trigger'`
	if dia == dialect.Postgres {
		query = `SELECT 'trigger ' || t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace
UNION ALL SELECT 'function ' || p.proname, pg_get_functiondef(p.oid) FROM pg_proc p
WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'barberd\_%'
UNION ALL SELECT 'constraint ' || conname, pg_get_constraintdef(oid) FROM pg_constraint
WHERE contype = 'x' AND connamespace = current_schema()::regnamespace
UNION ALL SELECT 'index ' || indexname, indexdef FROM pg_indexes
WHERE schemaname = current_schema() AND indexname = '` + WaitingSpanIndex + `'`
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, err
		}
		out[name] = def
	}
	return out, rows.Err()
}

// HandWrittenDDL is the DDL of the schema that Ent does not write: the
// no-overlap guarantee, the change-version triggers (versions.go) and, on
// PostgreSQL, the waiting entries' span index (waitlist.go). The
// migration generator appends it to a migration after which the objects
// differ from what it makes; every statement can run again.
func HandWrittenDDL(dia string) []string {
	if dia == dialect.Postgres {
		return slices.Concat(postgresNoOverlap, postgresVersions(), postgresWaitingSpan, postgresZoneKnown, postgresHoursRefuse, postgresOpeningWanted, postgresKeyHolds)
	}
	return append(slices.Clone(sqliteNoOverlap), sqliteVersions()...)
}

// postgresNoOverlap is the last line of defence against double booking: an
// exclusion constraint over every blocking row (active holds and confirmed
// appointments share the reservations table).
var postgresNoOverlap = []string{
	`CREATE EXTENSION IF NOT EXISTS btree_gist`,
	`DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'reservations_no_overlap' AND connamespace = current_schema()::regnamespace) THEN
			ALTER TABLE reservations ADD CONSTRAINT reservations_no_overlap
				EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&);
		END IF;
	END $$`,
}

// sqliteNoOverlap is the SQLite equivalent, as triggers. Times are stored
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

// SchemaDifference describes how db's schema differs from other's, "" when
// it does not: tables, columns, indexes and foreign keys, and the
// hand-written objects with their definitions.
func (db *DB) SchemaDifference(ctx context.Context, other *DB) (string, error) {
	have, err := inspect(ctx, db.SQL, db.Dialect)
	if err != nil {
		return "", err
	}
	want, err := inspect(ctx, other.SQL, other.Dialect)
	if err != nil {
		return "", err
	}
	diff, err := compareShapes(have, want)
	if err != nil || diff != "" {
		return diff, err
	}
	var diffs []string
	for _, name := range slices.Sorted(maps.Keys(want.objects)) {
		if have.objects[name] != want.objects[name] {
			diffs = append(diffs, fmt.Sprintf("%s is\n%s\nwant\n%s", name, have.objects[name], want.objects[name]))
		}
	}
	return strings.Join(diffs, "\n"), nil
}

// CreateReference makes, on an empty database, the schema Ent and the
// hand-written DDL make: the way barberd migrated before versioned
// migrations. The migration generator and the tests compare the migrations
// with it; barberd itself never runs it.
func (db *DB) CreateReference(ctx context.Context) error {
	return db.CreateReferenceOf(ctx, entmigrate.Tables)
}

// CreateReferenceOf is CreateReference with the given Ent tables (the
// migration generator's tests plan against a changed schema).
func (db *DB) CreateReferenceOf(ctx context.Context, tables []*entschema.Table) error {
	if err := entmigrate.Create(ctx, db.Schema, tables); err != nil {
		return err
	}
	for _, s := range HandWrittenDDL(db.Dialect) {
		if _, err := db.SQL.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
