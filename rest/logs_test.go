package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"

	"barberd/rest"
)

// logBuffer collects JSON log lines from concurrent handlers.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines decodes every line of the log.
func (b *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// find returns the log lines with the given message and request id.
func find(lines []map[string]any, msg, requestID string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg && l["request_id"] == requestID {
			out = append(out, l)
		}
	}
	return out
}

// TestAccessLog: every request is logged once as JSON with its request id,
// route pattern, status, latency and key id, and nothing in the log (at
// debug level, of every component) carries the key's secret or the client's
// phone, e-mail or name.
func TestAccessLog(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		var logs logBuffer
		log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		lim, _ := newLimiter(1000, 1000)
		e.serve(stack{log: log, limiter: lim, metrics: rest.NewMetrics(e.db.SQL), extra: func(r chi.Router) {
			r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("kaboom") })
		}})
		viewer, err := e.res.Authenticate(context.Background(), e.keys.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		const email, phone, name = "ana.secreta@example.com", "+351919876543", "Ana Secreta Costa"

		body := e.booking(haircut, tuesdayAt10)
		body["client"] = map[string]any{"name": name, "phone": phone, "email": email}
		body["external_reference"] = "crm-log-1"
		created := call(t, e, "POST", "/appointments", e.keys.APIKey, body)
		expect(t, created, http.StatusCreated, "")
		var a struct{ ID string }
		created.Decode(t, &a)
		// The same client again: a conflict and a replay; a read; then pending
		// notifications, whose snapshots hold the client.
		expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusOK, "")
		body["external_reference"] = "crm-log-2"
		body["barber_id"] = e.barber(joao)
		r := call(t, e, "POST", "/appointments", e.keys.APIKey, body)
		if r.Status != http.StatusCreated && r.Status != http.StatusConflict {
			t.Fatalf("second create: %d %s", r.Status, r.Body)
		}
		expect(t, call(t, e, "GET", "/appointments/"+a.ID, e.keys.APIKey, nil), http.StatusOK, "")
		expect(t, call(t, e, "GET", "/notifications/pending", e.keys.APIKey, nil), http.StatusOK, "")
		// Bad input with the client's data echoed nowhere.
		bad := e.booking(haircut, "tuesday")
		bad["client"] = map[string]any{"name": name, "phone": "not " + phone, "email": "x" + email}
		expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, bad), http.StatusBadRequest, "validation_failed")
		// A wrong key that looks like the real one.
		expect(t, call(t, e, "GET", "/context", e.keys.APIKey+"x", nil), http.StatusUnauthorized, "invalid_api_key")

		lines := logs.lines(t)
		all := logs.String()
		for what, s := range map[string]string{
			"API key secret": e.keys.APIKey, "client phone": phone, "client phone digits": strings.TrimPrefix(phone, "+"),
			"client e-mail": email, "client name": name, "admin key secret": e.keys.AdminAPIKey,
		} {
			if strings.Contains(all, s) {
				t.Errorf("the log carries the %s", what)
			}
		}

		// The create's access line.
		id := created.Header.Get("X-Request-Id")
		got := find(lines, "request", id)
		if len(got) != 1 {
			t.Fatalf("%d access lines for request %s, want 1:\n%s", len(got), id, all)
		}
		l := got[0]
		for k, want := range map[string]any{
			"method": "POST", "route": rest.BasePath + "/appointments", "status": float64(201),
			"key_id": viewer.KeyID, "level": "INFO",
		} {
			if l[k] != want {
				t.Errorf("access line %s = %v, want %v: %v", k, l[k], want, l)
			}
		}
		if ms, ok := l["latency_ms"].(float64); !ok || ms < 0 {
			t.Errorf("access line latency_ms = %v", l["latency_ms"])
		}
		// Every request got exactly one access line, each with an id.
		n := 0
		for _, l := range lines {
			if l["msg"] == "request" {
				n++
				if s, _ := l["request_id"].(string); s == "" {
					t.Errorf("access line without request_id: %v", l)
				}
				if _, ok := l["route"]; !ok {
					t.Errorf("access line without route: %v", l)
				}
			}
		}
		if n != 7 {
			t.Errorf("%d access lines, want 7", n)
		}

		// A panic: 500 problem+json with the request id, logged with it and
		// the stack.
		resp, err := http.Get(e.srv.URL + "/boom")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id = resp.Header.Get("X-Request-Id")
		if resp.StatusCode != http.StatusInternalServerError || id == "" {
			t.Fatalf("panic: status %d, X-Request-Id %q", resp.StatusCode, id)
		}
		lines = logs.lines(t)
		for _, msg := range []string{"panic", "request failed", "request"} {
			got := find(lines, msg, id)
			if len(got) != 1 {
				t.Errorf("%d %q lines with request id %s, want 1", len(got), msg, id)
				continue
			}
			if msg == "panic" && !strings.Contains(got[0]["stack"].(string), "logs_test.go") {
				t.Errorf("panic line without the stack: %v", got[0])
			}
			if msg != "request" && got[0]["level"] != "ERROR" {
				t.Errorf("%q logged at %v, want ERROR", msg, got[0]["level"])
			}
		}
	})
}
