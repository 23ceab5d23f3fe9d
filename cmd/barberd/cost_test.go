package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/mcpserver"
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
		if c := r.code(t); c != graph.CodeValidationFailed || !strings.Contains(r.Errors[0].Message, "fewer days or one barber") {
			t.Errorf("GraphQL 31 days: %s %q", c, r.Errors[0].Message)
		}
		// GraphQL answers are built whole: an operation lists at most a
		// quarter of --max-slots (25,000), its root fields together.
		r = e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { availability(unitId: $u, serviceId: $s, date: "`+from+`") { slots { startsAt } } }`,
			map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if c := r.code(t); c != graph.CodeValidationFailed || !strings.Contains(r.Errors[0].Message, "one barber") {
			t.Errorf("GraphQL a day of every barber: %s %q", c, r.Errors[0].Message)
		}
		month := func(alias string, b int) string {
			return alias + `: availabilityRange(unitId: $u, serviceId: $s, barberId: "` + l.BarberIDs[b] + `", from: "` + from + `", to: "` + to + `") { days { slots { startsAt } } }`
		}
		r = e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { `+month("a", 0)+month("b", 1)+month("c", 2)+` }`,
			map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if len(r.Errors) != 1 || r.code(t) != graph.CodeValidationFailed {
			t.Errorf("GraphQL three barbers' months (8,700 slots each) as three root fields: %d errors %+v", len(r.Errors), r.Errors)
		}

		q := url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "from": {from}, "to": {to}}
		rep := call(t, "GET", e.srv.URL+"/api/integrations/v1/availability/range?"+q.Encode(), e.keys.APIKey, nil, http.StatusBadRequest)
		if rep.Code() != graph.CodeValidationFailed {
			t.Errorf("REST 31 days: %s", rep.Code())
		}
		q = url.Values{"unit_id": {l.UnitID}, "service_id": {l.ServiceID}, "time_from": {"23:57"}, "time_to": {"23:58"}}
		next := call(t, "GET", e.srv.URL+"/api/integrations/v1/availability/next?"+q.Encode(), e.keys.APIKey, nil, http.StatusOK).JSON(t)
		if next["reason"] != graph.ReasonNoneWithinHorizon {
			t.Errorf("REST next in 23:57-23:58: %v", next)
		}

		a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil))
		p := a.refused("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "from": from, "to": to}, graph.CodeValidationFailed)
		var fields []string
		for _, f := range p.Errors {
			fields = append(fields, f.Field)
		}
		if !slices.Equal(fields, []string{"to", "barber_id"}) || !strings.Contains(p.Detail, "fewer days") {
			t.Errorf("MCP 31 days refused naming %v: %q", fields, p.Detail)
		}
		p = a.refused("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID, "date": from}, graph.CodeValidationFailed)
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

// 16 concurrent get_availability calls of the largest answer allowed on the
// large unit, each on days not yet read, keep the heap small, and another
// account's REST calls go on. The figures are logged for docs/performance.md.
func TestMCPLargeUnitConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("measures memory under load")
	}
	db := storetest.Open(t, "postgres")
	e := newGQLEnv(t, db)
	l, err := demo.SeedLarge(context.Background(), db, e.keys.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	other, err := demo.Seed(context.Background(), graph.New(graph.Settings{DB: db}))
	if err != nil {
		t.Fatal(err)
	}
	units := e.srv.URL + "/api/integrations/v1/units"
	call(t, "GET", units, other.APIKey, nil, http.StatusOK) // warms the other key
	var latencies []time.Duration
	var mu sync.Mutex
	grew := heapPeak(func() {
		done := make(chan struct{})
		var probe sync.WaitGroup
		probe.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				t0 := time.Now()
				call(t, "GET", units, other.APIKey, nil, http.StatusOK)
				mu.Lock()
				latencies = append(latencies, time.Since(t0))
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		})
		var calls sync.WaitGroup
		for i := range 16 {
			calls.Go(func() {
				a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil))
				first := time.Date(2027, 3, 2+i%4*9, 0, 0, 0, 0, time.UTC)
				r, _ := a.call("get_availability", map[string]any{"unit_id": l.UnitID, "service_id": l.ServiceID,
					"barber_id": l.BarberIDs[i], "from": first.Format(time.DateOnly), "to": first.AddDate(0, 0, 8).Format(time.DateOnly)})
				if r.IsError {
					t.Errorf("call %d refused", i)
				}
			})
		}
		calls.Wait()
		close(done)
		probe.Wait()
	})
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	t.Logf("16 concurrent 9-day answers (about 1 MiB each): heap peak %.1f MB above idle (clients included); another account's GET /units: %d calls, median %v, p99 %v, max %v",
		float64(grew)/(1<<20), len(latencies), latencies[len(latencies)/2], latencies[len(latencies)*99/100], latencies[len(latencies)-1])
	if grew > 512<<20 {
		t.Errorf("heap peak %d MB above idle", grew>>20)
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if strings.HasPrefix(line, "VmHWM:") {
				t.Logf("peak RSS of the whole test process (seeding and clients included): %s", strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")))
			}
		}
	}
}
