package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// runConfig is what "run" does.
type runConfig struct {
	url, key       string
	concurrency    int
	duration       time.Duration
	floorDuration  time.Duration
	warmup         time.Duration
	scenario       string
	databaseURL    string
	httpWriteFloor bool
	answerFloor    bool
	jsonPath       string
	maxRequests    int64
	pid            int
	days           int
	oneBarber      bool
	seed           uint64
	webhook        bool   // subscribe a receiver during the scenario phase
	receiverURL    string // the receiver of barberbench receive; "": one in this process
	adminKey       string // registers it
	rate           int    // create scenario: creates per second in all (0: as fast as they go)
	waitlist       int    // waitlist scenario: entries waiting in its second phase
}

var scenarios = append([]string{"flow", "availability", "cold", "range", "next", "create", "hotslot", "waitlist"}, writeScenarios...)

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c runConfig
	fs.StringVar(&c.url, "url", "http://127.0.0.1:8080", "barberd to drive; loopback addresses only")
	fs.StringVar(&c.key, "key", os.Getenv("BARBERBENCH_KEY"), "API key with the booking scopes (env BARBERBENCH_KEY)")
	seedFile := fs.String("seed-file", "", "read --key from the JSON line barberbench seed printed, saved in this file")
	fs.IntVar(&c.concurrency, "concurrency", 16, "concurrent simulated chatbots (and floor workers)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "length of the scenario phase")
	fs.DurationVar(&c.floorDuration, "floor-duration", 10*time.Second, "length of each floor phase (at most --duration)")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "unmeasured warm-up before the floors")
	fs.StringVar(&c.scenario, "scenario", "flow", "flow (a chatbot's whole conversation), availability (one day), cold (one day, every day in turn: misses; see --database-url), range (7 days), next (the next free times; seed with --full-days), create (distinct slots), hold, cancel and reschedule (each that write alone, on distinct slots, against its own floor), hotslot (every worker books the same slot) or waitlist (cancels without and with --waitlist entries waiting; seed with --full-days, needs --database-url)")
	fs.StringVar(&c.databaseURL, "database-url", "", "the server's database, to measure the write floor (optional)")
	fs.BoolVar(&c.httpWriteFloor, "http-write-floor", false, "with --database-url, also measure the write floor behind a bare HTTP server in barberbench (JSON in, the write's SQL, JSON out): the least an HTTP service making the write costs here")
	fs.BoolVar(&c.answerFloor, "answer-floor", false, "availability, range and next scenarios: also measure the scenario's own answers (64 fetched before the floors) written from memory by a bare HTTP server in barberbench: the least an HTTP service sending those bytes costs here")
	fs.StringVar(&c.jsonPath, "json", "", "also write the report as JSON to this file")
	fs.Int64Var(&c.maxRequests, "max-requests", 2_000_000, "stop a phase after this many requests")
	fs.IntVar(&c.pid, "pid", 0, "process id of the server, to report its peak memory (Linux)")
	fs.IntVar(&c.days, "days", 60, "book dates among the next DAYS days")
	fs.BoolVar(&c.oneBarber, "one-barber", false, "availability, range and next scenarios: name one eligible barber in each request (default: every eligible barber's slots)")
	fs.Uint64Var(&c.seed, "seed", uint64(time.Now().UnixNano()), "random seed")
	fs.BoolVar(&c.webhook, "webhook", false, "subscribe a webhook receiver in this process to every event during the scenario and report delivery latency from commit (serve with --webhook-allow-private; the seed file's admin key registers it)")
	fs.StringVar(&c.receiverURL, "webhook-receiver", "", "with --webhook: the receiver that barberbench receive serves in another process, by the URL it printed, instead of one in this process")
	fs.StringVar(&c.adminKey, "admin-key", os.Getenv("BARBERBENCH_ADMIN_KEY"), "API key with scope admin, for --webhook (env BARBERBENCH_ADMIN_KEY; the seed file has one)")
	fs.IntVar(&c.waitlist, "waitlist", 1000, "waitlist scenario: waiting entries joined before its second cancel phase")
	fs.IntVar(&c.rate, "rate", 0, "create scenario: at most this many creates per second in all (0: as fast as the workers go)")
	cpuProfile := fs.String("cpuprofile", "", "write barberbench's own CPU profile to this file (it shares the machine with the server)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *seedFile != "" && c.key == "" {
		data, err := os.ReadFile(*seedFile)
		if err != nil {
			return err
		}
		var seeded seedResult
		if err := json.Unmarshal(data, &seeded); err != nil {
			return fmt.Errorf("--seed-file: %w", err)
		}
		c.key = seeded.APIKey
		if c.adminKey == "" {
			c.adminKey = seeded.AdminAPIKey
		}
	}
	switch {
	case c.key == "":
		return errors.New("--key is required (the api_key printed by barberbench seed)")
	case c.concurrency < 1 || c.concurrency > 1024:
		return errors.New("--concurrency must be 1..1024")
	case c.duration <= 0 || c.duration > time.Hour:
		return errors.New("--duration must be positive and at most 1h")
	case c.days < 1:
		return errors.New("--days must be at least 1")
	case c.webhook && c.adminKey == "":
		return errors.New("--webhook needs --admin-key (or a --seed-file with admin_api_key)")
	case c.rate < 0:
		return errors.New("--rate must not be negative")
	case c.scenario == "waitlist" && (c.databaseURL == "" || c.waitlist < 1):
		return errors.New("the waitlist scenario needs --database-url and a --waitlist of 1 or more")
	case !slices.Contains(scenarios, c.scenario):
		return fmt.Errorf("--scenario %q: want one of %s", c.scenario, strings.Join(scenarios, ", "))
	}
	c.floorDuration = min(c.floorDuration, c.duration)
	rep, err := runBench(ctx, c, stderr)
	if err != nil {
		return err
	}
	writeTable(stdout, rep)
	if c.jsonPath != "" {
		return writeJSONReport(c.jsonPath, rep)
	}
	return nil
}

// catalog is what the chatbots find at the start: units, their bookable
// services and barbers.
type catalog struct {
	units    []apiUnit
	locs     map[string]*time.Location // by unit id
	services map[string][]apiService   // by unit id
	barbers  map[string][]apiBarber    // eligible, by unit id + "/" + service id
}

// bench is one run.
type bench struct {
	c        runConfig
	cl       *apiClient
	cat      *catalog
	runID    string
	refs     atomic.Int64 // external references handed out
	feed     *slotFeed
	floor    *dbFloor
	pace     *pacer           // --rate
	receiver *webhookReceiver // --webhook
	released atomic.Int64     // holds of cut-off conversations released
	wl       *waitlistRun     // the waitlist scenario
	cold     *coldRun         // the cold scenario
	meter    cpuMeter         // with metered, the CPU of the phases (--pid)
	metered  bool
	booked   *booked // the write scenarios' appointments
	logOut   io.Writer
}

// worker is one simulated chatbot (or floor worker) within a phase.
type worker struct {
	b   *bench
	id  int
	rec *recorder
	rng *mrand.Rand
	ph  *phase
}

// phase bounds a group of workers in time and requests.
type phase struct {
	deadline time.Time
	budget   atomic.Int64
}

func (p *phase) admit() bool { return time.Now().Before(p.deadline) && p.budget.Add(-1) >= 0 }

// do sends one request if the phase still admits one.
func (w *worker) do(ctx context.Context, name, method, path string, body, out any) (exchange, error) {
	if !w.ph.admit() {
		return exchange{}, errStop
	}
	ex, err := w.b.cl.send(ctx, w.rec, name, method, path, body, out)
	if err != nil && ex.status == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // no response: do not spin on a dead server
	}
	return ex, err
}

// runPhase runs fn in a loop on n workers until the phase ends, and
// returns their merged measurements and the phase's wall time.
func (b *bench) runPhase(ctx context.Context, n int, d time.Duration, fn func(*worker, context.Context) error) (*recorder, time.Duration) {
	ph := &phase{deadline: time.Now().Add(d)}
	ph.budget.Store(b.c.maxRequests)
	workers := make([]*worker, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := &worker{b: b, id: i, rec: newRecorder(), ph: ph, rng: mrand.New(mrand.NewPCG(b.c.seed, uint64(i)))}
		workers[i] = w
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := fn(w, ctx); errors.Is(err, errStop) {
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	all := newRecorder()
	for _, w := range workers {
		all.merge(w.rec)
	}
	return all, wall
}

func runBench(ctx context.Context, c runConfig, log io.Writer) (*Report, error) {
	u, err := checkLoopback(c.url)
	if err != nil {
		return nil, err
	}
	b := &bench{c: c, cl: newAPIClient(u, c.key, c.concurrency+4), runID: runID(), logOut: log}
	b.meter, b.metered = newCPUMeter(c.pid, c.databaseURL)
	rep := &Report{URL: c.url, Scenario: c.scenario, Concurrency: c.concurrency, Duration: c.duration.String(), Started: time.Now().UTC()}
	if b.cat, err = b.discover(ctx); err != nil {
		return nil, err
	}
	if c.databaseURL != "" {
		if b.floor, err = openDBFloor(ctx, c.databaseURL, b.cat.feedBarbers(), floorOp(c.scenario)); err != nil {
			return nil, err
		}
		defer b.floor.close()
		rep.Database = b.floor.db.Dialect
	}
	switch c.scenario {
	case "next":
		err = b.noteNextAhead(ctx, rep)
	case "waitlist":
		err = b.prepareWaitlist(ctx)
	case "cold":
		err = b.prepareCold(ctx)
		defer b.cold.close()
	}
	if err != nil {
		return nil, err
	}
	if usesFeed(c.scenario) {
		// Free slots are found before the measured phases, and the feed
		// rests while the floors are measured.
		b.feed = startSlotFeed(ctx, b)
		defer b.feed.stopAndMerge(nil)
		b.feed.fill(ctx, b.feedTarget())
		if err := b.prepareWrites(ctx, rep); err != nil {
			return nil, err
		}
	}
	scenario := b.scenarioFunc()
	if c.warmup > 0 {
		fmt.Fprintf(log, "barberbench: warm-up %s\n", c.warmup)
		if b.feed != nil {
			b.feed.resume(false)
		}
		b.runPhase(ctx, c.concurrency, c.warmup, scenario)
		if b.feed != nil {
			b.feed.fill(ctx, b.feedTarget())
		}
	}

	fmt.Fprintf(log, "barberbench: HTTP floor (GET /healthz) %s\n", c.floorDuration)
	rec, wall := b.runPhase(ctx, c.concurrency, c.floorDuration, func(w *worker, ctx context.Context) error {
		_, err := w.do(ctx, "GET /healthz", http.MethodGet, "//healthz", nil, nil)
		return err
	})
	if s := rec.series["GET /healthz"]; s != nil {
		st := s.stats("GET /healthz", "http_floor", wall)
		rep.HTTPFloor = &st
	}
	fmt.Fprintf(log, "barberbench: static-body floor (GET openapi.json) %s\n", c.floorDuration)
	rec, wall = b.runPhase(ctx, c.concurrency, c.floorDuration, func(w *worker, ctx context.Context) error {
		_, err := w.do(ctx, "GET openapi.json", http.MethodGet, "/openapi.json", nil, nil)
		return err
	})
	if s := rec.series["GET openapi.json"]; s != nil {
		st := s.stats("GET openapi.json", "static_floor", wall)
		rep.StaticFloor = &st
	}
	if err := b.answerFloorPhase(ctx, rep); err != nil {
		return nil, err
	}
	if b.floor != nil {
		if err := b.floor.prepare(ctx, c.concurrency, c.floorDuration); err != nil {
			return nil, err
		}
		rep.DBFloorOf = b.floor.op
		fmt.Fprintf(log, "barberbench: database write floor (%s) %s\n", b.floor.op, c.floorDuration)
		rep.DBFloor = b.timedFloor(ctx, rep, "db write", "db_write_floor", "the write floor", func(ctx context.Context) error {
			err := b.floor.write(ctx)
			if errors.Is(err, errPoolSpent) {
				return errStop
			}
			return err
		})
	}

	if err := b.httpWriteFloorPhase(ctx, rep); err != nil {
		return nil, err
	}
	b.coldFloor(ctx, rep)

	var receiver *webhookReceiver
	if c.webhook && c.receiverURL != "" {
		receiver = remoteReceiver(c.receiverURL)
		if err := receiver.refresh(); err != nil { // counts this run's attempts from here
			return nil, fmt.Errorf("--webhook-receiver: %w", err)
		}
	} else if c.webhook {
		if receiver, err = startReceiver("127.0.0.1:0"); err != nil {
			return nil, err
		}
		defer receiver.close()
	}
	if receiver != nil {
		unsubscribe, err := b.subscribe(ctx, receiver.url)
		if err != nil {
			return nil, err
		}
		defer unsubscribe()
	}
	b.pace, b.receiver = newPacer(c.rate), receiver
	fmt.Fprintf(log, "barberbench: scenario %s %s\n", c.scenario, c.duration)
	stopRSS := b.watchRSS(rep)
	counts0, _ := b.serverCounters(ctx)
	if b.feed != nil && c.scenario != "cancel" {
		b.feed.resume(true)
	}
	cpu0 := b.meter.read()
	switch c.scenario {
	case "hotslot":
		rec, wall = b.hotSlot(ctx, rep)
	case "waitlist":
		rec, wall, err = b.waitlist(ctx, rep)
	default:
		rec, wall = b.runPhase(ctx, c.concurrency, c.duration, scenario)
	}
	stopRSS()
	cpu := b.meter.read().since(cpu0)
	counts, counted := b.serverCounters(ctx)
	if err != nil {
		return nil, err
	}
	b.feed.stopAndMerge(rec)
	total := newRecorder()
	for _, name := range sortedKeys(rec.series) {
		s := rec.series[name]
		st := s.stats(name, "scenario", wall)
		rep.compare(&st, c.scenario != "flow" && !strings.HasPrefix(name, "feed:"))
		rep.Endpoints = append(rep.Endpoints, st)
		rep.ServerErrors += st.ServerErrors
		if !strings.HasPrefix(name, "feed:") {
			total.merge(&recorder{series: map[string]*series{"total": s}})
		}
	}
	// The total compares with the floor of what the scenario does most:
	// reads with the HTTP floor, creates with the database write floor.
	totalName := "GET total"
	if b.feed != nil || b.wl != nil {
		totalName = "POST total"
	}
	rep.Total = total.get("total").stats(totalName, "scenario", wall)
	rep.compare(&rep.Total, true)
	rep.Total.Name = "total"
	if counted {
		noteCounters(rep, counts0, counts, rep.Total.Requests)
	}
	if c.scenario != "waitlist" {
		rep.Total.CPU = b.perRequest(rep, "the scenario", cpu, rep.Total.Requests)
	}
	limited, created := 0, 0
	for _, e := range rep.Endpoints {
		limited += e.Status["429"]
		if e.Name == "POST /appointments" || e.Name == "POST /appointments (hot slot)" {
			created += e.Status["201"]
		}
	}
	if receiver != nil {
		fmt.Fprintf(log, "barberbench: waiting for the webhook deliveries of %d creates\n", created)
		if rep.Webhook, err = receiver.stats(created, webhookDrain); err != nil {
			return nil, err
		}
	}
	if n := b.released.Load(); n > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d holds of conversations cut off before their booking (warm-up and scenario) were released, unmeasured", n))
	}
	if limited > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d requests were rate limited (429): start barberd with --rate-limit 0 to measure it", limited))
	}
	if ctx.Err() != nil {
		rep.Notes = append(rep.Notes, "interrupted: the figures cover part of the run")
	}
	return rep, nil
}

// webhookDrain is how long the receiver waits, after the scenario phase,
// for the deliveries of the phase's creates.
const webhookDrain = 30 * time.Second

// runID tells this run's external references from any other run's.
func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// feedTarget is how many free slots to find before a phase: a hot-slot
// round uses one, a create one each.
func (b *bench) feedTarget() int {
	if b.c.scenario == "hotslot" {
		return 200
	}
	return min(feedSize, 200*b.c.concurrency)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Endpoints in the order a chatbot calls them, then the rest by name.
	order := []string{"GET /context", "GET /units", "GET /services", "GET /barbers", "GET /availability",
		"GET /availability/range", "GET /availability/next",
		"POST /slots/hold", "POST /appointments", "POST /appointments (replay)", "GET /appointments/{id}",
		"POST /appointments/{id}/reschedule", "POST /appointments/{id}/cancel", "GET /notifications/pending"}
	rank := func(k string) string {
		for i, o := range order {
			if k == o {
				return fmt.Sprintf("%02d", i)
			}
		}
		return "99" + k
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && rank(keys[j]) < rank(keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// discover reads the catalog as a chatbot would at the start, unmeasured.
func (b *bench) discover(ctx context.Context) (*catalog, error) {
	rec := newRecorder()
	cat := &catalog{locs: map[string]*time.Location{}, services: map[string][]apiService{}, barbers: map[string][]apiBarber{}}
	var units apiList[apiUnit]
	ex, err := b.cl.send(ctx, rec, "units", http.MethodGet, "/units", nil, &units)
	if err != nil {
		return nil, fmt.Errorf("GET /units: %w", err)
	}
	if ex.status != http.StatusOK {
		return nil, fmt.Errorf("GET /units: status %d %s (is the key right?)", ex.status, ex.code)
	}
	for _, u := range units.Data {
		loc, err := time.LoadLocation(u.Timezone)
		if err != nil {
			return nil, err
		}
		var svcs apiList[apiService]
		if _, err := b.cl.send(ctx, rec, "services", http.MethodGet, "/services?unit_id="+url.QueryEscape(u.ID), nil, &svcs); err != nil {
			return nil, err
		}
		if len(svcs.Data) == 0 {
			continue
		}
		cat.units = append(cat.units, u)
		cat.locs[u.ID] = loc
		cat.services[u.ID] = svcs.Data
		for _, s := range svcs.Data {
			var barbers apiList[apiBarber]
			q := "/barbers?unit_id=" + url.QueryEscape(u.ID) + "&service_id=" + url.QueryEscape(s.ID)
			if _, err := b.cl.send(ctx, rec, "barbers", http.MethodGet, q, nil, &barbers); err != nil {
				return nil, err
			}
			cat.barbers[u.ID+"/"+s.ID] = barbers.Data
		}
	}
	if len(cat.units) == 0 {
		return nil, errors.New("the key's account has no unit with a bookable service; run barberbench seed first")
	}
	return cat, nil
}

// date returns the local date `days` after today at a unit.
func (b *bench) date(unitID string, days int) string {
	return time.Now().In(b.cat.locs[unitID]).AddDate(0, 0, days).Format("2006-01-02")
}
