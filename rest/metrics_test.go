package rest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/rest"
)

// scrape reads /metrics, which needs no API key.
func scrape(t *testing.T, e *env) string {
	t.Helper()
	resp, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("/metrics: Content-Type %q", ct)
	}
	return string(b)
}

// series renders a series as the text exposition format does: labels
// sorted by name.
func series(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// metricValue returns the value of one series in a scrape, or -1 when the
// series is absent.
func metricValue(t *testing.T, body, name string, labels map[string]string) float64 {
	t.Helper()
	want := series(name, labels)
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || line[:i] != want {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		return v
	}
	return -1
}

func TestMetrics(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		e.serve(stack{metrics: rest.NewMetrics(e.db.SQL)})
		key := e.keys.APIKey
		route := func(p string) string { return rest.BasePath + p }

		before := scrape(t, e)
		for _, name := range []string{"barberd_appointments_created_total", "barberd_holds_created_total"} {
			if v := metricValue(t, before, name, map[string]string{"source": "api"}); v > 0 {
				t.Fatalf("%s = %v before anything happened", name, v)
			}
		}

		// A create, then a conflict on the same barber and time.
		joaoAt10 := e.booking(haircut, tuesdayAt10)
		joaoAt10["barber_id"] = e.barber(joao)
		expect(t, call(t, e, "POST", "/appointments", key, joaoAt10), http.StatusCreated, "")
		expect(t, call(t, e, "POST", "/appointments", key, joaoAt10), http.StatusConflict, domain.CodeSlotUnavailable)
		// A replayed create is not a new appointment.
		withRef := e.booking(haircut, tuesdayAt11)
		withRef["external_reference"] = "crm-1"
		expect(t, call(t, e, "POST", "/appointments", key, withRef), http.StatusCreated, "")
		expect(t, call(t, e, "POST", "/appointments", key, withRef), http.StatusOK, "")
		// A hold, which expires and is swept by the background job.
		expect(t, call(t, e, "POST", "/slots/hold", key, holdRequest(e, haircut, "2027-03-03T10:00:00", "ttl_seconds", 60)), http.StatusCreated, "")
		e.clock.advance(2 * time.Minute)
		if n, err := e.res.ExpireHolds(e.ctx, 0); err != nil || n != 1 {
			t.Fatalf("ExpireHolds = %d, %v; want 1", n, err)
		}
		// An appointment read, and an unknown route.
		expect(t, call(t, e, "GET", "/appointments/nope", key, nil), http.StatusNotFound, domain.CodeAppointmentNotFound)
		expect(t, call(t, e, "GET", "/no/such/route", key, nil), http.StatusNotFound, domain.CodeNotFound)

		body := scrape(t, e)
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"barberd_appointments_created_total", map[string]string{"source": "api"}, 2},
			{"barberd_slot_conflicts_total", nil, 1},
			{"barberd_holds_created_total", nil, 1},
			{"barberd_holds_expired_total", nil, 1},
			{"barberd_notifications_written_total", map[string]string{"type": domain.EventCreated}, 2},
			{"barberd_rate_limited_requests_total", nil, 0},
			{"barberd_http_requests_total", map[string]string{"route": route("/appointments"), "method": "POST", "status": "201"}, 2},
			{"barberd_http_requests_total", map[string]string{"route": route("/appointments"), "method": "POST", "status": "200"}, 1},
			{"barberd_http_requests_total", map[string]string{"route": route("/appointments"), "method": "POST", "status": "409"}, 1},
			{"barberd_http_requests_total", map[string]string{"route": route("/slots/hold"), "method": "POST", "status": "201"}, 1},
			// The route pattern, never the raw path.
			{"barberd_http_requests_total", map[string]string{"route": route("/appointments/{id}"), "method": "GET", "status": "404"}, 1},
			{"barberd_http_request_duration_seconds_count", map[string]string{"route": route("/appointments"), "method": "POST"}, 4},
		} {
			if got := metricValue(t, body, c.name, c.labels); got != c.want {
				t.Errorf("%s = %v, want %v", series(c.name, c.labels), got, c.want)
			}
		}
		if strings.Contains(body, "/no/such/route") || strings.Contains(body, "/appointments/nope") {
			t.Error("a raw path became a label")
		}
		// The database pool.
		for _, name := range []string{
			"go_sql_open_connections", "go_sql_in_use_connections", "go_sql_idle_connections",
			"go_sql_max_open_connections", "go_sql_wait_count_total", "go_sql_wait_duration_seconds_total",
		} {
			if v := metricValue(t, body, name, map[string]string{"db_name": "barberd"}); v < 0 {
				t.Errorf("%s is missing", name)
			}
		}
		if v := metricValue(t, body, "go_sql_open_connections", map[string]string{"db_name": "barberd"}); v < 1 {
			t.Errorf("go_sql_open_connections = %v after requests, want at least 1", v)
		}
	})
}

// TestMetricsNilSafe: a resolver without metrics works (every other test
// relies on it); a Metrics without a database has no pool series.
func TestMetricsNilSafe(t *testing.T) {
	m := rest.NewMetrics(nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "go_sql_") {
		t.Fatalf("status %d; pool series without a database: %v", rec.Code, strings.Contains(rec.Body.String(), "go_sql_"))
	}
}
