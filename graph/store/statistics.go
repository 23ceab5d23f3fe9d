package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/ent/appointment"
	"barberd/ent/customer"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/reservation"
	"barberd/ent/waitlistentry"
)

// Planner statistics. PostgreSQL plans a statement a connection keeps
// (the statement cache) once, from the statistics of the tables it reads
// at the time, and plans it again only when they are gathered anew. A
// table that grows from a few rows to thousands in seconds (the waiting
// entries, when a chatbot joins many clients at once) keeps the plans
// made for a few: read by a scan of every row. Autovacuum gathers them
// again when a tenth of the rows changed, but looks only once a minute.

// analyzeRows and analyzeGrowth say when a table's statistics are stale:
// it holds more rows than analyzeGrowth times those they counted, and
// analyzeRows more. A plan chooses between a scan and an index by the
// table's size, so only growth calls for new plans; statistics gathered
// at each doubling cost a growing table few new plans (each connection
// plans every statement that reads it anew).
const (
	analyzeRows   = 50
	analyzeGrowth = 2
)

// staleStatistics is true for a table s (pg_stat_user_tables) of class c
// (pg_class) whose statistics are stale.
var staleStatistics = `s.n_live_tup > ` + strconv.Itoa(analyzeGrowth) + ` * GREATEST(c.reltuples, 0) + ` + strconv.Itoa(analyzeRows)

// GrowingTables are the tables whose plans must follow their growth:
// the waiting entries (the freeings' probe finds them by their span's
// index), and the tables that requests add rows to which the foreign keys
// of other inserts point at, and the reservations every write reads. A
// new database has them empty, and each connection plans the statements
// that read them, the foreign keys' checks that PostgreSQL runs for every
// insert included (a hold's reservation looks its hold up), from their
// size at the time, and keeps the plan: a hold's check planned while there
// were no holds scanned every hold, each hold a scan longer, until
// autovacuum gathered the table's statistics (docs/performance.md).
// And the log of bookings changes (ChangesTable, PostgreSQL only): the
// fence's feed query keeps one plan, and a plan made while the log was a
// page or two read every row of it on each of the fence's hundreds of
// queries a second once a minute of writes had filled it.
// The feed's deliveries are left to autovacuum: the pending poll's plan
// depends on how many of them were pending when they were counted, and
// counted mid-burst it walked every delivery (docs/performance.md).
var GrowingTables = []string{
	waitlistentry.Table, hold.Table, appointment.Table, customer.Table, notification.Table, reservation.Table,
	ChangesTable,
}

// AnalyzeGrown runs AnalyzeChanged on those of tables whose statistics
// are stale, found by one query, and says how many it analyzed. A job,
// every second, with GrowingTables.
func (db *DB) AnalyzeGrown(ctx context.Context, tables []string) (int, error) {
	if db.Dialect != dialect.Postgres {
		return 0, nil
	}
	stale, err := queryRows(ctx, db.SQL, `SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.relid = ANY(ARRAY(SELECT to_regclass(t)::oid FROM unnest($1::text[]) t)) AND `+staleStatistics,
		[]any{pq.Array(tables)}, func(rows *sql.Rows) (names []string, err error) {
			for rows.Next() {
				var t string
				if err := rows.Scan(&t); err != nil {
					return nil, err
				}
				names = append(names, t)
			}
			return names, rows.Err()
		})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range stale {
		done, err := db.AnalyzeChanged(ctx, t)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

// analyzeWait bounds how long AnalyzeChanged waits for the table's lock.
const analyzeWait = 200 * time.Millisecond

// statsFence is the first key of the advisory lock that lets one process
// at a time gather a table's statistics (the second is the table's hash).
const statsFence = "4243"

// AnalyzeChanged gathers PostgreSQL's planner statistics of table when
// they are stale (analyzeRows, analyzeGrowth), the database user owns it
// (ANALYZE skips a table it does not) and no other process is gathering
// them, and reports whether it did: run every second or so, the
// plans of the statements that read the table follow its growth within
// seconds, not autovacuum's minute. SQLite keeps no plans across
// statements: nothing to do.
func (db *DB) AnalyzeChanged(ctx context.Context, table string) (bool, error) {
	if db.Dialect != dialect.Postgres {
		return false, nil
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var stale bool
	err = tx.QueryRowContext(ctx, `SELECT `+staleStatistics+` AND pg_has_role(c.relowner, 'USAGE')
AND pg_try_advisory_xact_lock(`+statsFence+`, hashtext(c.relname))
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = to_regclass($1)`, table).Scan(&stale)
	if errors.Is(err, sql.ErrNoRows) || err == nil && !stale {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// ANALYZE waits for a VACUUM of the table (or an index built
	// concurrently): the job that runs it expires holds too, so it waits
	// no more than analyzeWait, and tries again next time.
	if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = `+strconv.Itoa(int(analyzeWait.Milliseconds()))); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `ANALYZE `+pq.QuoteIdentifier(table)); err != nil {
		if Classify(err) == Retry { // lock_not_available, after analyzeWait
			return false, nil
		}
		return false, err
	}
	return true, tx.Commit()
}
