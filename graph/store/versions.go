package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"
)

// Change versions tell caches in any number of processes whether what they
// hold is still what the database says (the protocol: package graph/fresh).
// Triggers keep them, so no write path can forget to:
//
//   - accounts.config_version grows with every change to the account's
//     units, services, barbers, their links, working hours, time off and
//     API keys (their name, scopes, revocation and hold cap; not a key's
//     last_used_at, nor a barber's bookings_version);
//   - barbers.bookings_version grows with every change to the barber's
//     reservations (holds and confirmed appointments), except, on
//     PostgreSQL, the deletion of a reservation that had already ended.
//     There the same trigger also appends the barber, its new version and
//     the id of the bumping transaction to barberd_bookings_changes (see
//     VersionReader.Feed).

// configTables are the tables with an account_id whose rows make up an
// account's configuration, with the condition (on OLD and NEW) under which
// an update counts, in PostgreSQL's and SQLite's words; empty means every
// update does.
var configTables = []struct{ table, postgresWhen, sqliteWhen string }{
	{"units", "", ""},
	{"services", "", ""},
	{"barbers", "OLD.bookings_version = NEW.bookings_version", "OLD.bookings_version = NEW.bookings_version"},
	{"working_hours", "", ""},
	{"time_offs", "", ""},
	{"api_keys",
		"OLD.name IS DISTINCT FROM NEW.name OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.max_active_holds IS DISTINCT FROM NEW.max_active_holds",
		"OLD.name IS NOT NEW.name OR OLD.scopes IS NOT NEW.scopes OR OLD.revoked_at IS NOT NEW.revoked_at OR OLD.max_active_holds IS NOT NEW.max_active_holds"},
}

// configLinks are the link tables (no account_id of their own), with the
// column naming a parent row that has one.
var configLinks = []struct{ table, column, parent string }{
	{"barber_services", "barber_id", "barbers"},
	{"unit_barbers", "barber_id", "barbers"},
	{"unit_services", "service_id", "services"},
}

// ChangesTable is the log of bookings version bumps on PostgreSQL: a row
// per barber bumped by a statement, with the version it bumped it to and
// the id of its transaction. Only appended to (the rows go to the end of
// the table and of its index, so a bump leaves the barber's row update
// HOT, where an indexed column on barbers would not), read by the fence's
// feed and pruned by ChangesPruner.
const ChangesTable = "barberd_bookings_changes"

func postgresVersions() []string {
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS ` + ChangesTable + ` (xid bigint NOT NULL, barber_id text NOT NULL, version bigint NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS ` + ChangesTable + `_xid ON ` + ChangesTable + ` (xid)`,
		`CREATE OR REPLACE FUNCTION barberd_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF TG_OP = 'DELETE' THEN
				UPDATE accounts SET config_version = config_version + 1 WHERE id = OLD.account_id;
			ELSE
				UPDATE accounts SET config_version = config_version + 1 WHERE id = NEW.account_id;
			END IF;
			RETURN NULL;
		END $$`,
		// Once per statement, from its transition tables: a statement that
		// writes many reservations of one barber (a bulk import) bumps the
		// barber once, where a trigger per row would update the same barber
		// row once per reservation, each update slower than the last.
		`DROP TRIGGER IF EXISTS reservations_bookings_version ON reservations`,
		`DROP FUNCTION IF EXISTS barberd_bookings_changed()`,
	}
	for _, ev := range []struct{ event, tables, barbers string }{
		{"INSERT", "NEW TABLE AS new_rows", "SELECT barber_id FROM new_rows"},
		// A reservation deleted after it ended (the pruning of past
		// appointments' time, every jobs interval) cannot change a free
		// slot: every slot offered starts after now, and a cached day never
		// outlives its first slot's lead (graph's validUntil). Bumping for it
		// would drop every cached day of the barber, every date, to show
		// nothing new.
		{"DELETE", "OLD TABLE AS old_rows", "SELECT barber_id FROM old_rows WHERE ends_at > now()"},
		{"UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows", "SELECT barber_id FROM old_rows UNION SELECT barber_id FROM new_rows"},
	} {
		// A statement trigger runs for a statement that wrote no row too:
		// every write frees its barber's expired holds first, a deletion
		// that nearly always deletes nothing. The function then returns at
		// once, without starting its statement.
		name := "reservations_bookings_version_" + strings.ToLower(ev.event)
		stmts = append(stmts,
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION barberd_%[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NOT EXISTS (%[2]s) THEN
					RETURN NULL;
				END IF;
				WITH bumped AS (
					UPDATE barbers SET bookings_version = bookings_version + 1
					WHERE id IN (%[2]s) RETURNING id, bookings_version)
				INSERT INTO %[3]s (xid, barber_id, version)
				SELECT pg_current_xact_id()::text::bigint, id, bookings_version FROM bumped;
				RETURN NULL;
			END $$`, name, ev.barbers, ChangesTable),
			fmt.Sprintf(`CREATE OR REPLACE TRIGGER %[1]s
				AFTER %[2]s ON reservations REFERENCING %[3]s
				FOR EACH STATEMENT EXECUTE FUNCTION barberd_%[1]s()`, name, ev.event, ev.tables))
	}
	for _, t := range configTables {
		when := ""
		if t.postgresWhen != "" {
			when = "WHEN (" + t.postgresWhen + ")"
		}
		stmts = append(stmts,
			fmt.Sprintf(`CREATE OR REPLACE TRIGGER %[1]s_config_version
				AFTER INSERT OR DELETE ON %[1]s
				FOR EACH ROW EXECUTE FUNCTION barberd_config_changed()`, t.table),
			fmt.Sprintf(`CREATE OR REPLACE TRIGGER %[1]s_config_version_update
				AFTER UPDATE ON %[1]s FOR EACH ROW %[2]s
				EXECUTE FUNCTION barberd_config_changed()`, t.table, when))
	}
	for _, l := range configLinks {
		fn := "barberd_config_changed_by_" + l.column
		stmts = append(stmts,
			fmt.Sprintf(`CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_OP = 'DELETE' THEN
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM %[2]s WHERE id = OLD.%[3]s);
				ELSE
					UPDATE accounts SET config_version = config_version + 1
					WHERE id = (SELECT account_id FROM %[2]s WHERE id = NEW.%[3]s);
				END IF;
				RETURN NULL;
			END $$`, fn, l.parent, l.column),
			fmt.Sprintf(`CREATE OR REPLACE TRIGGER %[1]s_config_version
				AFTER INSERT OR UPDATE OR DELETE ON %[1]s
				FOR EACH ROW EXECUTE FUNCTION %[2]s()`, l.table, fn))
	}
	return stmts
}

// sqliteVersions are the same triggers for SQLite, which has one trigger
// per event and no functions. Like the no-overlap triggers they are part of
// every migration that rebuilds a table, since a rebuild drops them.
func sqliteVersions() []string {
	bump := func(name, event, table, when, body string) string {
		if when != "" {
			when = "WHEN " + when
		}
		return fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER %s ON %s %s BEGIN %s; END", name, event, table, when, body)
	}
	config := func(row string) string {
		return "UPDATE accounts SET config_version = config_version + 1 WHERE id = " + row + ".account_id"
	}
	bookings := func(row string) string {
		return "UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id = " + row + ".barber_id"
	}
	stmts := []string{
		bump("reservations_bookings_version_insert", "INSERT", "reservations", "", bookings("NEW")),
		bump("reservations_bookings_version_delete", "DELETE", "reservations", "", bookings("OLD")),
		bump("reservations_bookings_version_update", "UPDATE", "reservations", "",
			"UPDATE barbers SET bookings_version = bookings_version + 1 WHERE id IN (OLD.barber_id, NEW.barber_id)"),
	}
	for _, t := range configTables {
		when := t.sqliteWhen
		stmts = append(stmts,
			bump(t.table+"_config_version_insert", "INSERT", t.table, "", config("NEW")),
			bump(t.table+"_config_version_delete", "DELETE", t.table, "", config("OLD")),
			bump(t.table+"_config_version_update", "UPDATE", t.table, when, config("NEW")))
	}
	for _, l := range configLinks {
		via := func(row string) string {
			return fmt.Sprintf("UPDATE accounts SET config_version = config_version + 1 WHERE id = (SELECT account_id FROM %s WHERE id = %s.%s)", l.parent, row, l.column)
		}
		stmts = append(stmts,
			bump(l.table+"_config_version_insert", "INSERT", l.table, "", via("NEW")),
			bump(l.table+"_config_version_delete", "DELETE", l.table, "", via("OLD")),
			bump(l.table+"_config_version_update", "UPDATE", l.table, "", via("NEW")))
	}
	return stmts
}

// A VersionReader reads change versions for the caches' fence
// (graph/fresh), in one statement prepared once per database handle.
type VersionReader struct {
	db          *DB
	prepare     sync.Once
	stmt        *sql.Stmt // versionsQuery, when it could be prepared
	prepareFeed sync.Once
	feed        *sql.Stmt // feedQuery, when it could be prepared
}

// NewVersionReader returns a reader of db's change versions.
func NewVersionReader(db *DB) *VersionReader { return &VersionReader{db: db} }

// versionsQuery reads the versions of the accounts and barbers listed in its
// two parameters (JSON arrays of ids on SQLite, text arrays on PostgreSQL).
var versionsQuery = map[string]string{
	dialect.Postgres: `SELECT 0, id, config_version FROM accounts WHERE id = ANY($1::text[])
		UNION ALL SELECT 1, id, bookings_version FROM barbers WHERE id = ANY($2::text[])`,
	dialect.SQLite: `SELECT 0, id, config_version FROM accounts WHERE id IN (SELECT value FROM json_each(?))
		UNION ALL SELECT 1, id, bookings_version FROM barbers WHERE id IN (SELECT value FROM json_each(?))`,
}

// Read returns the config version of each account and the bookings version
// of each barber it finds, by id.
func (v *VersionReader) Read(ctx context.Context, accounts, barbers []string) (configs, bookings map[string]int64, err error) {
	v.prepare.Do(func() {
		// Without a prepared statement each read is parsed again; slower,
		// still correct.
		v.stmt, _ = v.db.SQL.PrepareContext(ctx, versionsQuery[v.db.Dialect])
	})
	configs, bookings, _, _, err = v.read(ctx, v.stmt, versionsQuery[v.db.Dialect], len(barbers), accounts, barbers)
	return configs, bookings, err
}

// CanFeed reports whether the database keeps what Feed reads (PostgreSQL's
// transaction ids; SQLite has none).
func (v *VersionReader) CanFeed() bool { return v.db.Dialect == dialect.Postgres }

// NoChanges is the since of a Feed that reads no changes, only the ids
// asked for: the first of a feed.
const NoChanges = math.MaxInt64

// snapshotXmin is the xmin of the statement's snapshot: every transaction
// with a smaller id had ended when it was taken.
const snapshotXmin = `pg_snapshot_xmin(pg_current_snapshot())::text::bigint`

// FeedLimit bounds the changes one Feed reads; a Feed that reads that many
// may have left some unread (Feed's truncated).
const FeedLimit = 2048

// feedQuery reads, in one snapshot, the config versions of the accounts in
// $1, the bookings versions of the barbers in $2, the bumps of bookings
// versions made by transactions with an id of at least $3 (ChangesTable, in
// the order of their transactions' ids, up to FeedLimit: the index's order,
// so the plan reads the index whatever $3 is), and the snapshot's xmin:
// every transaction with a smaller id had ended when the snapshot was
// taken. Of a barber's bumps, the latest the snapshot shows has the
// largest version, the one its row shows.
//
// The fence sends it hundreds of times a second, so it keeps one plan, and
// that plan reads the log's index. $3 is read in a subquery, so no plan is
// made for its value: with the log analyzed, a plan for a recent xmin (no
// rows) looks far cheaper than a generic one, and PostgreSQL would plan
// every query again (0.1 ms each). And the range has both ends: of
// "xid >= unknown" alone a generic plan expects a third of the log, which
// a sequential scan and a sort read more cheaply than the index (measured:
// the log of a minute of writes scanned in full by every query); of a range
// with an unknown end, PostgreSQL expects half a percent.
var feedQuery = `SELECT 0, id, config_version FROM accounts WHERE id = ANY($1::text[])
	UNION ALL SELECT 1, id, bookings_version FROM barbers WHERE id = ANY($2::text[])
	UNION ALL (SELECT 3, barber_id, version FROM ` + ChangesTable + ` WHERE xid >= (SELECT $3::bigint) AND xid <= ` + strconv.FormatInt(math.MaxInt64, 10) + `
		ORDER BY xid LIMIT ` + strconv.Itoa(FeedLimit) + `)
	UNION ALL SELECT 2, '', ` + snapshotXmin

// Feed is Read on PostgreSQL that also returns every barber whose bookings
// version changed in a transaction with an id of at least since (or none,
// with NoChanges), and the xmin of the snapshot it read them in: the since
// of the next Feed. A change that snapshot does not show was made by a
// transaction running when it was taken or started after, whose id is at
// least xmin, so the next Feed reads it; a barber read once is kept
// current by every Feed after, whatever its ids. truncated: it read
// FeedLimit changes, and there may be more.
func (v *VersionReader) Feed(ctx context.Context, accounts, barbers []string, since int64) (configs, bookings map[string]int64, xmin int64, truncated bool, err error) {
	v.prepareFeed.Do(func() {
		v.feed, _ = v.db.SQL.PrepareContext(ctx, feedQuery)
	})
	var changes int
	configs, bookings, xmin, changes, err = v.read(ctx, v.feed, feedQuery, len(barbers)+4, accounts, barbers, since)
	return configs, bookings, xmin, changes >= FeedLimit, err
}

// read runs a versions query, prepared (stmt) or not: rows of kind 0 are
// accounts' config versions, 1 barbers' bookings versions, 2 a snapshot's
// xmin, 3 bumps of bookings versions (a barber's largest is its version),
// which it counts.
func (v *VersionReader) read(ctx context.Context, stmt *sql.Stmt, query string, barberRows int, accounts, barbers []string, more ...any) (configs, bookings map[string]int64, xmin int64, changes int, err error) {
	configs, bookings = make(map[string]int64, len(accounts)), make(map[string]int64, barberRows)
	args := append([]any{v.idList(accounts), v.idList(barbers)}, more...)
	var rows *sql.Rows
	if stmt != nil {
		rows, err = stmt.QueryContext(ctx, args...)
	} else {
		rows, err = v.db.SQL.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return configs, bookings, 0, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var id string
		var n int64
		if err := rows.Scan(&kind, &id, &n); err != nil {
			return configs, bookings, 0, 0, err
		}
		switch kind {
		case 0:
			configs[id] = n
		case 1:
			bookings[id] = max(bookings[id], n)
		case 2:
			xmin = n
		default:
			changes++
			bookings[id] = max(bookings[id], n)
		}
	}
	return configs, bookings, xmin, changes, rows.Err()
}

// idList is a list of ids as versionsQuery takes them.
func (v *VersionReader) idList(ids []string) any {
	if v.db.Dialect == dialect.Postgres {
		return pq.StringArray(ids)
	}
	b, _ := json.Marshal(ids) // strings always marshal
	return string(b)
}

// ChangesKeep is how long the rows of ChangesTable are kept once their
// transaction has ended: longer than a fence's feed goes without a round
// before it starts again (graph/fresh's feedIdle, 30 s), so no feed still
// reading changes since an older snapshot misses one.
const ChangesKeep = 2 * time.Minute

// A ChangesPruner removes the rows of ChangesTable that no feed reads any
// more (PostgreSQL; nothing on SQLite). It remembers the xmin it reads each
// time, and removes the rows of transactions older than the newest xmin it
// read ChangesKeep or more before: every transaction under that xmin had
// ended by then.
type ChangesPruner struct {
	db   *DB
	mu   sync.Mutex
	seen []xminAt // oldest first
}

type xminAt struct {
	at   time.Time
	xmin int64
}

// NewChangesPruner returns a pruner of db's ChangesTable.
func NewChangesPruner(db *DB) *ChangesPruner { return &ChangesPruner{db: db} }

// Prune removes the rows no feed reads any more, as of now, and returns how
// many.
func (p *ChangesPruner) Prune(ctx context.Context, now time.Time) (int, error) {
	if p.db.Dialect != dialect.Postgres {
		return 0, nil
	}
	var xmin int64
	if err := p.db.SQL.QueryRowContext(ctx, `SELECT `+snapshotXmin).Scan(&xmin); err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.seen = append(p.seen, xminAt{now, xmin})
	before := int64(-1)
	for len(p.seen) > 0 && now.Sub(p.seen[0].at) >= ChangesKeep {
		before, p.seen = p.seen[0].xmin, p.seen[1:]
	}
	p.mu.Unlock()
	if before < 0 {
		return 0, nil
	}
	res, err := p.db.SQL.ExecContext(ctx, `DELETE FROM `+ChangesTable+` WHERE xid < $1`, before)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
