package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/go-chi/chi/v5"

	"barberd/graph"
	"barberd/graph/gqlserver"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
	"barberd/webhook"
)

// newServer serves barberd's REST v1 and /healthz over db, in process.
func newServer(t *testing.T, url string) *httptest.Server {
	t.Helper()
	db, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := slog.New(slog.DiscardHandler)
	res := graph.New(graph.Settings{DB: db, Log: log, FreshnessWindow: graph.DefaultFreshnessWindow, WebhookAllowPrivate: true})
	r := chi.NewRouter()
	r.Use(rest.Middleware(log, 30*time.Second))
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	r.Mount(rest.BasePath, rest.New(res))
	// GraphQL behind the key check, as serve mounts it, a webhook worker
	// (what run --webhook needs), and the jobs that make the waitlist's
	// offers after the freeing requests have answered (and retry failed
	// ones every second), as serve runs them.
	r.With(rest.Authenticate(res, nil, false, rest.WriteError)).Handle("/graphql", gqlserver.NewHandler(res))
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var jobs sync.WaitGroup
		defer jobs.Wait()
		jobs.Go(func() { res.RunJobs(ctx, time.Hour, 0, 0) })
		webhook.New(webhook.Settings{Resolver: res, AllowPrivate: true, Poll: 50 * time.Millisecond}).Run(ctx)
	}()
	srv := httptest.NewServer(r)
	t.Cleanup(func() { srv.Close(); stop(); <-done })
	return srv
}

func TestSeedAndRun(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			url := storetest.URL(t, d)
			ctx := context.Background()
			res, err := seed(ctx, seedConfig{databaseURL: url, units: 2, barbersPerUnit: 10, appointments: 2000,
				days: 60, futureDays: 7, futureFill: 0.35, fullDays: 7, seed: 1}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.UnitIDs) != 2 || res.Appointments != 2000 || res.Future == 0 || res.APIKey == "" {
				t.Fatalf("seed: %+v", res)
			}

			db, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// As barberd keeps them: a confirmed appointment, and only one,
			// has a reservation.
			confirmed := storetest.Count(t, db, "SELECT count(*) FROM appointments WHERE status = 'confirmed'")
			joined := storetest.Count(t, db, "SELECT count(*) FROM appointments a JOIN reservations r ON r.appointment_id = a.id WHERE a.status = 'confirmed'")
			if rsv := storetest.Count(t, db, "SELECT count(*) FROM reservations"); confirmed != rsv || confirmed != joined || confirmed != res.Reservations {
				t.Errorf("confirmed %d, reservations %d, joined %d, reported %d", confirmed, rsv, joined, res.Reservations)
			}
			if n := storetest.Count(t, db, "SELECT count(DISTINCT status) FROM appointments"); n != 4 {
				t.Errorf("%d distinct statuses, want 4", n)
			}

			srv := newServer(t, url)
			// waitlist comes last: it frees time on the fully booked days.
			for _, scenario := range []string{"flow", "hotslot", "range", "next", "cold", "create", "cancel", "waitlist"} {
				// create: paced; create and flow with a webhook receiver subscribed.
				d := time.Second
				if scenario == "flow" {
					d = 3 * time.Second // long enough for whole conversations under -race
				}
				// create and cancel: with the HTTP write floor too.
				httpFloor := scenario == "create" || scenario == "cancel"
				// range and next: with the answer floor.
				answerFloor := scenario == "range" || scenario == "next"
				rep, err := runBench(ctx, runConfig{url: srv.URL, key: res.APIKey, concurrency: 4, duration: d,
					floorDuration: 500 * time.Millisecond, scenario: scenario, databaseURL: url, httpWriteFloor: httpFloor, answerFloor: answerFloor || scenario == "create",
					maxRequests: 1_000_000, days: 30, seed: 1, waitlist: 40,
					webhook: scenario == "create" || scenario == "flow", adminKey: res.AdminAPIKey, rate: 50,
					pid: os.Getpid()}, io.Discard) // the server runs in this process
				if err != nil {
					t.Fatal(err)
				}
				if testing.Verbose() {
					writeTable(t.Output(), rep)
				}
				if rep.Total.PerSec <= 0 || rep.HTTPFloor == nil || rep.HTTPFloor.PerSec <= 0 || rep.DBFloor == nil || rep.DBFloor.PerSec <= 0 {
					t.Errorf("%s: no throughput: total %+v", scenario, rep.Total)
				}
				if rep.ServerErrors != 0 || rep.Total.TransportErrors != 0 {
					t.Errorf("%s: %d 5xx, %d without response: %+v", scenario, rep.ServerErrors, rep.Total.TransportErrors, rep.Endpoints)
				}
				// --full-days 7: today and the next six days are booked whole.
				if scenario == "next" && !slices.ContainsFunc(rep.Notes, func(n string) bool {
					var days int
					_, err := fmt.Sscanf(n, "next: the nearest first free time is %d days ahead", &days)
					return err == nil && days >= 7
				}) {
					t.Errorf("next: the first free time should be 7 or more days ahead: %v", rep.Notes)
				}
				// The server runs in this process: its CPU is metered.
				if c := rep.Total.CPU; scenario != "waitlist" && (c == nil || c.ServerMs <= 0 || c.Database != strings.HasPrefix(url, "postgres")) {
					t.Errorf("%s: CPU a request: %+v", scenario, c)
				}
				if rep.DBFloor.CPU == nil {
					t.Errorf("%s: no CPU a write of the floor", scenario)
				}
				switch f := rep.HTTPWriteFloor; {
				case !httpFloor && f != nil:
					t.Errorf("%s: an HTTP write floor measured unasked", scenario)
				case httpFloor && (f == nil || f.PerSec <= 0 || f.ServerErrors != 0 || f.Status["201"] == 0 || rep.Total.HTTPWriteRatio <= 0):
					t.Errorf("%s: HTTP write floor %+v, ratio %.2f", scenario, f, rep.Total.HTTPWriteRatio)
				}
				// create: asked for, and not measured (not a read).
				switch f := rep.AnswerFloor; {
				case !answerFloor && f != nil:
					t.Errorf("%s: an answer floor measured", scenario)
				case answerFloor && (f == nil || f.PerSec <= 0 || f.ServerErrors != 0 || f.Status["200"] == 0 || f.ThroughputRatio <= 0 ||
					rep.AnswerBytes < 50 || rep.Total.AnswerRatio <= 0):
					t.Errorf("%s: answer floor %+v, %d bytes, ratio %.2f", scenario, f, rep.AnswerBytes, rep.Total.AnswerRatio)
				}
				if f := rep.ReadFloor; (scenario == "cold") != (f != nil) || f != nil && (f.PerSec <= 0 || f.ServerErrors != 0 || rep.Total.ReadRatio <= 0) {
					t.Errorf("%s: day-read floor %+v, ratio %.2f", scenario, f, rep.Total.ReadRatio)
				}
				if scenario == "waitlist" {
					checkWaitlist(t, db, rep)
					checkWaitlistCPU(t, db, rep)
				}
				if scenario == "create" {
					// At most 50 creates a second, each delivered to the receiver.
					h := rep.Webhook
					if h == nil || h.Created == 0 || h.Created > 60 || h.Delivered != h.Created || h.P99Ms <= 0 {
						t.Errorf("create with a webhook at 50/s: %+v", h)
					}
				}
				if scenario == "flow" {
					// Every conversation's create is counted as delivered, and
					// no conversation leaves its hold behind.
					switch h := rep.Webhook; {
					case h == nil || h.Delivered != h.Created:
						t.Errorf("flow with a webhook: %+v", h)
					case h.Created == 0:
						// A machine loaded this much leaves the count untested.
						t.Logf("flow booked nothing in %s here: no delivery to count", d)
					}
					if n := storetest.Count(t, db, "SELECT count(*) FROM holds WHERE status = 'active'"); n != 0 {
						t.Errorf("flow left %d active holds", n)
					}
				}
				if scenario == "hotslot" && (rep.Rounds == 0 || rep.DoubleBooked != 0 || rep.EmptyRounds != 0) {
					t.Errorf("hot slot: %d rounds, %d double booked, %d empty", rep.Rounds, rep.DoubleBooked, rep.EmptyRounds)
				}
			}
			created := storetest.Count(t, db, "SELECT count(*) FROM appointments WHERE external_reference LIKE 'bench-%'")
			if created == 0 {
				t.Error("the run booked nothing")
			}
			// The write floor's scratch account is gone, with all its rows.
			if leftover := storetest.Count(t, db, "SELECT count(*) FROM accounts WHERE name LIKE 'barberbench floor%'"); leftover != 0 {
				t.Errorf("%d floor accounts left behind", leftover)
			}
		})
	}
}

func TestRunRefusesRemoteTargets(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "http://127.0.0.2:9000/"} {
		if _, err := checkLoopback(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:8080", "http://example.com", "http://0.0.0.0:8080", "ftp://127.0.0.1", "127.0.0.1:8080", "http://localhost.example.com"} {
		if _, err := checkLoopback(u); err == nil {
			t.Errorf("%s: accepted", u)
		}
	}
}

// checkWaitlist checks a waitlist run: every entry joined, offers made
// from the cancels, none twice, within the goal, and no entry left on the
// waitlist.
func checkWaitlist(t *testing.T, db *store.DB, rep *Report) {
	t.Helper()
	w := rep.Waitlist
	switch {
	case w == nil:
		t.Fatalf("waitlist: no figures: %v", rep.Notes)
	case w.Entries != 40 || w.Matchable != 10:
		t.Errorf("waitlist: %d entries joined (%d matchable), want 40 (10): %+v", w.Entries, w.Matchable, rep.Endpoints)
	case w.Offers == 0 || w.Untraced != 0 || w.DoubleOffers != 0:
		t.Errorf("waitlist: %d offers, %d untraced, %d double", w.Offers, w.Untraced, w.DoubleOffers)
	case w.OfferP99Ms <= 0 || w.OpeningsLeft != 0:
		t.Errorf("waitlist: offer p99 %.1f ms, %d freed times left undone", w.OfferP99Ms, w.OpeningsLeft)
	case w.CancelAlonePerSec <= 0 || w.CancelBeforePerSec <= 0 || w.CancelAfterPerSec <= 0 || w.ThroughputRatio <= 0:
		t.Errorf("waitlist: cancels %.1f/s alone (%.1f before, %.1f after), ratio %.2f", w.CancelAlonePerSec, w.CancelBeforePerSec, w.CancelAfterPerSec, w.ThroughputRatio)
	}
	// Only the matchable entries can be offered a single cancel's start.
	if w.Offers > w.Matchable || w.WaitingAtEnd < w.Entries-w.Matchable {
		t.Errorf("waitlist: %d offers, %d waiting at the end: %+v", w.Offers, w.WaitingAtEnd, w)
	}
	if n := storetest.Count(t, db, "SELECT count(*) FROM waitlist_entries WHERE status IN ('waiting', 'offered')"); n != 0 {
		t.Errorf("waitlist: %d entries left waiting or offered", n)
	}
}

// checkWaitlistCPU checks the CPU a cancel cost in each phase: the
// server's (this process) always, PostgreSQL's when it is on this machine.
func checkWaitlistCPU(t *testing.T, db *store.DB, rep *Report) {
	t.Helper()
	c := rep.Waitlist.CPU
	if c == nil {
		t.Fatal("waitlist: no CPU figures with --pid")
	}
	if c.ServerAloneMs <= 0 || c.ServerWaitingMs <= 0 || c.Ratio <= 0 {
		t.Errorf("waitlist: CPU a cancel %+v, want the server's in both phases", c)
	}
	if pg := db.Dialect == dialect.Postgres; c.Database != pg || pg && (c.DatabaseAloneMs <= 0 || c.DatabaseWaitingMs <= 0) {
		t.Errorf("waitlist: CPU a cancel %+v: PostgreSQL's counted %v, want %v", c, c.Database, pg)
	}
}

// TestStatCPU reads a /proc/PID/stat line whose command holds spaces and
// parentheses, and refuses lines it cannot read.
func TestStatCPU(t *testing.T) {
	line := "4242 (postgres: a (b) c) S 1 4242 4242 0 -1 4194560 120 0 0 0 250 130 0 0 20 0 1 0 100 0 0"
	if p, ok := statCPU(line); !ok || p != (procCPU{sec: 3.8, start: 100}) {
		t.Errorf("statCPU = %+v, %v; want 3.8 s (250 + 130 ticks), started at 100", p, ok)
	}
	for _, bad := range []string{"", "4242 (x) S 1 2", "4242 (x) S 1 4242 4242 0 -1 4194560 120 0 0 0 a b 0 0 20 0 1 0 100",
		"4242 (x) S 1 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 20 0 1 0 x"} {
		if _, ok := statCPU(bad); ok {
			t.Errorf("statCPU(%q) read", bad)
		}
	}
}

// Between two readings, a PostgreSQL process present in both counts what
// it spent in between; one that started in between (a pool's backend
// opened as the phase began, or a new process on a reused pid) counts
// whole; one that ended is lost.
func TestCPUReadingSince(t *testing.T) {
	before := cpuReading{server: 1, database: map[int]procCPU{10: {5, 1}, 11: {40, 1}, 12: {3, 1}}}
	after := cpuReading{server: 1.5, database: map[int]procCPU{10: {5.25, 1}, 12: {1, 9}, 13: {7, 9}}}
	got := after.since(before)
	if got.server != 0.5 || got.database != 8.25 {
		t.Fatalf("since: %+v, want server 0.5 and database 8.25 (pid 10 0.25, 11 ended, 12 reused 1, 13 new 7)", got)
	}
}

// The counters a report notes are read from the server's /metrics: the
// availability cache's lookups and the fence's version queries, whatever
// else it serves.
func TestServerCounters(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `# HELP barberd_cache_lookups_total Cache lookups.
barberd_cache_lookups_total{cache="api_key",result="hit"} 99
barberd_cache_lookups_total{cache="availability",result="hit"} 1.5e+06
barberd_cache_lookups_total{cache="availability",result="miss"} 250
barberd_version_read_requests_total 7
barberd_version_reads_total 1000
`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	b := &bench{cl: newAPIClient(u, "", 1)}
	got, ok := b.serverCounters(context.Background())
	if want := (counters{hits: 1_500_000, misses: 250, versionReads: 1000}); !ok || got != want {
		t.Fatalf("counters %+v (%v), want %+v", got, ok, want)
	}
	rep := &Report{}
	noteCounters(rep, counters{hits: 500_000, versionReads: 200}, got, 1_000_250)
	want := []string{
		"availability cache during the scenario (server's /metrics): 1000000 hits, 250 misses (0.0% misses)",
		"version queries during the scenario (server's /metrics): 800, one per 1250.3 requests",
	}
	if !slices.Equal(rep.Notes, want) {
		t.Fatalf("notes %q, want %q", rep.Notes, want)
	}
}
