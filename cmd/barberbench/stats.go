package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// recorder collects one worker's measurements; workers never share one, so
// recording takes no lock. Phases merge them at the end.
type recorder struct {
	series map[string]*series
}

// series is what was measured of one endpoint (or floor).
type series struct {
	lat       []time.Duration
	status    map[int]int
	codes     map[string]int // "409 slot_unavailable"
	transport int            // requests that got no response
}

func newRecorder() *recorder { return &recorder{series: map[string]*series{}} }

func (r *recorder) get(name string) *series {
	s := r.series[name]
	if s == nil {
		s = &series{status: map[int]int{}, codes: map[string]int{}}
		r.series[name] = s
	}
	return s
}

// record notes one exchange; status 0 means no response.
func (r *recorder) record(name string, d time.Duration, status int, code string) {
	s := r.get(name)
	if status == 0 {
		s.transport++
		return
	}
	s.lat = append(s.lat, d)
	s.status[status]++
	if status >= 400 {
		if code == "" {
			code = "(no code)"
		}
		s.codes[fmt.Sprintf("%d %s", status, code)]++
	}
}

func (r *recorder) merge(o *recorder) {
	for name, os := range o.series {
		s := r.get(name)
		s.lat = append(s.lat, os.lat...)
		s.transport += os.transport
		for k, v := range os.status {
			s.status[k] += v
		}
		for k, v := range os.codes {
			s.codes[k] += v
		}
	}
}

// EndpointStats is one row of the report.
type EndpointStats struct {
	Name            string         `json:"name"`
	Phase           string         `json:"phase"`
	Requests        int            `json:"requests"`
	PerSec          float64        `json:"per_s"`
	MeanMs          float64        `json:"mean_ms"`
	P50Ms           float64        `json:"p50_ms"`
	P95Ms           float64        `json:"p95_ms"`
	P99Ms           float64        `json:"p99_ms"`
	MaxMs           float64        `json:"max_ms"`
	Status          map[string]int `json:"status"`
	Errors          map[string]int `json:"errors,omitempty"` // "409 slot_unavailable": count
	ServerErrors    int            `json:"5xx"`
	TransportErrors int            `json:"transport_errors"`
	// Floor names the floor this endpoint is compared with: "http" (GET
	// /healthz) for reads, "db_write" for writes.
	Floor string `json:"floor,omitempty"`
	// ThroughputRatio is per_s divided by the floor's per_s: meaningful
	// when the phase drove this endpoint alone (single-endpoint scenarios).
	ThroughputRatio float64 `json:"throughput_ratio,omitempty"`
	// StaticRatio is per_s divided by the static-body floor's, for reads
	// run alone: how close the endpoint comes to serving a stored answer
	// of about its size.
	StaticRatio float64 `json:"throughput_ratio_static,omitempty"`
	// LatencyRatio is the floor's mean latency over this endpoint's, i.e.
	// the share of the floor's throughput this endpoint would reach alone
	// at the same concurrency (closed loop: throughput = concurrency / mean
	// latency). Comparable across scenarios.
	LatencyRatio float64 `json:"latency_ratio,omitempty"`
	P50Ratio     float64 `json:"p50_ratio,omitempty"` // p50 / floor p50
	// HTTPWriteRatio (writes, --http-write-floor) is req/s over the HTTP
	// write floor's.
	HTTPWriteRatio float64 `json:"throughput_ratio_http_write,omitempty"`
	// AnswerRatio (read scenarios, --answer-floor) is req/s over the
	// answer floor's.
	AnswerRatio float64 `json:"throughput_ratio_answer,omitempty"`
	// ReadRatio (cold scenario) is req/s over the day-read floor's.
	ReadRatio float64 `json:"throughput_ratio_day_read,omitempty"`
	// CPU is the CPU a request cost over the phase (with --pid): of the
	// scenario's total, and of the database floors (the waitlist scenario
	// reports its own, by phase).
	CPU *PhaseCPU `json:"cpu_per_request,omitempty"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func (s *series) stats(name, phase string, wall time.Duration) EndpointStats {
	slices.Sort(s.lat)
	e := EndpointStats{Name: name, Phase: phase, Requests: len(s.lat) + s.transport, Status: map[string]int{},
		TransportErrors: s.transport}
	var sum time.Duration
	for _, d := range s.lat {
		sum += d
	}
	if n := len(s.lat); n > 0 {
		e.MeanMs = ms(sum / time.Duration(n))
		e.P50Ms, e.P95Ms, e.P99Ms = ms(percentile(s.lat, 50)), ms(percentile(s.lat, 95)), ms(percentile(s.lat, 99))
		e.MaxMs = ms(s.lat[n-1])
	}
	if wall > 0 {
		e.PerSec = math.Round(float64(len(s.lat))/wall.Seconds()*10) / 10
	}
	for st, n := range s.status {
		e.Status[fmt.Sprint(st)] = n
		if st >= 500 {
			e.ServerErrors += n
		}
	}
	if len(s.codes) > 0 {
		e.Errors = s.codes
	}
	return e
}

// Report is everything one run measured; --json writes it.
type Report struct {
	URL         string         `json:"url"`
	Scenario    string         `json:"scenario"`
	Concurrency int            `json:"concurrency"`
	Duration    string         `json:"duration"`
	Database    string         `json:"database,omitempty"` // dialect of --database-url
	Started     time.Time      `json:"started"`
	HTTPFloor   *EndpointStats `json:"http_floor,omitempty"`
	// StaticFloor serves a large static body (the OpenAPI document, about
	// 100 kB) through the same server: the floor for big answers.
	StaticFloor *EndpointStats `json:"static_floor,omitempty"`
	DBFloor     *EndpointStats `json:"db_write_floor,omitempty"`
	// ReadFloor (cold scenario) is a day's essential statement run on the
	// database plus an answer of the same bytes written from memory.
	ReadFloor *EndpointStats `json:"day_read_floor,omitempty"`
	// HTTPWriteFloor (--http-write-floor) is DBFloor's write behind a bare
	// HTTP server: JSON decoded, the write's SQL, JSON encoded.
	HTTPWriteFloor *EndpointStats `json:"http_write_floor,omitempty"`
	// AnswerFloor (--answer-floor) is the read scenario's own answers
	// written from memory by a bare HTTP server (its throughput_ratio is
	// over the HTTP floor's: what the answers' size leaves of it), and
	// AnswerBytes their average size.
	AnswerFloor *EndpointStats `json:"answer_floor,omitempty"`
	AnswerBytes int            `json:"answer_bytes,omitempty"`
	// DBFloorOf is the write DBFloor is of: create, hold, cancel or reschedule.
	DBFloorOf string          `json:"db_write_floor_of,omitempty"`
	Endpoints []EndpointStats `json:"endpoints"`
	// Total is every request of the scenario phase together.
	Total        EndpointStats `json:"total"`
	ServerErrors int           `json:"5xx"`
	// Hot-slot scenario: rounds of concurrent creates on one slot; rounds
	// that booked the slot more than once (a double booking), and rounds
	// in which nobody got it.
	Rounds       int `json:"rounds,omitempty"`
	DoubleBooked int `json:"double_booked_rounds"`
	EmptyRounds  int `json:"empty_rounds"`
	// ServerMaxRSSMB is the largest resident set of --pid seen during the
	// scenario phase.
	ServerMaxRSSMB float64 `json:"server_max_rss_mb,omitempty"`
	// Webhook: with --webhook, the deliveries of the scenario's events.
	Webhook *WebhookStats `json:"webhook,omitempty"`
	// Waitlist: the waitlist scenario's offers and cancel throughputs.
	Waitlist *WaitlistStats `json:"waitlist,omitempty"`
	Notes    []string       `json:"notes,omitempty"`
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// compare fills an endpoint's ratios against its floor.
func (rep *Report) compare(e *EndpointStats, alone bool) {
	floor := rep.HTTPFloor
	e.Floor = "http"
	if strings.HasPrefix(e.Name, "POST ") {
		floor, e.Floor = rep.DBFloor, "db_write"
	}
	if floor == nil || floor.Requests == 0 || e.MeanMs == 0 {
		e.Floor = ""
		return
	}
	if alone && floor.PerSec > 0 {
		e.ThroughputRatio = round2(e.PerSec / floor.PerSec)
	}
	if alone && e.Floor == "http" && rep.StaticFloor != nil && rep.StaticFloor.PerSec > 0 {
		e.StaticRatio = round2(e.PerSec / rep.StaticFloor.PerSec)
	}
	if alone && e.Floor == "db_write" && rep.HTTPWriteFloor != nil && rep.HTTPWriteFloor.PerSec > 0 {
		e.HTTPWriteRatio = round2(e.PerSec / rep.HTTPWriteFloor.PerSec)
	}
	if alone && e.Floor == "http" && rep.AnswerFloor != nil && rep.AnswerFloor.PerSec > 0 {
		e.AnswerRatio = round2(e.PerSec / rep.AnswerFloor.PerSec)
	}
	if alone && e.Floor == "http" && rep.ReadFloor != nil && rep.ReadFloor.PerSec > 0 {
		e.ReadRatio = round2(e.PerSec / rep.ReadFloor.PerSec)
	}
	e.LatencyRatio = round2(floor.MeanMs / e.MeanMs)
	if floor.P50Ms > 0 {
		e.P50Ratio = round2(e.P50Ms / floor.P50Ms)
	}
}

func writeJSONReport(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// writeTable prints the report for people.
func writeTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "barberbench %s: %s, concurrency %d, %s", rep.Scenario, rep.URL, rep.Concurrency, rep.Duration)
	if rep.Database != "" {
		fmt.Fprintf(w, ", database %s", rep.Database)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-36s %8s %9s %8s %8s %8s %8s  %-8s %7s %7s %8s %5s\n",
		"endpoint", "requests", "req/s", "mean ms", "p50 ms", "p95 ms", "p99 ms", "floor", "thr×", "lat×", "static×", "5xx")
	row := func(e *EndpointStats, label string) {
		fmt.Fprintf(w, "%-36s %8d %9.1f %8.2f %8.2f %8.2f %8.2f  %-8s %7s %7s %8s %5d\n",
			label, e.Requests, e.PerSec, e.MeanMs, e.P50Ms, e.P95Ms, e.P99Ms, e.Floor,
			ratio(e.ThroughputRatio), ratio(e.LatencyRatio), ratio(e.StaticRatio), e.ServerErrors)
	}
	if rep.HTTPFloor != nil {
		row(rep.HTTPFloor, "floor: GET /healthz")
	}
	if rep.StaticFloor != nil {
		row(rep.StaticFloor, "floor: GET openapi.json (static)")
	}
	if rep.AnswerFloor != nil {
		row(rep.AnswerFloor, "floor: its answers, bare HTTP")
	}
	if rep.DBFloor != nil {
		row(rep.DBFloor, floorLabel(rep.DBFloorOf))
	}
	if rep.HTTPWriteFloor != nil {
		row(rep.HTTPWriteFloor, "floor: the same behind bare HTTP")
	}
	if rep.ReadFloor != nil {
		row(rep.ReadFloor, "floor: a day's read + its bytes")
	}
	for i := range rep.Endpoints {
		row(&rep.Endpoints[i], rep.Endpoints[i].Name)
	}
	row(&rep.Total, "total ("+rep.Scenario+")")
	fmt.Fprintln(w, "thr× = req/s ÷ floor req/s (single-endpoint scenarios); lat× = floor mean ÷ endpoint mean latency;")
	fmt.Fprintln(w, "static× = req/s ÷ the static-body floor's (reads alone): the OpenAPI document, ~100 kB, served from memory")
	fmt.Fprintln(w, "(the throughput share the endpoint would get alone at this concurrency); floor http = GET /healthz, db_write = the essential SQL of the write, in one transaction")
	var errs []string
	for _, e := range rep.Endpoints {
		for code, n := range e.Errors {
			errs = append(errs, fmt.Sprintf("  %-36s %-36s %d", e.Name, code, n))
		}
		if e.TransportErrors > 0 {
			errs = append(errs, fmt.Sprintf("  %-36s %-36s %d", e.Name, "no response", e.TransportErrors))
		}
	}
	if len(errs) > 0 {
		slices.Sort(errs)
		fmt.Fprintln(w, "errors:")
		for _, e := range errs {
			fmt.Fprintln(w, e)
		}
	}
	if rep.Rounds > 0 {
		fmt.Fprintf(w, "hot slot: %d rounds of %d concurrent creates on one slot; %d booked it more than once, %d not at all\n",
			rep.Rounds, rep.Concurrency, rep.DoubleBooked, rep.EmptyRounds)
	}
	if rep.ServerMaxRSSMB > 0 {
		fmt.Fprintf(w, "server max RSS during the scenario: %.1f MB\n", rep.ServerMaxRSSMB)
	}
	if h := rep.Webhook; h != nil {
		fmt.Fprintf(w, "webhook: %d of %d created events delivered (%d requests in all); from commit p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			h.Delivered, h.Created, h.Attempts, h.P50Ms, h.P99Ms, h.MaxMs)
	}
	if rep.Waitlist != nil {
		rep.Waitlist.write(w)
	}
	if rep.HTTPWriteFloor != nil {
		fmt.Fprintf(w, "httpw× = req/s ÷ the HTTP write floor's (the write's SQL behind a bare net/http server: JSON in, JSON out): %s\n", ratio(rep.Total.HTTPWriteRatio))
	}
	if f := rep.AnswerFloor; f != nil {
		fmt.Fprintf(w, "answer× = req/s ÷ the answer floor's (the scenario's answers, %d bytes on average, written from memory by a bare net/http server): %s; that floor is %s× /healthz\n",
			rep.AnswerBytes, ratio(rep.Total.AnswerRatio), ratio(f.ThroughputRatio))
	}
	if rep.ReadFloor != nil {
		fmt.Fprintf(w, "read× = req/s ÷ the day-read floor's (a day's statement on the database, then its answer's bytes from memory): %s\n", ratio(rep.Total.ReadRatio))
	}
	fmt.Fprintf(w, "5xx in the scenario: %d\n", rep.ServerErrors)
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// watchRSS samples the server's resident memory until the returned
// function is called.
func (b *bench) watchRSS(rep *Report) func() {
	if b.c.pid <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if mb, ok := rssMB(b.c.pid); ok && mb > rep.ServerMaxRSSMB {
				rep.ServerMaxRSSMB = mb
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// rssMB reads a process's resident set size from /proc.
func rssMB(pid int) (float64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return round2(kb / 1024), err == nil
		}
	}
	return 0, false
}
