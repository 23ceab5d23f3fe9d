package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
	"barberd/rest/apitest"
)

// exposed is a server assembled by routes with the given settings over a
// fresh database holding the demo account.
type exposed struct {
	srv  *httptest.Server
	keys *demo.Keys
}

func newExposed(t *testing.T, db *store.DB, c serverConfig) *exposed {
	t.Helper()
	res := graph.New(graph.Settings{DB: db})
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(routes(res, db, c, rest.NewMetrics(db.SQL), nil))
	t.Cleanup(srv.Close)
	return &exposed{srv: srv, keys: keys}
}

// exchange is one raw request's answer.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// gqlCode is the code of the first GraphQL error of the answer.
func (x *exchange) gqlCode(t *testing.T) string {
	t.Helper()
	var out struct {
		Errors []struct{ Extensions map[string]any }
	}
	if err := json.Unmarshal(x.body, &out); err != nil || len(out.Errors) == 0 {
		t.Fatalf("status %d: not a GraphQL error answer: %v: %.300s", x.status, err, x.body)
	}
	c, _ := out.Errors[0].Extensions["code"].(string)
	return c
}

func (e *exposed) do(t *testing.T, method, path, key string, body io.Reader, header map[string]string) *exchange {
	t.Helper()
	var b any
	if body != nil {
		b = body
	}
	req, err := apitest.NewRequest(method, e.srv.URL+path, key, b)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	a, err := apitest.Send(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	return &exchange{status: a.Status, header: a.Header, body: a.Body}
}

func gqlBody(query string) *bytes.Reader {
	b, _ := json.Marshal(map[string]any{"query": query})
	return bytes.NewReader(b)
}

// onlyReader hides a reader's length, so the request goes out chunked,
// without Content-Length.
type onlyReader struct{ io.Reader }

// TestGraphQLBodyLimit: /graphql takes the body limit of REST and answers
// 413 payload_too_large in GraphQL's form, whether Content-Length tells the
// size or the body comes chunked, and for a GET's query string too.
func TestGraphQLBodyLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newExposed(t, db, serverConfig{maxBody: 4096})
		padded := "{" + strings.Repeat(" ", 3000) + "__typename }"
		if x := e.do(t, "POST", "/graphql", "", gqlBody(padded), nil); x.status != http.StatusOK {
			t.Fatalf("a body under the limit: %d %s", x.status, x.body)
		}
		big := "{" + strings.Repeat(" ", 5000) + "__typename }"
		for name, body := range map[string]io.Reader{
			"with Content-Length": gqlBody(big),
			"chunked":             onlyReader{gqlBody(big)},
		} {
			x := e.do(t, "POST", "/graphql", "", body, nil)
			if x.status != http.StatusRequestEntityTooLarge || x.gqlCode(t) != rest.CodePayloadTooLarge {
				t.Errorf("%s: status %d: %.300s", name, x.status, x.body)
			}
		}
		x := e.do(t, "GET", "/graphql?query="+url.QueryEscape(big), "", nil, nil)
		if x.status != http.StatusRequestEntityTooLarge || x.gqlCode(t) != rest.CodePayloadTooLarge {
			t.Errorf("GET: status %d: %.300s", x.status, x.body)
		}
		// REST keeps its limit, now the configured one.
		x = e.do(t, "POST", rest.BasePath+"/appointments", e.keys.APIKey, strings.NewReader(`{"x":"`+strings.Repeat("a", 5000)+`"}`), nil)
		if x.status != http.StatusRequestEntityTooLarge {
			t.Errorf("REST: status %d: %.300s", x.status, x.body)
		}
	})
}

// TestAddressLimits: requests without a key (anonymous GraphQL) and
// requests with a wrong key are limited per client address, before the
// key is looked up; an address that spent its budget of failures is
// refused even with a good key until the budget refills, and other limits
// are untouched.
func TestAddressLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// One a minute sustained: the test never sees a refill.
		e := newExposed(t, db, serverConfig{anonRate: 1.0 / 60, anonBurst: 3, failRate: 1.0 / 60, failBurst: 3})
		for i := range 3 {
			if x := e.do(t, "POST", "/graphql", "", gqlBody(`{ __schema { queryType { name } } }`), nil); x.status != http.StatusOK {
				t.Fatalf("anonymous request %d: %d %s", i, x.status, x.body)
			}
		}
		x := e.do(t, "POST", "/graphql", "", gqlBody(`{ __typename }`), nil)
		if x.status != http.StatusTooManyRequests || x.gqlCode(t) != rest.CodeRateLimited || x.header.Get("Retry-After") == "" {
			t.Fatalf("the 4th anonymous request: %d %v %s", x.status, x.header, x.body)
		}
		// A key is charged to itself, not to the address.
		if x := e.do(t, "POST", "/graphql", e.keys.AdminAPIKey, gqlBody(`{ apiKeys { id } }`), nil); x.status != http.StatusOK {
			t.Fatalf("with a key: %d %s", x.status, x.body)
		}

		wrong := "bk_" + strings.Repeat("a", 52)
		for i, c := range []struct{ method, path string }{
			{"GET", rest.BasePath + "/units"}, {"POST", "/graphql"}, {"GET", rest.BasePath + "/context"},
		} {
			var body io.Reader
			if c.method == "POST" {
				body = gqlBody(`{ __typename }`)
			}
			if x := e.do(t, c.method, c.path, wrong, body, nil); x.status != http.StatusUnauthorized {
				t.Fatalf("wrong key %d: %d %s", i, x.status, x.body)
			}
		}
		for _, key := range []string{wrong, e.keys.APIKey} {
			x := e.do(t, "GET", rest.BasePath+"/units", key, nil, nil)
			var p rest.Problem
			_ = json.Unmarshal(x.body, &p)
			if x.status != http.StatusTooManyRequests || p.Code != rest.CodeRateLimited || x.header.Get("Retry-After") == "" {
				t.Fatalf("after 3 failures: %d %v %s", x.status, x.header, x.body)
			}
		}
		if x := e.do(t, "POST", "/graphql", wrong, gqlBody(`{ __typename }`), nil); x.status != http.StatusTooManyRequests || x.gqlCode(t) != rest.CodeRateLimited {
			t.Fatalf("GraphQL after 3 failures: %d %s", x.status, x.body)
		}
	})
}

// TestTrustedProxies: behind a trusted proxy the client address is read
// from X-Forwarded-For, so two clients behind one balancer have budgets of
// their own; from an untrusted peer the header is ignored.
func TestTrustedProxies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, trusted := range []bool{true, false} {
			c := serverConfig{failRate: 1.0 / 60, failBurst: 1}
			if trusted {
				c.trustedProxies = "127.0.0.1/32, ::1"
			}
			e := newExposed(t, db, c)
			wrong := "bk_" + strings.Repeat("b", 52)
			units := rest.BasePath + "/units"
			from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr + ", 127.0.0.1"} }
			if x := e.do(t, "GET", units, wrong, nil, from("203.0.113.7")); x.status != http.StatusUnauthorized {
				t.Fatalf("first failure: %d", x.status)
			}
			x := e.do(t, "GET", units, e.keys.APIKey, nil, from("198.51.100.9"))
			if want := map[bool]int{true: http.StatusOK, false: http.StatusTooManyRequests}[trusted]; x.status != want {
				t.Fatalf("trusted %v: another client behind the proxy got %d, want %d: %s", trusted, x.status, want, x.body)
			}
		}
	})
}

// TestAPIHeaders: every API answer says no-store and nosniff (they carry
// personal data), and a 405 names the methods allowed.
func TestAPIHeaders(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newExposed(t, db, serverConfig{})
		for _, c := range []struct {
			method, path, key string
			body              io.Reader
			status            int
			allow             string
		}{
			{"GET", rest.BasePath + "/units", e.keys.APIKey, nil, 200, ""},
			{"GET", rest.BasePath + "/units", "", nil, 401, ""},
			{"GET", rest.BasePath + "/appointments/apt_nope", e.keys.APIKey, nil, 404, ""},
			{"POST", "/graphql", e.keys.AdminAPIKey, gqlBody(`{ apiKeys { id name } }`), 200, ""},
			{"GET", "/healthz", "", nil, 200, ""},
			{"DELETE", rest.BasePath + "/appointments", e.keys.APIKey, nil, 405, "GET, HEAD, POST"},
			{"PUT", rest.BasePath + "/units", e.keys.APIKey, nil, 405, "GET, HEAD"},
			{"POST", rest.BasePath + "/appointments/apt_1", e.keys.APIKey, nil, 405, "GET, HEAD"},
			{"PUT", "/graphql", "", nil, 405, "GET, HEAD, POST"},
		} {
			name := c.method + " " + c.path
			x := e.do(t, c.method, c.path, c.key, c.body, nil)
			if x.status != c.status {
				t.Errorf("%s: status %d, want %d: %s", name, x.status, c.status, x.body)
			}
			if got := x.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("%s: Cache-Control %q", name, got)
			}
			if got := x.header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s: X-Content-Type-Options %q", name, got)
			}
			if got := x.header.Get("Allow"); got != c.allow {
				t.Errorf("%s: Allow %q, want %q", name, got, c.allow)
			}
		}
	})
}

// TestMetricsAddr: with --metrics-addr, /metrics is served there and no
// longer on the API listener.
func TestMetricsAddr(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
	s := startServer(t, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--jobs-interval", "0",
		"--metrics-addr", metricsAddr, "--database-url", "sqlite:barberd.db")
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + metricsAddr + "/metrics"); code != 200 || !strings.Contains(body, "barberd_http_requests_total") && !strings.Contains(body, "go_goroutines") {
		t.Fatalf("metrics listener: %d %.200s", code, body)
	}
	if code, _ := get(s.URL + "/metrics"); code != http.StatusNotFound {
		t.Fatalf("/metrics on the API listener: %d, want 404", code)
	}
	if code, _ := get(s.URL + "/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
}

// TestRequestsStopWhenNobodyWaits: a request stuck behind a lock stops its
// database work once its deadline (the write timeout) passes, and once its
// client goes away, instead of waiting for the lock for as long as another
// transaction holds it.
func TestRequestsStopWhenNobodyWaits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		logs := &syncBuffer{}
		res := graph.New(graph.Settings{DB: db, Log: slog.New(slog.NewJSONHandler(logs, nil))})
		keys, err := demo.Seed(context.Background(), res)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(routes(res, db, serverConfig{writeTimeout: time.Second}, rest.NewMetrics(db.SQL), nil))
		t.Cleanup(srv.Close)
		ids := lisbonOf(keys)
		day := nextWeekday(time.Tuesday)

		// Another transaction holds João's lock (SQLite: the write lock).
		tx, err := db.SQL.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if db.Dialect == dialect.Postgres {
			if _, err := tx.Exec(`SELECT id FROM barbers WHERE id = $1 FOR UPDATE`, ids.joao); err != nil {
				t.Fatal(err)
			}
		}
		held := time.Now()
		t.Cleanup(func() { _ = tx.Rollback() })

		create := func(ctx context.Context, at, reqID string) (*http.Response, error) {
			b, _ := json.Marshal(ids.bookingAt(day+"T"+at, "+351912000111", ""))
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+rest.BasePath+"/appointments", bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Service-Api-Key", keys.APIKey)
			req.Header.Set("X-Request-Id", reqID)
			return http.DefaultClient.Do(req)
		}
		// The deadline: the server gives up after its write timeout.
		resp, err := create(context.Background(), "10:00:00", "stuck-deadline")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(held); took > 5*time.Second || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("past its deadline: status %d after %v; want 503 soon after 1 s", resp.StatusCode, took)
		}
		// The client going away: the server's work ends with it.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		gone := time.Now()
		if _, err := create(ctx, "11:00:00", "stuck-gone"); err == nil {
			t.Fatal("the request answered while the lock was held")
		}
		for !strings.Contains(logs.String(), `"request_id":"stuck-gone"`) || !strings.Contains(logs.String(), `"msg":"request"`) {
			if time.Since(gone) > 5*time.Second {
				t.Fatalf("the server still works on a request whose client left 5 s ago\n%s", logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		// Nothing of the two was written.
		if x := call(t, "GET", srv.URL+rest.BasePath+"/availability?unit_id="+ids.unit+"&service_id="+ids.haircut+"&barber_id="+ids.joao+"&date="+day, keys.APIKey, nil, 200); !bytes.Contains(x.Body, []byte(day+`T10:00:00"`)) || !bytes.Contains(x.Body, []byte(day+`T11:00:00"`)) {
			t.Fatalf("a stopped create booked its slot: %s", x.Body)
		}
	})
}
