package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/mcpserver"
	"barberd/rest/apitest"
)

// The findings on the largest unit the caps allow (200 barbers, open 24 h,
// 5-minute steps), on every surface: a month of every barber's slots is
// refused at once, naming what to narrow; a next search in a window no
// start falls in answers at once.
func TestLargeUnitEverySurface(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db)
		l, err := demo.SeedLarge(context.Background(), db, e.keys.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		const from, to = "2027-03-02", "2027-04-01"

		r := e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { availabilityRange(unitId: $u, serviceId: $s, from: "`+from+`", to: "`+to+`") {
			days { date slots { startsAt endsAt startsAtUtc endsAtUtc barberId } } } }`, map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if c := r.code(t); c != domain.CodeValidationFailed || !strings.Contains(r.Errors[0].Message, "fewer days or one barber") {
			t.Errorf("GraphQL 31 days: %s %q", c, r.Errors[0].Message)
		}
		// GraphQL answers are built whole: an operation lists at most a
		// quarter of --max-slots (25,000), its root fields together.
		r = e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { availability(unitId: $u, serviceId: $s, date: "`+from+`") { slots { startsAt } } }`,
			map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if c := r.code(t); c != domain.CodeValidationFailed || !strings.Contains(r.Errors[0].Message, "one barber") {
			t.Errorf("GraphQL a day of every barber: %s %q", c, r.Errors[0].Message)
		}
		month := func(alias string, b int) string {
			return alias + `: availabilityRange(unitId: $u, serviceId: $s, barberId: "` + l.BarberIDs[b] + `", from: "` + from + `", to: "` + to + `") { days { slots { startsAt } } }`
		}
		r = e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { `+month("a", 0)+month("b", 1)+month("c", 2)+` }`,
			map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if len(r.Errors) != 1 || r.code(t) != domain.CodeValidationFailed {
			t.Errorf("GraphQL three barbers' months (8,700 slots each) as three root fields: %d errors %+v", len(r.Errors), r.Errors)
		}

		q := url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "from": {from}, "to": {to}}
		rep := call(t, "GET", e.srv.URL+"/api/integrations/v1/availability/range?"+q.Encode(), e.keys.APIKey, nil, http.StatusBadRequest)
		if rep.Code() != domain.CodeValidationFailed {
			t.Errorf("REST 31 days: %s", rep.Code())
		}
		q = url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "time_from": {"23:57"}, "time_to": {"23:58"}}
		next := call(t, "GET", e.srv.URL+"/api/integrations/v1/availability/next?"+q.Encode(), e.keys.APIKey, nil, http.StatusOK).JSON(t)
		if next["reason"] != graph.ReasonNoneWithinHorizon {
			t.Errorf("REST next in 23:57-23:58: %v", next)
		}

		a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil))
		p := a.refused("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "from": from, "to": to}, domain.CodeValidationFailed)
		var fields []string
		for _, f := range p.Errors {
			fields = append(fields, f.Field)
		}
		if !slices.Equal(fields, []string{"to", "barber_id"}) || !strings.Contains(p.Detail, "fewer days") {
			t.Errorf("MCP 31 days refused naming %v: %q", fields, p.Detail)
		}
		p = a.refused("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "date": from}, domain.CodeValidationFailed)
		if len(p.Errors) != 1 || p.Errors[0].Field != "barber_id" {
			t.Errorf("MCP one day of every barber refused naming %+v", p.Errors)
		}
		r2, b := a.call("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "barber_id": l.BarberIDs[0], "from": from, "to": "2027-03-10"})
		if r2.IsError || 2*len(b) > mcpserver.MaxAnswerBytes {
			t.Errorf("MCP 9 days of one barber: error %v, %d bytes of JSON (twice in the answer)", r2.IsError, len(b))
		}
	})
}

// heapPeak runs f and returns the most the heap grew above its size
// before, sampled every 2 ms (garbage not yet collected counts).
func heapPeak(f func()) int64 {
	runtime.GC()
	var idle runtime.MemStats
	runtime.ReadMemStats(&idle)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	})
	f()
	close(stop)
	sampler.Wait()
	return max(int64(peak.Load())-int64(idle.HeapAlloc), 0)
}

// The largest requests each surface allows on the large unit, each on days
// not yet read, stay under 64 MB of heap above idle (client included).
// The figures are logged for docs/performance.md.
func TestLargeUnitMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory")
	}
	db := storetest.Open(t, "postgres")
	e := newGQLEnv(t, db)
	l, err := demo.SeedLarge(context.Background(), db, e.keys.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	rest := func(path string, q url.Values, status int) func() {
		return func() {
			call(t, "GET", e.srv.URL+"/api/integrations/v1"+path+"?"+q.Encode(), e.keys.APIKey, nil, status)
		}
	}
	one := func(b int, from, to string) url.Values {
		return url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "barber_id": {l.BarberIDs[b]}, "from": {from}, "to": {to}}
	}
	month := func(alias string, b int, fields string) string {
		return alias + `: availabilityRange(unitId: $u, serviceId: $s, barberId: "` + l.BarberIDs[b] + `", from: "2027-04-02", to: "2027-05-02") { days { slots { ` + fields + ` } } } `
	}
	a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil))
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"REST day of every barber (57,600 slots)", rest("/availability", url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "date": {"2027-03-04"}}, http.StatusOK)},
		{"REST month of one barber", rest("/availability/range", one(1, "2027-03-02", "2027-04-01"), http.StatusOK)},
		{"REST next, refused past the budget", rest("/availability/next", url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID},
			"after": {"2027-03-07T23:31:00"}, "time_from": {"23:30"}, "time_to": {"23:31"}, "weekdays": {"7"}}, http.StatusBadRequest)},
		{"GraphQL month of one barber, every field, and two more with startsAt (the third refused)", func() {
			e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { `+month("a", 2, "startsAt endsAt startsAtUtc endsAtUtc barberId")+
				month("b", 3, "startsAt")+month("c", 4, "startsAt")+`}`, map[string]any{"u": l.UnitID, "s": l.ServiceID})
		}},
		{"MCP 9 days of one barber (about 1 MiB)", func() {
			a.call("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "barber_id": l.BarberIDs[5], "from": "2027-03-12", "to": "2027-03-20"})
		}},
	} {
		grew := heapPeak(c.run)
		t.Logf("%s: heap peak %.1f MB above idle", c.name, float64(grew)/(1<<20))
		if grew > 64<<20 {
			t.Errorf("%s: heap peak %d MB above idle", c.name, grew>>20)
		}
	}
}

// Sixteen concurrent worst-case tool calls on the large unit (one barber's
// 9 days, the most one MCP answer holds, computed afresh each time, over
// and over), against a barberd process of its own, keep another account's
// GET /units under 100 ms at the 99th percentile and the server's peak RSS
// under 512 MB: the admission gate queues the calls, and one core stays
// with everything else.
func TestMCPLargeUnitConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("measures latency under load")
	}
	const loadFor = 4 * time.Second
	dbURL := storetest.URL(t, "postgres")
	keys, other := seedDemo(t, dbURL), seedDemo(t, dbURL)
	l, err := demo.SeedLarge(context.Background(), storetest.OpenURL(t, dbURL), keys.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "", "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--database-url", dbURL)
	units := srv.URL + "/api/integrations/v1/units"
	// probe times another account's GET /units, every 5 ms, until done.
	probe := func(done <-chan struct{}) []time.Duration {
		var latencies []time.Duration
		for {
			select {
			case <-done:
				slices.Sort(latencies)
				return latencies
			case <-time.After(5 * time.Millisecond):
			}
			t0 := time.Now()
			if r, err := apitest.Do(nil, "GET", units, other.APIKey, nil); err != nil || r.Status != http.StatusOK {
				t.Errorf("GET /units: %v %v", r, err)
			}
			latencies = append(latencies, time.Since(t0))
		}
	}
	p99 := func(l []time.Duration) time.Duration { return l[len(l)*99/100] }
	// Each attempt measures GET /units alone for a second, then under the
	// calls. A machine so loaded that GET /units alone nearly misses the
	// mark says nothing of the gate; other work on a shared machine can
	// spoil one attempt, not three (without the gate p99 was 0.3-0.9 s).
	for attempt := 1; ; attempt++ {
		quiet := make(chan struct{})
		time.AfterFunc(time.Second, func() { close(quiet) })
		idle := probe(quiet)
		done := make(chan struct{})
		var busy []time.Duration
		var prober sync.WaitGroup
		prober.Go(func() { busy = probe(done) })
		answered, refused := concurrentToolCalls(t, srv.URL, keys.APIKey, l, loadFor)
		close(done)
		prober.Wait()
		t.Logf("attempt %d: idle, another account's GET /units: %d calls, median %v, p99 %v", attempt, len(idle), idle[len(idle)/2], p99(idle))
		t.Logf("attempt %d: 16 concurrent 9-day tool calls for %v (%d answered, %d refused as busy): GET /units %d calls, median %v, p99 %v, max %v",
			attempt, loadFor, answered, refused, len(busy), busy[len(busy)/2], p99(busy), busy[len(busy)-1])
		if answered < 16 {
			t.Errorf("%d tool calls answered, want at least one per caller", answered)
		}
		if p99(busy) < 100*time.Millisecond {
			break
		}
		if p99(idle) >= 50*time.Millisecond {
			t.Logf("the machine is too loaded to judge: p99 %v without the tool calls", p99(idle))
			break
		}
		if attempt == 3 {
			t.Errorf("another account's GET /units p99 %v under load, want < 100ms", p99(busy))
			break
		}
	}
	if hwm := peakRSS(t, srv.cmd.Process.Pid); hwm > 512<<20 {
		t.Errorf("server peak RSS %d MB, want < 512 MB", hwm>>20)
	} else {
		t.Logf("server peak RSS %.1f MB", float64(hwm)/(1<<20))
	}
}

// concurrentToolCalls makes 16 callers call get_availability on 9 days of
// a barber of the large unit each, over and over, for d, and counts the
// answers and the refusals (unavailable: the gate's wait ran out).
func concurrentToolCalls(t *testing.T, base, key string, l *demo.Large, d time.Duration) (answered, refused int64) {
	var calls sync.WaitGroup
	var ok, busy atomic.Int64
	for i := range 16 {
		calls.Go(func() {
			first := time.Date(2027, 3, 2+i%4*9, 0, 0, 0, 0, time.UTC)
			body := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
				"name": "get_availability", "arguments": map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID,
					"barber_id": l.BarberIDs[i], "from": first.Format(time.DateOnly), "to": first.AddDate(0, 0, 8).Format(time.DateOnly)}}}
			for end := time.Now().Add(d); time.Now().Before(end); {
				status, head, err := sendMCP(base, key, body)
				switch {
				case err != nil || status != http.StatusOK:
					t.Errorf("call %d: %d %v", i, status, err)
					return
				case bytes.Contains(head, []byte(`"isError":true`)):
					busy.Add(1)
				default:
					ok.Add(1)
				}
			}
		})
	}
	calls.Wait()
	return ok.Load(), busy.Load()
}

// sendMCP posts one JSON-RPC message to /mcp with key, as a stateless
// client may, and returns the status and the first 4 kB of the answer,
// discarding the rest.
func sendMCP(base, key string, body any) (int, []byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", base+"/mcp", bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Service-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode, head, err
}

// peakRSS is the peak resident set size of process pid (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no peak RSS: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc status")
	return 0
}
