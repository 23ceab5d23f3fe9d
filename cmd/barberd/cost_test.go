package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"barberd/cmd/barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/mcpserver"
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
		r = e.query(t, e.keys.APIKey, `query($u: ID!, $s: ID!) { availability(unitId: $u, serviceId: $s, date: "`+from+`") { slots { startsAt } } }`,
			map[string]any{"u": l.UnitID, "s": l.ServiceID})
		if n := len(r.ok(t)["availability"].(map[string]any)["slots"].([]any)); n != demo.LargeBarbers*283 {
			t.Errorf("GraphQL: a day of every barber has %d slots", n)
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
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	})
	var latencies []time.Duration
	var mu sync.Mutex
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
			call(t, "GET", e.srv.URL+"/api/integrations/v1/units", other.APIKey, nil, http.StatusOK)
			mu.Lock()
			latencies = append(latencies, time.Since(t0))
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
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
	close(stop)
	sampler.Wait()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p99 := latencies[len(latencies)*99/100]
	above := int64(peak.Load()) - int64(idle.HeapAlloc)
	t.Logf("16 concurrent 9-day answers: heap peak %d MB above idle; other account's GET /units p99 %v over %d calls", above>>20, p99, len(latencies))
	if above > 256<<20 {
		t.Errorf("heap peak %s above idle", fmt.Sprint(above>>20, " MB"))
	}
}
