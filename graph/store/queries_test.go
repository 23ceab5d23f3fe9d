package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
	"unicode"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/migrate"
	"barberd/ent/notification"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
)

// TestQueriesMatchSchema checks every table and column the hand-written
// statements (queries.go, reservations.go) name against ent's migration schema, in each
// form they take (both dialects, with and without the account filter), so a
// table or column renamed in ent/schema fails here rather than in
// production.
func TestQueriesMatchSchema(t *testing.T) {
	at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	n := store.Note{Notification: &ent.Notification{ID: "ntf_1", AccountID: "acc_1", Type: "appointment.created", AppointmentID: ptr("apt_1"),
		Source: notification.SourceAPI, PreviousStartsAt: &at, CreatedAt: at}, Appointment: []byte(`{}`)}
	for _, dia := range []string{dialect.SQLite, dialect.Postgres} {
		for who, ctx := range map[string]context.Context{
			"account": tenant.WithAccount(context.Background(), "acc_1"),
			"system":  tenant.System(context.Background()),
		} {
			queries := map[string]func(store.Queryer) error{
				"ScheduleRows": func(q store.Queryer) error {
					_, err := store.ScheduleRows(ctx, q, dia, "unt_1", []string{"bar_1", "bar_2"}, []int{2, 3}, at, at.Add(time.Hour), at)
					return err
				},
				"VersionedScheduleRows": func(q store.Queryer) error {
					_, err := store.VersionedScheduleRows(ctx, q, dia, "unt_1", []string{"bar_1", "bar_2"}, []int{2, 3}, at, at.Add(time.Hour), at)
					return err
				},
				"LockedSchedule": func(q store.Queryer) error {
					_, err := (&store.DB{Dialect: dia}).LockedSchedule(ctx, q, "unt_1", "bar_1", []int{2}, at, at.Add(time.Hour), at)
					return err
				},
				"DeleteExpiredReservations": func(q store.Queryer) error {
					_, err := store.DeleteExpiredReservations(ctx, q, "bar_1", at)
					return err
				},
				"DeleteEndedReservations": func(q store.Queryer) error {
					_, err := store.DeleteEndedReservations(ctx, q, "bar_1", at)
					return err
				},
				"DeleteAppointmentReservation": func(q store.Queryer) error {
					_, err := store.DeleteAppointmentReservation(ctx, q, "apt_1")
					return err
				},
				"DeleteHoldReservation": func(q store.Queryer) error {
					_, err := store.DeleteHoldReservation(ctx, q, "hld_1")
					return err
				},
				"CountKeyHolds": func(q store.Queryer) error {
					_, err := store.CountKeyHolds(ctx, q, "key_1", 10, at)
					return err
				},
				"InsertNotification": func(q store.Queryer) error {
					_, err := store.InsertNotification(ctx, q, dia, n, "notifications:read", store.DeliveryIDs{Keys: []string{"dlv_1"}, Webhooks: []string{"whd_1"}})
					return err
				},
			}
			for name, run := range queries {
				t.Run(fmt.Sprintf("%s/%s/%s", name, dia, who), func(t *testing.T) {
					var rec recorder
					if err := run(&rec); !errors.Is(err, errRecorded) || len(rec) != 1 {
						t.Fatalf("sent %d statements (%v), want one", len(rec), err)
					}
					for _, problem := range checkSQL(rec[0], schemaColumns()) {
						t.Errorf("%s\nin\n%s", problem, rec[0])
					}
				})
			}
		}
	}
}

// The check itself finds what it is for.
func TestCheckSQL(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{`SELECT id, starts_at FROM reservations WHERE barber_id = $1`, ""},
		{`SELECT id FROM reservation WHERE barber_id = $1`, `table "reservation"`},
		{`SELECT id, start_at FROM reservations`, `column "start_at"`},
		{`DELETE FROM reservations WHERE barber_id = $1 RETURNING hold`, `column "hold"`},
		{`SELECT k.id FROM api_keys k WHERE k.scope = $1`, `column "k.scope"`},
		{`SELECT x.id FROM api_keys k`, `"x.id": no table or alias "x"`},
		{`SELECT 1 FROM json_each(CAST(k.scopes AS TEXT)) s WHERE s.key = $1`, `"k.scopes": no table or alias "k"`},
		{`SELECT 1 FROM api_keys k WHERE EXISTS (SELECT 1 FROM json_each(k.scopes) s WHERE s.value = 'x')`, ""},
		{`SELECT lower(name) FROM customers`, `function "lower"`},
		{`SELECT opens_at FROM reservations UNION ALL SELECT opens_at FROM working_hours`, `column "opens_at" in none of [reservations]`},
		{`WITH c AS (SELECT we.id, 1 AS i FROM webhook_endpoints we) SELECT c.id, c.i FROM c`, ""},
		{`WITH c AS (SELECT we.id FROM webhook_endpoints we) SELECT c.url FROM c`, `column "c.url"`},
		{`WITH c AS (SELECT we.uri FROM webhook_endpoints we) SELECT c.id FROM c`, `column "we.uri"`},
		{`WITH c AS (INSERT INTO notifications (id) VALUES ($1) RETURNING id) SELECT 1 FROM c CROSS JOIN d`, `table "d"`},
		{`SELECT bookings_version FROM unnest(ARRAY[$1, $2]::text[]) AS w (id) JOIN barbers USING (id)`, ""},
		{`SELECT w.id, (SELECT bookings_version FROM barbers WHERE barbers.id = w.id) FROM unnest(ARRAY[$1]::text[]) AS w (id)`, ""},
		{`SELECT w.name FROM unnest(ARRAY[$1]::text[]) AS w (id)`, `column "w.name"`},
		{`SELECT booking_version FROM unnest(ARRAY[$1, $2]::text[]) AS w (id) JOIN barbers USING (id)`, `column "booking_version"`},
	} {
		problems := checkSQL(tc.sql, schemaColumns())
		switch {
		case tc.want == "" && len(problems) > 0:
			t.Errorf("%s: %v, want none", tc.sql, problems)
		case tc.want != "" && !strings.Contains(strings.Join(problems, "; "), tc.want):
			t.Errorf("%s: %v, want %s", tc.sql, problems, tc.want)
		}
	}
}

var errRecorded = errors.New("statement recorded, not run")

// recorder is a Queryer that keeps the statements it is given.
type recorder []string

func (r *recorder) QueryContext(_ context.Context, q string, _ ...any) (*sql.Rows, error) {
	*r = append(*r, q)
	return nil, errRecorded
}

// schemaColumns returns the columns of each table of ent's migration schema.
func schemaColumns() map[string]map[string]bool {
	tables := map[string]map[string]bool{}
	for _, t := range migrate.Tables {
		cols := map[string]bool{}
		for _, c := range t.Columns {
			cols[c.Name] = true
		}
		tables[t.Name] = cols
	}
	return tables
}

// The words of SQL the statements use that are neither tables nor columns.
var (
	keywords = words(`select from where and or not null is in union all as distinct
		insert into values returning delete update set on conflict do exists with cross join over order by
		case when then else end for true false array using`)
	functions = words(`cast coalesce json_agg json_group_array jsonb_build_array tstzrange json_array_length jsonb_array_length
		row_number cardinality count set_config`)
	// tableFunctions are the functions that a FROM reads like a table, with
	// their columns.
	tableFunctions = map[string]map[string]bool{"json_each": words(`key value type atom id parent fullkey path`),
		"unnest": words(`id`)} // named by its alias's column list
)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// token is an identifier (qual.name or name), "(" or ")".
type token struct{ qual, name, punct string }

// tokens splits a statement into identifiers and parentheses, dropping
// string literals, parameters ($1), numbers, operators and the types of
// PostgreSQL casts (::text). Identifiers are lower-cased.
func tokens(q string) []token {
	var out []token
	ident := func(i int) int {
		for i < len(q) && (q[i] == '_' || unicode.IsLetter(rune(q[i])) || unicode.IsDigit(rune(q[i]))) {
			i++
		}
		return i
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '\'':
			end := strings.IndexByte(q[i+1:], '\'')
			if end < 0 {
				return out
			}
			i += end + 2
		case c == '$':
			i = ident(i + 1)
		case c == ':' && i+1 < len(q) && q[i+1] == ':':
			i = ident(i + 2)
		case c == '(' || c == ')':
			out = append(out, token{punct: string(c)})
			i++
		case c == '_' || unicode.IsLetter(rune(c)):
			end := ident(i)
			t := token{name: strings.ToLower(q[i:end])}
			if end+1 < len(q) && q[end] == '.' {
				next := ident(end + 1)
				t.qual, t.name, end = t.name, strings.ToLower(q[end+1:next]), next
			}
			out = append(out, t)
			i = end
		case unicode.IsDigit(rune(c)):
			i = ident(i)
		default:
			i++
		}
	}
	return out
}

// checkSQL returns what a statement names that the schema lacks: tables
// (after FROM, INTO, JOIN or UPDATE), columns qualified by a table or its
// alias, and unqualified columns, which must belong to a table read by the
// same select (the parts of a UNION are apart). Any other word must be a
// known keyword or function; the lists above grow with new statements.
func checkSQL(q string, schema map[string]map[string]bool) []string {
	var problems []string
	ts := tokens(q)
	used := make([]bool, len(ts))
	word := func(i int) string {
		if i < 0 || i >= len(ts) || ts[i].punct != "" || ts[i].qual != "" {
			return ""
		}
		return ts[i].name
	}
	// Common table expressions (WITH name AS (...), name AS (...)) are
	// tables whose columns are the schema's columns their bodies name and
	// the aliases they make (AS).
	schema = maps.Clone(schema)
	for i := range ts {
		if name := word(i); name == "" || keywords[name] || word(i+1) != "as" || i+2 >= len(ts) || ts[i+2].punct != "(" ||
			(word(i-1) != "with" && (i == 0 || ts[i-1].punct != ")")) {
			continue
		}
		used[i] = true
		cols, read := map[string]bool{}, []string{}
		end, depth := i+2, 0
		for ; end < len(ts); end++ {
			if ts[end].punct == "(" {
				depth++
			} else if ts[end].punct == ")" {
				if depth--; depth == 0 {
					break
				}
			}
			switch word(end - 1) {
			case "from", "into", "join", "update":
				read = append(read, word(end))
			case "as":
				cols[word(end)] = true
			}
		}
		for j := i + 2; j < end; j++ {
			for _, t := range read {
				if schema[t][ts[j].name] {
					cols[ts[j].name] = true
				}
			}
		}
		schema[ts[i].name] = cols
	}
	// Tables, table functions and their aliases, and which part each is in.
	aliases := map[string]map[string]bool{}
	partTables := map[int][]string{}
	part, partOf := 0, make([]int, len(ts))
	for i := range ts {
		if word(i) == "union" {
			part++
		}
		partOf[i] = part
		name := word(i)
		switch word(i - 1) {
		case "from", "into", "join", "update":
		default:
			continue
		}
		if name == "" || keywords[name] {
			continue
		}
		used[i] = true
		end := i
		cols, ok := schema[name]
		if fn := tableFunctions[name]; fn != nil && i+1 < len(ts) && ts[i+1].punct == "(" {
			cols, ok = fn, true
			for depth := 0; end+1 < len(ts); {
				end++
				if ts[end].punct == "(" {
					depth++
				} else if ts[end].punct == ")" {
					if depth--; depth == 0 {
						break
					}
				}
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("table %q is not in ent's schema", name))
			continue
		}
		aliases[name] = cols
		partTables[part] = append(partTables[part], name)
		if word(end+1) == "as" {
			end++
		}
		if a := word(end + 1); a != "" && !keywords[a] {
			used[end+1] = true
			aliases[a] = cols
		}
	}
	for i, t := range ts {
		if used[i] || t.punct != "" {
			continue
		}
		switch {
		case t.qual != "":
			cols, ok := aliases[t.qual]
			if !ok {
				problems = append(problems, fmt.Sprintf("%q: no table or alias %q", t.qual+"."+t.name, t.qual))
			} else if !cols[t.name] {
				problems = append(problems, fmt.Sprintf("column %q is not in its table in ent's schema", t.qual+"."+t.name))
			}
		case keywords[t.name], word(i-1) == "as": // a keyword; a type or an alias
		case i+1 < len(ts) && ts[i+1].punct == "(":
			if !functions[t.name] {
				problems = append(problems, fmt.Sprintf("function %q is not known to this check (add it if it is one)", t.name))
			}
		default:
			found := false
			for _, table := range partTables[partOf[i]] {
				found = found || schema[table][t.name]
			}
			if !found {
				problems = append(problems, fmt.Sprintf("column %q in none of %v in ent's schema", t.name, partTables[partOf[i]]))
			}
		}
	}
	return problems
}

func ptr[T any](v T) *T { return &v }
