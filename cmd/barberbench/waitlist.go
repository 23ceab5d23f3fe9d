package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/schema/tenant"
)

// The waitlist scenario cancels booked appointments on fully booked days
// (seed --full-days) in three phases: with no waitlist for half of
// --duration, then for --duration with --waitlist waiting entries joined
// over REST, and after they leave, with none again for the other half. It
// reports the middle phase's cancel throughput against the outer two
// together, which brackets it (the database grows and the machine's other
// load moves through the run, so a phase measured only before would hold
// that drift against the waitlist), and how soon each cancel's offer was
// made. Its pools are read from the
// database (--database-url): there is no REST listing of a day's bookings.
// The cancels of a pool are never adjacent bookings of a barber, so a
// cancel frees one short start and no more: entries for the unit's longest
// service (three in four) stay waiting through the phase, while the rest,
// for the service of a booking in their window, are offered as cancels
// reach them.

// waitlistRun is the waitlist scenario's state.
type waitlistRun struct {
	warm, none, with []pooled    // the appointments each phase cancels
	after            []pooled    // those of the phase with none after the entries left
	pool             chan pooled // the current phase's
	series           string      // the current phase's endpoint name
	dry              atomic.Bool // the phase ran out of appointments before its end
	prefix           string      // the external references of this run's entries
	mu               sync.Mutex
	cancelled        []string // the second phase's cancelled appointments
}

// pooled is a booked appointment to cancel.
type pooled struct {
	id, unitID, serviceID, barberID string
	start                           time.Time
}

// Names of the cancel phases' endpoints.
const (
	cancelAlone   = "POST /appointments/{id}/cancel, no waitlist"
	cancelAfter   = "POST /appointments/{id}/cancel, no waitlist (after)"
	cancelWaiting = "POST /appointments/{id}/cancel, waitlist"
	joinEndpoint  = "POST /waitlist"
)

// prepareWaitlist finds the fully booked days ahead and splits their
// bookings into the pools: the first two days' warm up, the others go to the
// phases on alternate days: the odd ones to the phase with the entries
// waiting, the even ones, halved, to the phases before and after it.
func (b *bench) prepareWaitlist(ctx context.Context) error {
	if b.floor == nil {
		return errors.New("the waitlist scenario needs --database-url (its pools and offer times come from the database)")
	}
	full, err := b.firstFreeDay(ctx)
	if err != nil {
		return err
	}
	if full < 4 {
		return fmt.Errorf("the waitlist scenario needs fully booked days ahead, and the first free time is %d days ahead: seed a fresh database with --full-days 80", full)
	}
	wl := &waitlistRun{prefix: "bench-" + b.runID + "-wl-"}
	sys := tenant.System(ctx)
	type dayBooking struct {
		p   pooled
		day int // days after today, at its unit
	}
	var all []dayBooking
	booked := map[int]bool{}
	for _, u := range b.cat.units {
		loc := b.cat.locs[u.ID]
		today := time.Now().In(loc)
		midnight := func(days int) time.Time {
			return time.Date(today.Year(), today.Month(), today.Day()+days, 0, 0, 0, 0, loc)
		}
		apts, err := b.floor.db.Appointment.Query().
			Where(appointment.UnitID(u.ID), appointment.StatusEQ(appointment.StatusConfirmed),
				appointment.StartsAtGTE(midnight(1)), appointment.StartsAtLT(midnight(full))).
			Order(ent.Asc(appointment.FieldBarberID), ent.Asc(appointment.FieldStartsAt)).
			All(sys)
		if err != nil {
			return fmt.Errorf("waitlist pools: %w", err)
		}
		var barber string
		var day, nth int
		for _, a := range apts {
			d := 1
			for !a.StartsAt.Before(midnight(d + 1)) {
				d++
			}
			if a.BarberID != barber || d != day {
				barber, day, nth = a.BarberID, d, 0
			}
			nth++
			if nth%2 == 0 {
				continue // every other booking: no two cancels of a barber touch
			}
			all = append(all, dayBooking{pooled{a.ID, u.ID, a.ServiceID, a.BarberID, a.StartsAt}, d})
			booked[d] = true
		}
	}
	// The first two days with bookings (the shops may close tomorrow)
	// warm the server up; the others go to the phases by parity.
	days := slices.Sorted(maps.Keys(booked))
	var lastWarm int // the second day with bookings, or the only one
	if len(days) > 0 {
		lastWarm = days[min(1, len(days)-1)]
	}
	for _, x := range all {
		switch {
		case x.day <= lastWarm:
			wl.warm = append(wl.warm, x.p)
		case x.day%2 == 0:
			wl.none = append(wl.none, x.p)
		default:
			wl.with = append(wl.with, x.p)
		}
	}
	// In random order, and as many for each phase.
	rng := mrand.New(mrand.NewPCG(b.c.seed, 0x776c))
	for _, pool := range [][]pooled{wl.warm, wl.none, wl.with} {
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	}
	n := min(len(wl.none), len(wl.with))
	if n == 0 {
		return errors.New("the waitlist scenario found no bookings to cancel on the fully booked days")
	}
	wl.none, wl.after, wl.with = wl.none[:n/2], wl.none[n/2:n], wl.with[:n]
	fmt.Fprintf(b.logOut, "barberbench: waitlist pools: %d bookings to cancel in the warm-up, %d with the entries waiting, %d with none before and %d after\n",
		len(wl.warm), len(wl.with), len(wl.none), len(wl.after))
	b.wl = wl
	wl.use(wl.warm, "cancel (warm-up)")
	return nil
}

// use makes pool the one the cancel workers draw from.
func (wl *waitlistRun) use(pool []pooled, series string) {
	wl.pool, wl.series = make(chan pooled, len(pool)), series
	wl.dry.Store(false)
	for _, p := range pool {
		wl.pool <- p
	}
	close(wl.pool)
}

// cancelOne cancels the next appointment of the phase's pool.
func (w *worker) cancelOne(ctx context.Context) error {
	wl := w.b.wl
	p, ok := <-wl.pool
	if !ok {
		if w.ph.admit() { // the pool, not the phase, ran out
			wl.dry.Store(true)
		}
		return errStop
	}
	ex, err := w.do(ctx, wl.series, http.MethodPost, "/appointments/"+p.id+"/cancel",
		map[string]any{"reason": "Client cannot make it"}, nil)
	if ex.status == http.StatusOK && wl.series == cancelWaiting {
		wl.mu.Lock()
		wl.cancelled = append(wl.cancelled, p.id)
		wl.mu.Unlock()
	}
	return stopOr(err)
}

// waitlist runs the scenario's measured part: cancels with no waitlist,
// the joins, cancels with the entries waiting, the offers' count, the
// entries leaving, and cancels with none again. It returns the phase with
// the entries waiting, which the report totals.
func (b *bench) waitlist(ctx context.Context, rep *Report) (*recorder, time.Duration, error) {
	wl := b.wl
	meter, metered := b.meter, b.metered
	// alone runs a phase with no waitlist for half the duration.
	var dry []string
	alone := func(pool []pooled, series, when string) (EndpointStats, time.Duration, cpuSample) {
		wl.use(pool, series)
		cpu0 := meter.read()
		rec, wall := b.runPhase(ctx, b.c.concurrency, b.c.duration/2, (*worker).cancelOne)
		cpu := meter.read().since(cpu0)
		if wl.dry.Load() {
			dry = append(dry, when)
		}
		return b.addRows(rep, rec, wall, "scenario")[series], wall, cpu
	}
	before, wallBefore, cpuBefore := alone(wl.none, cancelAlone, "with no waitlist")

	fmt.Fprintf(b.logOut, "barberbench: joining %d waitlist entries\n", b.c.waitlist)
	joins, matchable := make([]request, b.c.waitlist), 0
	for i := range joins {
		body, short := b.entryBody(wl.with[i%len(wl.with)], i)
		joins[i] = request{"/waitlist", body}
		if short {
			matchable++
		}
	}
	rec, wall := b.sendEach(ctx, joinEndpoint, http.MethodPost, joins)
	b.addRows(rep, rec, wall, "setup")
	joined := rec.get(joinEndpoint)

	fmt.Fprintf(b.logOut, "barberbench: cancels with %d entries waiting %s\n", joined.status[http.StatusCreated], b.c.duration)
	wl.use(wl.with, cancelWaiting)
	cpu0 := meter.read()
	rec, wall = b.runPhase(ctx, b.c.concurrency, b.c.duration, (*worker).cancelOne)
	cpuWaiting := meter.read().since(cpu0)
	if wl.dry.Load() {
		dry = append(dry, "with the entries waiting")
	}
	st, err := b.measureOffers(ctx)
	if err != nil {
		return nil, 0, err
	}
	b.leaveWaitlist(ctx)
	fmt.Fprintf(b.logOut, "barberbench: cancels with no waitlist again %s\n", b.c.duration/2)
	after, wallAfter, cpuAfter := alone(wl.after, cancelAfter, "with no waitlist after it")

	st.Entries, st.Matchable = joined.status[http.StatusCreated], matchable
	st.CancelBeforePerSec, st.CancelAfterPerSec = before.PerSec, after.PerSec
	nAlone := before.Requests + after.Requests
	if secs := (wallBefore + wallAfter).Seconds(); secs > 0 {
		st.CancelAlonePerSec = round2((before.PerSec*wallBefore.Seconds() + after.PerSec*wallAfter.Seconds()) / secs)
	}
	if s := rec.series[cancelWaiting]; s != nil && st.CancelAlonePerSec > 0 {
		waiting := s.stats(cancelWaiting, "scenario", wall)
		st.CancelWaitingPerSec = waiting.PerSec
		st.ThroughputRatio = round2(st.CancelWaitingPerSec / st.CancelAlonePerSec)
		if metered {
			st.CPU = cpuPerCancel(meter, cpuBefore.plus(cpuAfter), nAlone, cpuWaiting, waiting.Requests)
		}
	}
	rep.Waitlist = st
	if refused := joined.codes["429 too_many_waitlist_entries"]; refused > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d joins were refused with 429 too_many_waitlist_entries: raise the server's waiting entries per key", refused))
	}
	if n := joined.codes["409 slot_available"]; n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d joins were refused with 409 slot_available: their day had a free time (a fresh database seeded with --full-days wants none)", n))
	}
	if len(dry) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the cancels %s ran out of bookings before the phase's end (%d for the phase with the entries, half that for each other): seed more --full-days for longer phases", strings.Join(dry, " and "), len(wl.with)))
	}
	return rec, wall, nil
}

// addRows adds a phase's endpoints to the report, compared with their
// floors, and returns them by name.
func (b *bench) addRows(rep *Report, rec *recorder, wall time.Duration, phase string) map[string]EndpointStats {
	rows := map[string]EndpointStats{}
	for _, name := range sortedKeys(rec.series) {
		st := rec.series[name].stats(name, phase, wall)
		rep.compare(&st, true)
		rep.Endpoints = append(rep.Endpoints, st)
		rep.ServerErrors += st.ServerErrors
		rows[name] = st
	}
	return rows
}

// entryBody is the i-th join, around the booking p: for p's service (and
// in one of two such joins p's barber) in one of four, which a cancel that
// frees a start near p satisfies, else for the unit's longest service,
// which no single cancel frees time for. Both want p's day, an hour either
// side of p's start.
func (b *bench) entryBody(p pooled, i int) (map[string]any, bool) {
	local := p.start.In(b.cat.locs[p.unitID])
	body := map[string]any{
		"unit_id": p.unitID, "from": local.Format(time.DateOnly), "to": local.Format(time.DateOnly),
		"time_from":          local.Add(-time.Hour).Format("15:04"),
		"time_to":            local.Add(time.Hour).Format("15:04"),
		"external_reference": fmt.Sprintf("%s%d", b.wl.prefix, i),
		"client": map[string]any{"name": firstNames[i%len(firstNames)] + " " + lastNames[i%len(lastNames)],
			"phone": fmt.Sprintf("+4916%09d", (b.c.seed*7919+uint64(i))%1_000_000_000)},
	}
	short := i%4 == 0
	if short {
		body["service_id"] = p.serviceID
		if i%8 == 0 {
			body["barber_id"] = p.barberID
		}
	} else {
		svcs := b.cat.services[p.unitID]
		longest := svcs[0]
		for _, s := range svcs {
			if s.DurationMinutes > longest.DurationMinutes {
				longest = s
			}
		}
		body["service_id"] = longest.ID
	}
	return body, short
}

// request is one request of sendEach: a path, and a body or nil.
type request struct {
	path string
	body any
}

// sendEach sends each request once, spread over the workers, and records
// them under name.
func (b *bench) sendEach(ctx context.Context, name, method string, reqs []request) (*recorder, time.Duration) {
	ch := make(chan request, len(reqs))
	for _, r := range reqs {
		ch <- r
	}
	close(ch)
	return b.runPhase(ctx, b.c.concurrency, time.Hour, func(w *worker, ctx context.Context) error {
		r, ok := <-ch
		if !ok {
			return errStop
		}
		_, err := w.do(ctx, name, method, r.path, r.body, nil)
		return stopOr(err)
	})
}
