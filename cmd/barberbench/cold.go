package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	catalogs "barberd/graph/catalog"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// The cold scenario asks GET /availability for days in a cycle over every
// unit, service and date of --days, shuffled once: a day comes back only
// after every other has been asked, so with more days than the server's
// availability cache keeps (seed --units 20, serve with
// --availability-cache-mb 1) every request is a miss. The report gives the
// server's own count of hits and misses during the phase.
//
// Its floor is what a miss cannot do without: the day's one essential
// statement (store.ScheduleRows, the hours, time off and reservations of
// the day's eligible barbers, with the tenant filter) run directly on the
// database, then an answer of the same bytes written over HTTP from memory
// (real answers of the scenario, fetched before the floors, served by a
// bare net/http server in barberbench), at the same concurrency.

// coldDay is one day the cold scenario asks for.
type coldDay struct {
	unitID, serviceID string
	day               int // days after today
}

// coldRun is the cold scenario's cycle and its floor's state.
type coldRun struct {
	days      []coldDay
	next      atomic.Int64
	accountID string
	blocks    map[string]time.Duration // each service's slot and buffer, by id
	answers   *answerServer            // sample answers the floor writes
}

// take is the next day of the cycle.
func (c *coldRun) take() coldDay {
	return c.days[int(c.next.Add(1)-1)%len(c.days)]
}

// prepareCold lays out the cycle and, with --database-url, the floor.
func (b *bench) prepareCold(ctx context.Context) error {
	c := &coldRun{}
	for _, u := range b.cat.units {
		for _, s := range b.cat.services[u.ID] {
			for d := 1; d <= b.c.days; d++ {
				c.days = append(c.days, coldDay{u.ID, s.ID, d})
			}
		}
	}
	rng := mrand.New(mrand.NewPCG(b.c.seed, 0))
	rng.Shuffle(len(c.days), func(i, j int) { c.days[i], c.days[j] = c.days[j], c.days[i] })
	b.cold = c
	if b.floor == nil {
		return nil
	}
	db := b.floor.db
	q := "SELECT account_id FROM units WHERE id = $1"
	if db.Dialect == dialect.SQLite {
		q = "SELECT account_id FROM units WHERE id = ?"
	}
	if err := db.SQL.QueryRowContext(ctx, q, b.cat.units[0].ID).Scan(&c.accountID); err != nil {
		return fmt.Errorf("cold floor: the account: %w", err)
	}
	var err error
	if c.blocks, err = serviceBlocks(ctx, db, c.accountID); err != nil {
		return fmt.Errorf("cold floor: the services: %w", err)
	}
	// Sample answers from the end of the cycle, which the measured phases
	// reach last, if at all.
	i := 0
	c.answers, err = b.serveSamples(ctx, rng, min(answerSamples, len(c.days)), func(w *worker) string {
		i++
		return w.coldQuery(c.days[len(c.days)-i])
	})
	if err != nil {
		return fmt.Errorf("cold floor: %w", err)
	}
	return nil
}

func (c *coldRun) close() {
	if c != nil {
		c.answers.close()
	}
}

// coldQuery is the GET /availability of day d (with --one-barber, for one
// of its barbers).
func (w *worker) coldQuery(d coldDay) string {
	q := "/availability?unit_id=" + d.unitID + "&service_id=" + d.serviceID
	if barbers := w.b.cat.barbers[d.unitID+"/"+d.serviceID]; w.b.c.oneBarber && len(barbers) > 0 {
		q += "&barber_id=" + pick(w.rng, barbers).ID
	}
	return q + "&date=" + w.b.date(d.unitID, d.day)
}

// coldOnly asks for the next day of the cycle.
func (w *worker) coldOnly(ctx context.Context) error {
	_, err := w.do(ctx, "GET /availability", http.MethodGet, w.coldQuery(w.b.cold.take()), nil, nil)
	return stopOr(err)
}

// coldFloor measures the day-read floor, once the scenario is cold and the
// database known.
func (b *bench) coldFloor(ctx context.Context, rep *Report) {
	if b.cold == nil || b.floor == nil {
		return
	}
	fmt.Fprintf(b.logOut, "barberbench: day-read floor (a day's statement and its answer's bytes) %s\n", b.c.floorDuration)
	rep.ReadFloor = b.timedFloor(ctx, rep, "day read", "day_read_floor", "the day-read floor", func(ctx context.Context) error {
		i := int(b.cold.next.Add(1) - 1)
		if err := b.readDay(ctx, b.cold.days[i%len(b.cold.days)]); err != nil {
			return err
		}
		return b.cold.answers.get(ctx, i)
	})
}

// readDay runs the one statement barberd sends to read day d of its
// unit's eligible barbers, on the span and weekday barberd asks for.
func (b *bench) readDay(ctx context.Context, d coldDay) error {
	loc := b.cat.locs[d.unitID]
	local := time.Now().In(loc).AddDate(0, 0, d.day)
	barbers := b.cat.barbers[d.unitID+"/"+d.serviceID]
	ids := make([]string, len(barbers))
	for i, br := range barbers {
		ids[i] = br.ID
	}
	ctx = tenant.WithAccount(ctx, b.cold.accountID)
	date := slots.Date{Year: local.Year(), Month: local.Month(), Day: local.Day()}
	span := catalogs.DaySpan(date, loc, b.cold.blocks[d.serviceID])
	_, err := store.ScheduleRows(ctx, b.floor.db.SQL, b.floor.db.Dialect, d.unitID, ids, []int{int(local.Weekday())},
		span.Start, span.End, time.Now())
	return err
}

// counters are the server's counts that a scenario's report notes, from
// its /metrics: the availability cache's hits and misses, and the version
// queries its fence sent (graph/fresh).
type counters struct {
	hits, misses, versionReads int64
}

// serverCounters reads the server's counters from its /metrics (false when
// it serves none there).
func (b *bench) serverCounters(ctx context.Context) (c counters, ok bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.cl.root+"/metrics", nil)
	if err != nil {
		return c, false
	}
	resp, err := b.cl.http.Do(req)
	if err != nil {
		return c, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return c, false
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into *int64
		switch {
		case strings.HasPrefix(line, "barberd_cache_lookups_total{") && strings.Contains(line, `cache="availability"`):
			into = &c.misses
			if strings.Contains(line, `result="hit"`) {
				into = &c.hits
			}
		case strings.HasPrefix(line, "barberd_version_reads_total "):
			into = &c.versionReads
		default:
			continue
		}
		n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			continue
		}
		ok = true
		*into += int64(n)
	}
	return c, ok
}

// noteCounters notes the availability cache's hits and misses, and the
// version queries, between two readings over requests requests.
func noteCounters(rep *Report, before, after counters, requests int) {
	h, m := after.hits-before.hits, after.misses-before.misses
	if h+m > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("availability cache during the scenario (server's /metrics): %d hits, %d misses (%.1f%% misses)", h, m, 100*float64(m)/float64(h+m)))
	}
	if v := after.versionReads - before.versionReads; v > 0 && requests > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("version queries during the scenario (server's /metrics): %d, one per %.1f requests", v, float64(requests)/float64(v)))
	}
}

// serviceBlocks reads the length of each service's slot and buffer, by
// id, for the day spans the floor reads as barberd does.
func serviceBlocks(ctx context.Context, db *store.DB, accountID string) (map[string]time.Duration, error) {
	q := "SELECT id, duration_minutes + buffer_minutes FROM services WHERE account_id = $1"
	rows, err := db.SQL.QueryContext(ctx, q, accountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]time.Duration{}
	for rows.Next() {
		var id string
		var minutes int
		if err := rows.Scan(&id, &minutes); err != nil {
			return nil, err
		}
		out[id] = time.Duration(minutes) * time.Minute
	}
	return out, rows.Err()
}
