package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// TestDeadConnections loses the server's PostgreSQL connections, through a
// proxy, the ways a restart or failover loses them, and no answer is a 500.
func TestDeadConnections(t *testing.T) {
	// The losses: every open connection dropped at once, PostgreSQL
	// terminating its backends, and connections dropped (closed, or reset)
	// in the middle of a statement. After a drop between requests every read and create
	// succeeds (a dead pooled connection is replaced before anything is sent
	// on it). A request whose statement was on the wire when its connection
	// died answers 503 unavailable with Retry-After, or succeeds; a create
	// retried with its external_reference then exists exactly once.
	t.Parallel()
	const rounds = 35 // each kind 7 times
	dbURL := storetest.URL(t, dialect.Postgres)
	proxy := storetest.StartProxy(t, storetest.ProxyTarget(t, dbURL))
	db := storetest.OpenURL(t, proxy.URL(dbURL))
	ctx := context.Background()
	var logs syncBuffer
	res := graph.New(graph.Settings{DB: db, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	t.Cleanup(func() {
		if t.Failed() {
			for line := range strings.SplitSeq(logs.String(), "\n") {
				if !strings.Contains(line, `"level":"INFO"`) {
					t.Log(line)
				}
			}
		}
	})
	keys, err := demo.Seed(ctx, res)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newRouter(res, db))
	t.Cleanup(srv.Close)
	api := srv.URL + "/api/integrations/v1"
	ids := lisbonOf(keys)
	slots := distinctSlots(t, rounds+1)
	first := call(t, "POST", api+"/appointments", keys.APIKey, ids.bookingAt(slots[rounds], "+351912200000", "dc-first"), 201).JSON(t)
	day := slots[0][:10]

	direct, err := sql.Open("postgres", storetest.LibPQURL(t, dbURL)) // around the proxy, to terminate the server's backends
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })

	type probe struct{ method, url string }
	reads := []probe{
		{"GET", api + "/context"},
		{"GET", api + "/units"},
		{"GET", fmt.Sprintf("%s/availability?unit_id=%s&service_id=%s&barber_id=%s&date=%s", api, ids.unit, ids.haircut, ids.joao, day)},
		{"GET", api + "/appointments/" + first["id"].(string)},
		{"POST", srv.URL + "/graphql"},
		{"GET", srv.URL + "/readyz"},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	// read answers one probe. GraphQL reports a failed database in errors
	// (with status 200, or 503 when authentication could not read the key):
	// such an answer counts as 503 when its code is unavailable, else as 500.
	read := func(p probe) (*reply, error) {
		if p.url != srv.URL+"/graphql" {
			return apitest.Do(client, p.method, p.url, keys.APIKey, nil)
		}
		r, err := apitest.Do(client, "POST", p.url, keys.APIKey, map[string]any{"query": "{ bookableUnits { id name } }"})
		if err == nil && strings.Contains(string(r.Body), `"errors"`) {
			r.Status = 500
			if strings.Contains(string(r.Body), `"code":"unavailable"`) {
				r.Status = 503
				r.Header.Set("Retry-After", "graphql")
			}
		}
		return r, err
	}
	// ok checks an answer given while connections may be dying: a success,
	// or 503 unavailable with Retry-After; never anything else.
	var mu sync.Mutex
	tally := map[string]int{}
	ok := func(what string, r *reply, err error, success int) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			t.Errorf("%s: %v", what, err)
		case r.Status == success || r.Status == 200:
			tally["ok"]++
		case r.Status == 503 && r.Header.Get("Retry-After") != "" && (r.Code() == "unavailable" || r.Header.Get("Retry-After") == "graphql" || strings.HasSuffix(what, "/readyz")):
			tally["503"]++
		default:
			t.Errorf("%s: %s", what, replyText(r))
		}
	}
	// must checks an answer that has to succeed.
	must := func(what string, r *reply, err error, success int) {
		if err != nil || r.Status != success {
			t.Errorf("%s: %v %s", what, err, replyText(r))
		}
	}
	// warm fills the pool with several connections: all reads at once.
	warm := func(round int) {
		var wg sync.WaitGroup
		for _, p := range reads {
			wg.Go(func() {
				r, err := read(p)
				must(fmt.Sprintf("round %d, before the drop: %s %s", round, p.method, p.url), r, err, 200)
			})
		}
		wg.Wait()
	}
	booking := func(round int) map[string]any {
		return ids.bookingAt(slots[round], fmt.Sprintf("+3519122%05d", round), fmt.Sprintf("dc-%d", round))
	}

	began := time.Now()
	kinds := []string{"drop", "terminate", "mid-statement", "mid-connect", "mid-statement reset"}
	for round := range rounds {
		warm(round)
		kind := kinds[round%len(kinds)]
		switch kind {
		case "drop":
			proxy.Drop()
		case "terminate":
			// A connection the pool opens while the backends are listed
			// escapes the first pass; terminate until all that were open
			// have closed.
			open := proxy.Since()
			for pass, deadline := 0, time.Now().Add(10*time.Second); open() > 0; pass++ {
				var n int
				if err := direct.QueryRow(`SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity
					WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil || pass == 0 && n == 0 {
					t.Fatalf("round %d: terminate the server's backends: %d, %v", round, n, err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("round %d: %d connections still open 10 s after their backends were terminated", round, open())
				}
				time.Sleep(20 * time.Millisecond)
			}
		case "mid-statement", "mid-connect", "mid-statement reset":
			// Every probe and a create at once. The first bytes on the wire
			// lose their connection, and so does everything else open: a
			// statement's, or, with the pool's connections dropped before, a
			// new connection's startup.
			if kind == "mid-connect" {
				proxy.Drop()
			}
			arm := proxy.DropMidStatement
			if kind == "mid-statement reset" {
				arm = proxy.ResetMidStatement
			}
			fired := arm()
			var wg sync.WaitGroup
			for _, p := range reads {
				wg.Go(func() {
					r, err := read(p)
					ok(fmt.Sprintf("round %d, %s: %s %s", round, kind, p.method, p.url), r, err, 200)
				})
			}
			wg.Go(func() {
				r, err := apitest.Do(client, "POST", api+"/appointments", keys.APIKey, booking(round))
				ok(fmt.Sprintf("round %d, %s: create", round, kind), r, err, 201)
			})
			wg.Wait()
			select {
			case <-fired:
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: the proxy never dropped a statement", round)
			}
		}
		// Between requests the connections died: every read and the create
		// (or, after mid-statement, its retry) must succeed.
		for _, p := range reads {
			r, err := read(p)
			must(fmt.Sprintf("round %d, after %s: %s %s", round, kind, p.method, p.url), r, err, 200)
		}
		r, err := apitest.Do(client, "POST", api+"/appointments", keys.APIKey, booking(round))
		if strings.HasPrefix(kind, "mid-") && err == nil && r.Status == 200 && r.Header.Get("Idempotent-Replayed") == "true" {
			r.Status = 201 // the create before the drop was committed
		}
		must(fmt.Sprintf("round %d, after %s: create", round, kind), r, err, 201)
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d rounds (%s) in %v; answers while connections died: %d succeeded, %d 503 unavailable",
		rounds, strings.Join(kinds, ", "), time.Since(began).Round(time.Millisecond), tally["ok"], tally["503"])

	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, domain.CodeInternal) {
			t.Errorf("logged as internal: %s", line)
		}
	}
	check := openDB(t, dbURL)
	for round := range rounds {
		if n := storetest.Count(t, check, "SELECT COUNT(*) FROM appointments WHERE external_reference = ?", fmt.Sprintf("dc-%d", round)); n != 1 {
			t.Errorf("round %d: %d appointments for its reference, want 1", round, n)
		}
	}
	checkInvariants(t, check)
}

// A request whose client went away before the answer is no failure of the
// service: REST answers 499 request_canceled, GraphQL says request_canceled,
// and nothing is logged as an error. The request runs with its context
// already canceled, as the server's is once the client hangs up.
func TestCanceledRequest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var logs syncBuffer
		res := graph.New(graph.Settings{DB: db, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
		keys, err := demo.Seed(context.Background(), res)
		if err != nil {
			t.Fatal(err)
		}
		router := newRouter(res, db)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/integrations/v1/units", ""},
			{"GET", "/api/integrations/v1/appointments/apt_01JZZZZZZZZZZZZZZZZZZZZZZZ", ""},
			{"POST", "/api/integrations/v1/appointments", `{"unit_id":"unt_x","service_id":"svc_x","starts_at":"2031-01-07T10:00:00","client":{"name":"A","phone":"+351912345678"}}`},
			{"POST", "/graphql", `{"query":"{ bookableUnits { id } }"}`},
		} {
			req := httptest.NewRequestWithContext(gone, c.method, c.path, strings.NewReader(c.body))
			req.Header.Set("X-Service-Api-Key", keys.APIKey)
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			w := httptest.NewRecorder()
			router.ServeHTTP(w, req)
			body := w.Body.String()
			if c.path == "/graphql" {
				if !strings.Contains(body, `"code":"request_canceled"`) {
					t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, body)
				}
				continue
			}
			if w.Code != 499 || !strings.Contains(body, `"code":"request_canceled"`) {
				t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, body)
			}
		}
		for line := range strings.SplitSeq(logs.String(), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) {
				t.Errorf("logged as an error: %s", line)
			}
		}
	})
}
