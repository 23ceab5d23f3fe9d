package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/lib/pq"

	"barberd/ent"
)

// openingReach is how far before a freed span a waiting entry's window may
// start and still want it: an entry spans at most 31 days (and the
// service's length), so one whose earliest start is older cannot reach the
// span, and the index range the probe walks stays bounded.
const openingReach = 33 * 24 * time.Hour

// OpeningSpan is a barber's time that became free, and the id of the
// opening InsertOpenings writes for it.
type OpeningSpan struct {
	ID         string
	Start, End time.Time
}

// openingsPerStatement bounds the spans InsertOpenings probes in one
// statement (SQLite binds each span's values, and caps a statement's).
const openingsPerStatement = 100

// InsertOpenings records that spans of a barber's time became free, each
// with its id, where a waiting entry of the account may want it
// (wantedSpan), and returns the ids of the rows it wrote. Why not ent: the
// check and the insert are one statement, and one walk of the index of
// waiting entries, however many entries wait; and the spans a statement
// frees together (a barber's expired holds) are probed together, up to
// openingsPerStatement in a statement, where each took a statement of its
// own while the barber's writers waited (docs/performance.md).
func (db *DB) InsertOpenings(ctx context.Context, c Queryer, accountID, barberID string, spans []OpeningSpan, now time.Time) ([]string, error) {
	if len(spans) == 0 {
		return nil, nil
	}
	dia := db.Dialect
	var wrote []string
	scan := func(rows *sql.Rows) error {
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			wrote = append(wrote, id)
		}
		return rows.Err()
	}
	var steps []step
	if dia == dialect.Postgres && !Fenced(ctx, accountID) {
		// The probe holds the account's waitlist fence, shared, until the
		// commit (LockWaitlist), taken before it: a sequence, so the probe
		// begins once the fence is held.
		steps = append(steps, fenceStep(accountID))
	}
	for part := range slices.Chunk(spans, openingsPerStatement) {
		steps = append(steps, step{query: func(param func(any) string) (string, error) {
			if len(part) == 1 {
				s := part[0]
				return insertOpeningQuery(dia, param, s.ID, accountID, barberID, s.Start, s.End, now), nil
			}
			return insertOpeningsQuery(dia, param, accountID, barberID, part, now), nil
		}, scan: scan})
	}
	err := db.sequence(ctx, c, "waitlist probe", steps...)
	return wrote, err
}

// fenceStep takes the account's waitlist fence, shared, until the commit.
func fenceStep(accountID string) step {
	return step{query: func(bind func(any) string) (string, error) {
		return `SELECT pg_advisory_xact_lock_shared(` + waitlistFence + `, hashtext(` + bind(accountID) + `))`, nil
	}, scan: drained}
}

// FenceWaitlist takes, in the transaction c, the account's waitlist fence
// that the freeings' probe holds (shared, until the commit; PostgreSQL),
// and returns a context under which InsertOpenings, in the same
// transaction, probes without taking it again. A writer that is about to
// lock a barber's row takes it first, so that the probe after the lock
// costs one statement fewer while the barber's other writers wait.
func (db *DB) FenceWaitlist(ctx context.Context, c Queryer, accountID string) (context.Context, error) {
	if db.Dialect != dialect.Postgres || Fenced(ctx, accountID) {
		return ctx, nil
	}
	if err := db.sequence(ctx, c, "waitlist fence", fenceStep(accountID)); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, fencedKey{}, accountID), nil
}

// FenceIn returns a condition that takes the account's waitlist fence
// (shared, until the commit) in the statement of the query it is added
// to, before that statement reads a row (an InitPlan, which the statement's
// one-time filter evaluates first, whether a row matches or not; not an
// EXISTS, whose select list PostgreSQL drops unevaluated), and ctx marked as holding it
// (Fenced) for the statements after that one: a writer that frees time
// takes it with its first read instead of in a round trip of its own.
// Elsewhere the condition is true and ctx unchanged.
func (db *DB) FenceIn(ctx context.Context, accountID string) (context.Context, func(*entsql.Selector)) {
	if db.Dialect != dialect.Postgres || Fenced(ctx, accountID) {
		return ctx, func(*entsql.Selector) {}
	}
	return context.WithValue(ctx, fencedKey{}, accountID), func(s *entsql.Selector) {
		s.Where(entsql.P(func(b *entsql.Builder) {
			b.WriteString(`(SELECT pg_advisory_xact_lock_shared(` + waitlistFence + `, hashtext(`).Arg(accountID).WriteString(`))) IS NOT NULL`)
		}))
	}
}

// Fenced reports whether ctx says that its transaction holds the
// account's waitlist fence (FenceWaitlist).
func Fenced(ctx context.Context, accountID string) bool {
	held, _ := ctx.Value(fencedKey{}).(string)
	return held != "" && held == accountID
}

// fencedKey is the context key of the account whose waitlist fence the
// context's transaction holds.
type fencedKey struct{}

// insertOpeningQuery is InsertOpenings' statement for one span, its
// values named by param.
func insertOpeningQuery(dia string, param func(any) string, id, accountID, barberID string, start, end, now time.Time) string {
	account, barber := param(accountID), param(barberID)
	from, to, active := param(start), param(end), param(now)
	reachFloor := ""
	if dia != dialect.Postgres {
		reachFloor = param(start.Add(-openingReach))
	}
	return `INSERT INTO openings (id, account_id, barber_id, starts_at, ends_at, created_at)
SELECT ` + param(id) + `, ` + account + `, ` + barber + `, ` + from + `, ` + to + `, ` + active + `
WHERE ` + wantedSpan(dia, account, barber, from, to, active, reachFloor, nil) + `
RETURNING id`
}

// insertOpeningsQuery is InsertOpenings' statement for several spans,
// its values named by param. On PostgreSQL the spans are arrays, so that
// one text (and one prepared statement) serves every count, and the
// condition is barberd_opening_wanted, as a freeing statement's own probe
// (probeEntry) has it; SQLite lists them.
func insertOpeningsQuery(dia string, param func(any) string, accountID, barberID string, spans []OpeningSpan, now time.Time) string {
	account, barber, active := param(accountID), param(barberID), param(now)
	insert := `INSERT INTO openings (id, account_id, barber_id, starts_at, ends_at, created_at)
SELECT f.id, ` + account + `, ` + barber + `, f.s, f.e, ` + active
	if dia == dialect.Postgres {
		ids, starts, ends := make(pq.StringArray, len(spans)), make(pq.StringArray, len(spans)), make(pq.StringArray, len(spans))
		for i, s := range spans {
			ids[i], starts[i], ends[i] = s.ID, string(pq.FormatTimestamp(s.Start)), string(pq.FormatTimestamp(s.End))
		}
		return insert + `
FROM (SELECT u.id, CAST(u.s AS timestamptz) AS s, CAST(u.e AS timestamptz) AS e
  FROM unnest(` + param(ids) + `, ` + param(starts) + `, ` + param(ends) + `) AS u (id, s, e)) f
WHERE f.e > ` + active + ` AND barberd_opening_wanted(` + account + `, ` + barber + `, f.s, f.e, ` + active + `, NULL::text, NULL::timestamptz, NULL::timestamptz)
RETURNING id`
	}
	rows := make([]string, len(spans))
	for i, s := range spans {
		rows[i] = `(` + param(s.ID) + `, ` + param(s.Start) + `, ` + param(s.End) + `, ` + param(s.Start.Add(-openingReach)) + `)`
	}
	return `WITH f (id, s, e, reach) AS (VALUES ` + strings.Join(rows, `, `) + `)
` + insert + `
FROM f WHERE ` + wantedSpan(dia, account, barber, `f.s`, `f.e`, active, `f.reach`, nil) + `
RETURNING id`
}

// spanExprs is a barber's time as SQL expressions: the barber's id and
// the span's instants.
type spanExprs struct{ barber, from, to string }

// wantedSpan is the SQL condition that a waiting entry of the account may
// want the barber's time from from to to, as of active (each an SQL
// expression: a parameter, or a column of the row a statement reads): one
// waiting for that barber or any, at one of the barber's units for one of
// the barber's services, whose times (earliest_start to window_end, or
// latest_end on older rows) reach the span, and whose service (with its
// buffer) fits the gap the span lies in, between the barber's active
// reservations before and after it (hours and time off only narrow that
// gap further; a reservation written inside the span since it was freed
// is not counted, so the condition never leaves out an entry a free start
// of the span would suit). reachFloor, when not empty, bounds the
// entries' earliest start from below (openingReach), so that SQLite's walk
// of their index by earliest start stays bounded; PostgreSQL finds them by
// their span's index. written, when not nil, is a reservation the
// statement itself writes, which its snapshot does not hold: the gap
// counts it (PostgreSQL).
func wantedSpan(dia, account, barber, from, to, active, reachFloor string, written *spanExprs) string {
	// The gap: the end of the last active reservation starting before
	// the span and the start of the first at or after its end (NULL:
	// none). A block that touches the span and overlaps no reservation
	// lies in it.
	live := ` AND r.barber_id = ` + barber + ` AND (r.expires_at IS NULL OR r.expires_at > ` + active + `)`
	// OFFSET 0 keeps PostgreSQL from pulling a subquery up into the
	// conditions that read it, which would run it again for each: the gap's
	// two lookups, a unit's time zone check (a subtransaction each) and the
	// day's arithmetic are each made once per row. The probe then took half
	// the time to plan and to run (docs/performance.md).
	fence := ""
	if dia == dialect.Postgres {
		fence = " OFFSET 0"
	}
	prev := `(SELECT r.ends_at FROM reservations r WHERE r.starts_at < ` + from + live + ` ORDER BY r.starts_at DESC LIMIT 1)`
	nxt := `(SELECT r.starts_at FROM reservations r WHERE r.starts_at >= ` + to + live + ` ORDER BY r.starts_at LIMIT 1)`
	if w := written; w != nil {
		// Reservations do not overlap: of two starting before the span,
		// the later ends later.
		same := w.barber + ` = ` + barber
		prev = `GREATEST(` + prev + `, CASE WHEN ` + same + ` AND ` + w.from + ` < ` + from + ` THEN ` + w.to + ` END)`
		nxt = `LEAST(` + nxt + `, CASE WHEN ` + same + ` AND ` + w.from + ` >= ` + to + ` THEN ` + w.from + ` END)`
	}
	gap := `(SELECT ` + prev + ` AS prev,
` + nxt + ` AS nxt` + fence + `) g`
	fits := `g.prev + (s.duration_minutes + s.buffer_minutes) * interval '1 minute' <= g.nxt`
	// On PostgreSQL the entries are found by their span's index, and by
	// nothing else: the span's overlap is the whole condition on their
	// times, so no plan can walk the B-tree of the entries by earliest
	// start instead (a generic plan did, over every entry waiting before
	// the span: 3 ms a probe with 1,000 entries, against 0.6 ms). waiting
	// is written out, not bound, so that every plan may use the partial
	// index. SQLite compares the times themselves, its walk of the
	// entries' earliest start bounded below by reachFloor.
	reach := ` AND ` + spanOverlap(from, to)
	if dia != dialect.Postgres {
		fits = `(julianday(g.nxt) - julianday(g.prev)) * 1440 + 0.001 >= s.duration_minutes + s.buffer_minutes`
		reach = ` AND w.earliest_start < ` + to + ` AND COALESCE(w.window_end, w.latest_end) > ` + from
		if reachFloor != "" {
			reach += ` AND w.earliest_start > ` + reachFloor
		}
	}
	entries := `SELECT 1 FROM waitlist_entries w JOIN services s ON s.id = w.service_id
WHERE w.account_id = ` + account + ` AND w.waiting` + reach + `
AND (w.barber_id IS NULL OR w.barber_id = ` + barber + `)
AND EXISTS (SELECT 1 FROM unit_barbers ub WHERE ub.unit_id = w.unit_id AND ub.barber_id = ` + barber + `)
AND EXISTS (SELECT 1 FROM barber_services bs WHERE bs.barber_id = ` + barber + ` AND bs.service_id = w.service_id)
AND (g.prev IS NULL OR g.nxt IS NULL OR ` + fits + `)`
	if dia == dialect.Postgres {
		// The working hours are asked once for each unit and length of
		// service among the entries that fit the gap, not once for each
		// entry: about 0.07 ms a call, and where the gap runs back to the
		// night before or across a break, every entry of a long service
		// fits it and the hours alone refuse them. The fence keeps
		// PostgreSQL from pushing the call below the DISTINCT, into the
		// join of the entries, where it ran once for each entry of the
		// span that fit the gap (whatever its barber's services), before
		// the entries were made distinct.
		entries = `SELECT 1 FROM (SELECT DISTINCT w.unit_id, s.duration_minutes, s.buffer_minutes` +
			strings.TrimPrefix(entries, `SELECT 1`) + fence + `) c
WHERE NOT barberd_hours_refuse(` + barber + `, c.unit_id, ` + from + `, ` + to + `, g.prev, g.nxt, c.duration_minutes, c.buffer_minutes)`
	}
	return `EXISTS (SELECT 1 FROM ` + gap + ` WHERE EXISTS (` + entries + `))`
}

// hoursRefuse is PostgreSQL's condition that the barber's working hours
// at the unit leave no start for a service of duration minutes (and
// buffer) that could touch the span from from to to, in the gap from prev
// to nxt (NULL: open): a start s lies between the gap's start and the
// span's end, its block (service and buffer) ends after the span
// starts and by the gap's end, and its service lies in one working span
// of the day (hours less breaks; the buffer may run past it), as the slot
// engine has it. The earliest such start in a working span is the
// earliest the gap allows or the span's own start (the opening or a
// break's end), so those are the only starts it tries. It refuses only on
// a day without a clock change whose starts all fall on one local date,
// at hours it can read (HH:MM, as barberd writes them) in a time zone
// PostgreSQL knows (barberd_zone_known); elsewhere, and on
// SQLite, the gap alone decides, which never leaves out an entry (time
// off, the slot grid and the lead only narrow the starts further). A
// freeing next to a break or the day's end, whose gap the break or the
// night makes long, then costs no offer pass for services the working
// span cannot take. wantedSpan asks it once for each unit and length of
// service among the entries whose service fits the gap, through
// barberd_hours_refuse (postgresHoursRefuse).
func hoursRefuse(barber, unit, from, to, prev, nxt, duration, buffer string) string {
	const clock = `'^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$'`
	// at is the instant of the wall time t (HH:MM) on r.d at the unit;
	// NULL, where no cast can fail, for a t that is not a clock time (the
	// checks below then refuse nothing, whatever order the database
	// evaluates them in).
	at := func(t string) string {
		return `(CASE WHEN ` + t + ` ~ ` + clock + ` THEN (r.d + (` + t + `)::time) AT TIME ZONE z.tz END)`
	}
	// The breaks as text (none for SQL NULL or JSON null, as ent reads
	// them; a value that is not an array fails the check below).
	breaks := `jsonb_array_elements_text(CASE WHEN jsonb_typeof(h.breaks) = 'array' THEN h.breaks ELSE '[]'::jsonb END) AS x`
	part := func(i string) string { return `btrim(split_part(x, '-', ` + i + `))` }
	return `EXISTS (SELECT 1 FROM units u
JOIN working_hours h ON h.unit_id = u.id AND h.barber_id = ` + barber + `
CROSS JOIN LATERAL (SELECT CASE WHEN barberd_zone_known(u.timezone) THEN u.timezone END AS tz OFFSET 0) z
CROSS JOIN LATERAL (SELECT
  GREATEST(` + prev + `, ` + from + ` - (` + duration + ` + ` + buffer + `) * interval '1 minute') AS lo,
  LEAST(` + nxt + ` - (` + duration + ` + ` + buffer + `) * interval '1 minute', ` + to + `) AS hi,
  ` + duration + ` * interval '1 minute' AS dur,
  ((` + from + ` - (` + duration + ` + ` + buffer + `) * interval '1 minute') AT TIME ZONE z.tz)::date AS d OFFSET 0) r
WHERE u.id = ` + unit + ` AND h.weekday = EXTRACT(DOW FROM r.d)
AND ((` + to + ` - interval '1 microsecond') AT TIME ZONE z.tz)::date = r.d
AND ((r.d + 1)::timestamp AT TIME ZONE z.tz) - (r.d::timestamp AT TIME ZONE z.tz) = interval '24 hours'
AND h.opens_at ~ ` + clock + ` AND h.closes_at ~ ` + clock + `
AND COALESCE(jsonb_typeof(h.breaks), 'null') IN ('array', 'null')
AND NOT EXISTS (SELECT 1 FROM ` + breaks + ` WHERE NOT (` + part("1") + ` ~ ` + clock + ` AND ` + part("2") + ` ~ ` + clock + `))
AND NOT EXISTS (SELECT 1 FROM (SELECT r.lo AS c UNION ALL SELECT ` + at("h.opens_at") + `
  UNION ALL SELECT ` + at(part("2")) + ` FROM ` + breaks + `) starts
  WHERE starts.c >= r.lo AND starts.c <= r.hi AND starts.c >= ` + at("h.opens_at") + ` AND starts.c + r.dur <= ` + at("h.closes_at") + `
  AND NOT EXISTS (SELECT 1 FROM ` + breaks + ` WHERE ` + at(part("1")) + ` < starts.c + r.dur AND ` + at(part("2")) + ` > starts.c)))`
}

// postgresHoursRefuse is barberd_hours_refuse(barber, unit, from, to,
// prev, nxt, duration, buffer), hoursRefuse as a function: wantedSpan
// calls it only for the units and lengths of the entries whose service
// fits the gap, where the
// condition written inline was planned, and set up to run, with every
// probe (about 0.1 ms a probe with no entry to ask it for). PL/pgSQL
// keeps its plan for the session; stable, it reads the snapshot of the
// statement that calls it.
var postgresHoursRefuse = []string{
	`CREATE OR REPLACE FUNCTION barberd_hours_refuse(p_barber text, p_unit text, p_from timestamptz, p_to timestamptz,
		p_prev timestamptz, p_nxt timestamptz, p_duration bigint, p_buffer bigint) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
		BEGIN
			RETURN ` + hoursRefuse("p_barber", "p_unit", "p_from", "p_to", "p_prev", "p_nxt", "p_duration", "p_buffer") + `;
		END $$`,
}

// postgresOpeningWanted is barberd_opening_wanted(account, barber, from,
// to, active, written barber, from, to), the probe of a freed span that
// rides with a freeing's statement (probeEntry) as a function: most freed
// spans reach no waiting entry of the account, which one look at the
// span's index tells, and only then does the function run wantedSpan's
// condition. Written inline, that condition's plan (the gap's two lookups,
// the entries' join, the hours' call) was started with every cancel and
// reschedule, whether it ran or not: about 0.1 to 0.3 ms of the
// database's CPU a cancel with no entry waiting (docs/performance.md).
// The written reservation's values are NULL when the statement writes
// none. PL/pgSQL keeps its plans for the session; stable, it reads the
// snapshot of the statement that calls it, as the condition inline did.
// Its plans are generic from the first run: PostgreSQL would otherwise
// plan the probe's condition afresh on every call where its generic plan
// looked dearer than those made for each call's values (a waitlist
// scenario's cancel cost the database 0.4 ms more with entries waiting).
var postgresOpeningWanted = []string{
	`CREATE OR REPLACE FUNCTION barberd_opening_wanted(p_account text, p_barber text, p_from timestamptz, p_to timestamptz,
		p_active timestamptz, p_written_barber text, p_written_from timestamptz, p_written_to timestamptz) RETURNS boolean LANGUAGE plpgsql STABLE
		SET plan_cache_mode = force_generic_plan AS $$
		BEGIN
			IF NOT ` + openingReached("p_account", "p_from", "p_to") + ` THEN
				RETURN false;
			END IF;
			RETURN ` + openingWanted("p_account", "p_barber", "p_from", "p_to", "p_active", "p_written_barber", "p_written_from", "p_written_to") + `;
		END $$`,
}

// openingReached is PostgreSQL's condition that a waiting entry of the
// account reaches the span from from to to, by the span's index.
func openingReached(account, from, to string) string {
	return `EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.account_id = ` + account + ` AND w.waiting AND ` + spanOverlap(from, to) + `)`
}

// spanOverlap is PostgreSQL's condition that a waiting entry's span
// (WaitingSpan, as its index has it) overlaps the span from from to to.
func spanOverlap(from, to string) string {
	return WaitingSpan + ` && tstzrange(` + from + `, ` + to + `, '[)')`
}

// openingWanted is wantedSpan on PostgreSQL with a written reservation's
// expressions (their values NULL when none is written).
func openingWanted(account, barber, from, to, active, writtenBarber, writtenFrom, writtenTo string) string {
	return wantedSpan(dialect.Postgres, account, barber, from, to, active, "", &spanExprs{barber: writtenBarber, from: writtenFrom, to: writtenTo})
}

// postgresZoneKnown is barberd_zone_known(name): whether PostgreSQL knows
// the time zone name, where AT TIME ZONE fails on one it does not (a
// unit's zone is checked against Go's zone database, which may be newer
// than the server's). Declared immutable, as the zone database is for a
// running server; the exception block costs a subtransaction per call.
var postgresZoneKnown = []string{
	`CREATE OR REPLACE FUNCTION barberd_zone_known(name text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
		BEGIN
			PERFORM now() AT TIME ZONE name;
			RETURN true;
		EXCEPTION WHEN OTHERS THEN
			RETURN false;
		END $$`,
}

// WaitingSpanIndex is the name of PostgreSQL's index of the waiting
// entries by the span of time they may want (postgresWaitingSpan).
const WaitingSpanIndex = "waitlist_entries_waiting_span"

// WaitingSpan is the span of time a waiting entry may want on PostgreSQL,
// as its index has it: from its earliest start to the end of its window
// (window_end, or latest_end on older rows; never before the start). A
// freed span overlaps it (&&) exactly when the entry's times reach the
// span, as both the freeings' probe and the offer pass ask; the index
// finds those entries without walking the others.
const WaitingSpan = `tstzrange(earliest_start, GREATEST(earliest_start, COALESCE(window_end, latest_end)), '[)')`

// postgresWaitingSpan indexes the waiting entries by WaitingSpan (a
// partial index: entries leave it once they stop waiting), with btree_gist
// for the account: the index the freeings' probe and the offer pass's
// candidates are found by, however many entries wait.
var postgresWaitingSpan = []string{
	`CREATE INDEX IF NOT EXISTS ` + WaitingSpanIndex + ` ON waitlist_entries USING gist (account_id, ` + WaitingSpan + `) WHERE waiting`,
}

// literal is v as a PostgreSQL literal, for the text of a simple query
// (which takes no parameters): strings quoted, instants as lib/pq sends
// them, each typed by literalType.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return pq.QuoteLiteral(v) + literalType(v)
	case time.Time:
		return pq.QuoteLiteral(string(pq.FormatTimestamp(v))) + literalType(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case pq.StringArray:
		text, _ := v.Value()
		return pq.QuoteLiteral(text.(string)) + literalType(v)
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	panic(fmt.Sprintf("literal of %T", v))
}

// literalType is the PostgreSQL cast that types a value of v's type.
func literalType(v any) string {
	switch v.(type) {
	case string:
		return "::text"
	case time.Time:
		return "::timestamptz"
	case int64:
		return "::bigint"
	case bool:
		return "::boolean"
	case pq.StringArray:
		return "::text[]"
	}
	panic(fmt.Sprintf("literal type of %T", v))
}

// waitlistFence is the first key of the PostgreSQL advisory locks that
// fence an account's waitlist (the second is the account's hash).
const waitlistFence = "4242"

// LockWaitlist waits, on PostgreSQL, until the transactions that freed the
// account's time and probed for waiting entries before this one's entry
// was written have committed, and keeps later ones from probing until this
// one commits: a join that looks for free time after its commit then sees
// all the time freed by transactions that could not see its entry. SQLite
// runs one write transaction at a time: nothing to wait for.
func LockWaitlist(ctx context.Context, c Queryer, dia, accountID string) error {
	if dia != dialect.Postgres {
		return nil
	}
	rows, err := c.QueryContext(ctx, `SELECT pg_advisory_xact_lock(`+waitlistFence+`, hashtext($1))`, accountID)
	if err != nil {
		return err
	}
	return rows.Close()
}

// Opening is a freed span of a barber's time taken by TakeOpenings, with
// its account's config version read by the same statement, and whether a
// waiting entry may still want it (wantedSpan, as of the take).
type Opening struct {
	ID, AccountID, BarberID string
	StartsAt, EndsAt        time.Time
	ConfigVersion           int64
	Wanted                  bool
}

// TakeOpenings deletes the opening id and up to most-1 other openings of
// its barber, oldest first, and returns them (id first), each saying
// whether a waiting entry may still want it as of now: one statement where
// ent takes four, and an opening whose entries another pass offered first
// costs its pass no more. On PostgreSQL it passes over openings another
// transaction holds (FOR UPDATE SKIP LOCKED), and takes none when that is
// id (or id is gone); SQLite's write transactions are serial.
func TakeOpenings(ctx context.Context, c Queryer, dia, id string, most int, now time.Time) ([]Opening, error) {
	var a sqlArgs
	acct, err := tenantFilter(ctx, a.add, "")
	if err != nil {
		return nil, err
	}
	p := a.add(id)
	lock, lockOf := "", ""
	if dia == dialect.Postgres {
		lock, lockOf = " FOR UPDATE SKIP LOCKED", " FOR UPDATE OF o SKIP LOCKED"
	}
	limit := a.add(most)
	// No floor on the entries' earliest start: PostgreSQL finds them by
	// their span's index; on SQLite, whose instants are text, the openings'
	// starts cannot be shifted by openingReach in SQL, so its walk of
	// the index by earliest start begins at the account's oldest entry.
	wanted := wantedSpan(dia, "openings.account_id", "openings.barber_id", "openings.starts_at", "openings.ends_at",
		a.add(now), "", nil)
	q := `WITH op AS (SELECT barber_id FROM openings WHERE id = ` + p + acct + lock + `)
DELETE FROM openings WHERE id IN (SELECT o.id FROM openings o JOIN op ON o.barber_id = op.barber_id
ORDER BY o.id = ` + p + ` DESC, o.created_at, o.id LIMIT ` + limit + lockOf + `)
RETURNING id, account_id, barber_id, starts_at, ends_at,
(SELECT config_version FROM accounts WHERE accounts.id = openings.account_id), ` + wanted
	rows, err := c.QueryContext(ctx, q, a...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Opening
	for rows.Next() {
		var o Opening
		if err := rows.Scan(&o.ID, &o.AccountID, &o.BarberID, &o.StartsAt, &o.EndsAt, &o.ConfigVersion, &o.Wanted); err != nil {
			return nil, err
		}
		o.StartsAt, o.EndsAt = o.StartsAt.UTC(), o.EndsAt.UTC()
		if o.ID == id {
			out = append([]Opening{o}, out...)
		} else {
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

// CommitLazily makes tx commit without waiting for the disk (asyncCommit):
// for an offer pass that took openings and offered nothing, whose loss in
// a crash of the database only brings the openings back.
func (db *DB) CommitLazily(ctx context.Context, tx *ent.Tx) error {
	return db.asyncCommit(ctx, tx)
}
