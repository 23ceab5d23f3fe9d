package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"barberd/graph/store"
)

// What tests of PostgreSQL's plans share.

// AnalyzedEntries gives a test of PostgreSQL's plans a connection to db
// on which n waiting entries (InsertWaitingEntries) were inserted and
// their statistics gathered; it skips the test on SQLite, whose planner
// keeps no plans and which walks the entries by earliest start.
func AnalyzedEntries(t *testing.T, db *store.DB, n int) *sql.Conn {
	t.Helper()
	if db.Dialect != dialect.Postgres {
		t.Skip("PostgreSQL's plans")
	}
	ctx := context.Background()
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	InsertWaitingEntries(t, conn, n)
	if _, err := conn.ExecContext(ctx, `ANALYZE waitlist_entries`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// InsertWaitingEntries inserts n waiting entries of account acc_1 over
// the two months from March 2027, for unit unt_1, service svc_1 and key
// key_1 (none of which it makes: it inserts as a replica, without the
// foreign keys' checks).
func InsertWaitingEntries(t *testing.T, conn *sql.Conn, n int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`SET session_replication_role = replica`,
		`INSERT INTO waitlist_entries (id, created_at, updated_at, from_date, to_date, weekdays, earliest_start,
latest_end, window_end, customer_id, client_name, client_phone, offer_hold_seconds, status, waiting,
account_id, unit_id, service_id, api_key_id)
SELECT 'wle_' || i, now(), now(), '2027-03-01', '2027-03-01', '[]', t, t + interval '2 hours',
t + interval '3 hours', 'cli_1', 'Ana', '+351' || i, 600, 'waiting', true, 'acc_1', 'unt_1', 'svc_1', 'key_1'
FROM generate_series(1, ` + strconv.Itoa(n) + `) i,
LATERAL (SELECT timestamptz '2027-03-01 09:00Z' + (i % 60) * interval '1 day' + (i % 8) * interval '1 hour' AS t) s`,
		`SET session_replication_role = DEFAULT`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// WantSpanIndex fails t unless the JSON plan reads the waiting entries,
// and by their span's index (store.WaitingSpanIndex) alone; what names the
// statement.
func WantSpanIndex(t *testing.T, what, plan string) {
	t.Helper()
	scans := EntryScans(t, plan)
	if len(scans) == 0 {
		t.Fatalf("%s: the plan reads no waiting entries:\n%s", what, plan)
	}
	for _, s := range scans {
		if s != store.WaitingSpanIndex {
			t.Errorf("%s: the plan reads the waiting entries by %q, not by %s:\n%s", what, s, store.WaitingSpanIndex, plan)
		}
	}
}

// EntryScans are the ways a JSON plan reads table waitlist_entries: the
// index of each scan, or its node type when it uses none.
func EntryScans(t *testing.T, plan string) []string {
	t.Helper()
	return Scans(t, plan, "waitlist_entries")
}

// Scans are the ways a JSON plan reads table relation: the index of each
// scan, or its node type when it uses none.
func Scans(t *testing.T, plan, relation string) []string {
	t.Helper()
	var root []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(plan), &root); err != nil || len(root) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var scans []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Relation == relation && n.Type != "ModifyTable" { // a write's node reads nothing itself
			switch {
			case n.Index != "":
				scans = append(scans, n.Index)
			case n.Type == "Bitmap Heap Scan": // by the bitmaps of its index scans
				for _, c := range n.Plans {
					scans = append(scans, c.Index)
				}
				return
			default:
				scans = append(scans, n.Type)
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
	return scans
}

// planNode is a node of a JSON plan, with what Scans reads.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// PreparedRuns is how many times the statement prepared on q's connection
// with the text statement ran, on a plan of its own (custom) and on its
// generic plan: -1, -1 when the connection has no such statement
// (PostgreSQL; pg_prepared_statements is the session's).
func PreparedRuns(t testing.TB, q store.Queryer, statement string) (custom, generic int) {
	t.Helper()
	custom, generic = -1, -1
	rows, err := q.QueryContext(context.Background(), `SELECT statement, custom_plans, generic_plans FROM pg_prepared_statements`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var c, g int
		if err := rows.Scan(&s, &c, &g); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(s) == statement {
			custom, generic = c, g
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return custom, generic
}

// PrepareGeneric prepares query on conn as name, to run on its generic
// plan (the one a connection keeps after five runs, made from no values),
// and returns what EXPLAIN (FORMAT JSON) says of that plan for the given
// arguments (SQL literals) each time it is called: again after new
// statistics, the plan made from them.
func PrepareGeneric(t *testing.T, conn *sql.Conn, name, query string) func(args ...string) string {
	t.Helper()
	return Prepare(t, conn, name, query, "generic")
}

// Prepare is PrepareGeneric with the plan of the given kind: "generic", or
// "custom" (made for the arguments of each run, as PostgreSQL plans a
// prepared statement's first five runs).
func Prepare(t *testing.T, conn *sql.Conn, name, query, plan string) func(args ...string) string {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`SET plan_cache_mode = force_` + plan + `_plan`, `PREPARE ` + name + ` AS ` + query} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return func(args ...string) string {
		t.Helper()
		var plan string
		if err := conn.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) EXECUTE `+name+`(`+strings.Join(args, ", ")+`)`).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		return plan
	}
}
