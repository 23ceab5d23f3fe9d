package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/go-chi/chi/v5"

	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
	"barberd/rest/apitest"
)

// openDB opens a test database directly, to check what the server wrote.
func openDB(t testing.TB, dbURL string) *store.DB {
	t.Helper()
	db, err := store.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDatabaseOutage cuts a running server off its PostgreSQL: every API call
// answers 503 unavailable with Retry-After, promptly, /readyz says so, and
// once the database is back the same process serves again, having written
// nothing half-way.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, dialect.Postgres)
	keys := seedDemo(t, dbURL)
	proxy := storetest.StartProxy(t, storetest.ProxyTarget(t, dbURL))
	s := startServer(t, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--jobs-interval", "200ms",
		"--database-url", proxy.URL(dbURL))
	api := s.URL + "/api/integrations/v1"
	ids := lisbonIDs(t, s.URL, keys.APIKey)
	day := nextWeekday(time.Thursday)
	before := call(t, "POST", api+"/appointments", keys.APIKey, ids.bookingAt(day+"T10:00:00", "+351912100001", "before-outage"), 201).JSON(t)
	call(t, "GET", s.URL+"/readyz", "", nil, 200)

	client := &http.Client{Timeout: 20 * time.Second}
	type probe struct {
		method, path, key string
		body              any
	}
	probes := []probe{
		{"GET", "/context", keys.APIKey, nil},
		{"GET", "/units", keys.APIKey, nil},
		{"GET", "/services?unit_id=" + ids.unit, keys.APIKey, nil},
		{"GET", "/barbers?unit_id=" + ids.unit, keys.APIKey, nil},
		{"GET", fmt.Sprintf("/availability?unit_id=%s&service_id=%s&barber_id=%s&date=%s", ids.unit, ids.haircut, ids.joao, day), keys.APIKey, nil},
		{"GET", "/appointments/" + before["id"].(string), keys.APIKey, nil},
		{"POST", "/slots/hold", keys.APIKey, map[string]any{"unit_id": ids.unit, "service_id": ids.haircut, "barber_id": ids.joao, "starts_at": day + "T11:00:00"}},
		{"POST", "/appointments", keys.APIKey, ids.bookingAt(day+"T14:00:00", "+351912100002", "during-outage")},
		{"POST", "/appointments/" + before["id"].(string) + "/reschedule", keys.APIKey, map[string]any{"starts_at": day + "T15:00:00"}},
		{"GET", "/notifications/pending?peek=true", keys.APIKey, nil},
		{"GET", "/notifications/pending", keys.AdminAPIKey, nil},
		{"POST", "/appointments/" + before["id"].(string) + "/cancel", keys.APIKey, map[string]any{"reason": "outage"}},
	}

	proxy.Cut()
	cutAt := time.Now()
	// Twice: the first round meets the pool's dead connections, the second
	// finds none and must fail to connect.
	var slowest time.Duration
	for round := range 2 {
		for _, p := range probes {
			began := time.Now()
			r, err := apitest.Do(client, p.method, api+p.path, p.key, p.body)
			took := time.Since(began)
			slowest = max(slowest, took)
			if err != nil {
				t.Fatalf("round %d: %s %s during the outage: %v (after %v)", round, p.method, p.path, err, took)
			}
			if r.Status != 503 || r.Code() != "unavailable" || r.Header.Get("Retry-After") == "" ||
				r.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("round %d: %s %s during the outage: %d %q Retry-After %q: %s", round, p.method, p.path,
					r.Status, r.Header.Get("Content-Type"), r.Header.Get("Retry-After"), r.Body)
			}
			if took > 3*time.Second {
				t.Errorf("round %d: %s %s took %v during the outage", round, p.method, p.path, took)
			}
		}
		r, err := apitest.Do(client, "GET", s.URL+"/readyz", "", nil)
		if err != nil || r.Status != 503 || r.Header.Get("Retry-After") == "" {
			t.Errorf("/readyz during the outage: %v %+v", err, r)
		}
		r, err = apitest.Do(client, "GET", s.URL+"/healthz", "", nil)
		if err != nil || r.Status != 200 {
			t.Errorf("/healthz (liveness) during the outage: %v %+v", err, r)
		}
		r, err = apitest.Do(client, "POST", s.URL+"/graphql", keys.APIKey, map[string]any{"query": "{ bookableUnits { id } }"})
		if err != nil || !strings.Contains(string(r.Body), `"unavailable"`) {
			t.Errorf("/graphql during the outage: %v %+v", err, r)
		} else if r.Status != 503 {
			t.Logf("/graphql during the outage: %d %s", r.Status, r.Body)
		}
	}
	t.Logf("outage of %v: %d REST calls x2 all 503 unavailable, slowest %v", time.Since(cutAt).Round(time.Millisecond), len(probes), slowest)
	if t.Failed() {
		t.FailNow()
	}
	if s.code != 0 || func() bool {
		select {
		case <-s.done:
			return true
		default:
			return false
		}
	}() {
		t.Fatalf("server exited during the outage\nstderr: %s", s.stderr)
	}

	proxy.Restore()
	restored := time.Now()
	var recovery time.Duration
	for attempt := 1; ; attempt++ {
		r, err := apitest.Do(client, "GET", api+"/units", keys.APIKey, nil)
		if err == nil && r.Status == 200 {
			recovery = time.Since(restored)
			t.Logf("recovery: first 200 on attempt %d", attempt)
			break
		}
		if attempt < 3 {
			t.Logf("after restore, attempt %d at %v: %v %d %s", attempt, time.Since(restored), err, r.Status, r.Body)
		}
		if err != nil || r.Status != 503 {
			t.Fatalf("after restore: %v %+v", err, r)
		}
		if time.Since(restored) > 15*time.Second {
			t.Fatalf("no 200 within 15 s of the database coming back: %d %s", r.Status, r.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("recovery: first 200 %v after the database came back (same process, no restart)", recovery)
	call(t, "GET", s.URL+"/readyz", "", nil, 200)

	// A host gone silent (connections dropped, new ones never answered)
	// must not hang requests either: connecting gives up after a few
	// seconds.
	proxy.Silence()
	silentAt := time.Now()
	var silent sync.WaitGroup
	for _, p := range append(probes[:2:2], probe{"POST", "/appointments", keys.APIKey, ids.bookingAt(day+"T16:00:00", "+351912100003", "silent-outage")}) {
		silent.Go(func() {
			began := time.Now()
			r, err := apitest.Do(client, p.method, api+p.path, p.key, p.body)
			took := time.Since(began)
			if err != nil || r.Status != 503 || r.Code() != "unavailable" || r.Header.Get("Retry-After") == "" || took > 6*time.Second {
				t.Errorf("%s %s with the database silent: %v %s after %v", p.method, p.path, err, replyText(r), took)
			}
		})
	}
	silent.Go(func() {
		began := time.Now()
		r, err := apitest.Do(client, "GET", s.URL+"/readyz", "", nil)
		if took := time.Since(began); err != nil || r.Status != 503 || took > 6*time.Second {
			t.Errorf("/readyz with the database silent: %v %s after %v", err, replyText(r), took)
		}
	})
	silent.Wait()
	t.Logf("database silent: every call answered 503 unavailable within %v", time.Since(silentAt).Round(time.Millisecond))
	proxy.Speak()
	spoke := time.Now()
	for {
		r, err := apitest.Do(client, "GET", api+"/units", keys.APIKey, nil)
		if err == nil && r.Status == 200 {
			break
		}
		if time.Since(spoke) > 15*time.Second {
			t.Fatalf("no 200 within 15 s of the silent database answering again: %v %s", err, replyText(r))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("recovery from silence: first 200 %v after the database answered again", time.Since(spoke).Round(time.Millisecond))

	// Nothing the outage refused was written: the create is new, the
	// appointment unmoved and uncancelled, no hold was made.
	got := call(t, "GET", api+"/appointments/"+before["id"].(string), keys.APIKey, nil, 200).JSON(t)
	if got["status"] != "confirmed" || got["starts_at"] != day+"T10:00:00" {
		t.Errorf("appointment after the outage: %v", got)
	}
	r := call(t, "POST", api+"/appointments", keys.APIKey, ids.bookingAt(day+"T14:00:00", "+351912100002", "during-outage"), 201)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the create refused during the outage was replayed: it was written")
	}
	db := openDB(t, dbURL)
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM appointments WHERE external_reference = ?", "during-outage"); n != 1 {
		t.Errorf("%d appointments for the outage's reference, want 1", n)
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM appointments WHERE external_reference = ?", "silent-outage"); n != 0 {
		t.Errorf("%d appointments for the create refused while the database was silent", n)
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM holds"); n != 0 {
		t.Errorf("%d holds after a hold refused during the outage", n)
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM notifications"); n != 2 {
		t.Errorf("%d notifications, want 2 (two creates)", n)
	}
	checkInvariants(t, db)
	if code, _ := s.stop(); code != 0 {
		t.Fatalf("serve exited %d after the outage\nstderr: %s", code, s.stderr)
	}
	if strings.Contains(s.stderr.String(), `"level":"ERROR","msg":"panic"`) {
		t.Errorf("a handler panicked during the outage: %s", s.stderr)
	}
}

// TestPanicRecovered puts a panicking route behind the server's middleware:
// the client gets a 500 problem+json with the request id, the log the panic
// and its stack.
func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	r := chi.NewRouter()
	r.Use(rest.Middleware(slog.New(slog.NewJSONHandler(&logs, nil)), 30*time.Second))
	r.Get("/boom", func(http.ResponseWriter, *http.Request) { panic("kaboom in a handler") })
	r.Get("/fine", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, incoming := range []string{"", "trace-123"} {
		req, _ := http.NewRequest("GET", srv.URL+"/boom", nil)
		if incoming != "" {
			req.Header.Set("X-Request-Id", incoming)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var p rest.Problem
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/problem+json" ||
			p.Code != "internal_error" || p.Status != 500 || id == "" || p.RequestID != id ||
			(incoming != "" && id != incoming) {
			t.Errorf("panic answered %d %q, X-Request-Id %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), id, body)
		}
		if strings.Contains(string(body), "kaboom") || strings.Contains(string(body), "goroutine") {
			t.Errorf("the panic leaked to the client: %s", body)
		}
		var found bool
		for line := range strings.SplitSeq(logs.String(), "\n") {
			var e struct {
				Msg, Level, Panic, Stack string
				RequestID                string `json:"request_id"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "panic" && e.RequestID == id {
				found = true
				if e.Level != "ERROR" || !strings.Contains(e.Panic, "kaboom in a handler") ||
					!strings.Contains(e.Stack, "goroutine") || !strings.Contains(e.Stack, "faults_test.go") {
					t.Errorf("panic log line lacks the panic or its stack: %s", line)
				}
			}
		}
		if !found {
			t.Errorf("no panic log line with request id %s:\n%s", id, logs.String())
		}
	}
	// The server goes on serving.
	resp, err := http.Get(srv.URL + "/fine")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panic: %v %v", err, resp)
	}
	resp.Body.Close()
}

// TestSIGTERMDrains stops a server with SIGTERM in the middle of a burst of
// creates: every request the server took in is answered in full, the
// process exits 0, and every 201 is in the database. With keep-alive
// connections, a request sent on a connection the server had open is one
// it took in: it must be answered (with Connection: close), never cut.
func TestSIGTERMDrains(t *testing.T) {
	t.Parallel()
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "connection per request", true: "keep-alive"}[keepAlive], func(t *testing.T) {
			t.Parallel()
			testSIGTERMDrains(t, keepAlive)
		})
	}
}

func testSIGTERMDrains(t *testing.T, keepAlive bool) {
	dbURL := storetest.URL(t, dialect.Postgres)
	keys := seedDemo(t, dbURL)
	s := startServer(t, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--database-url", dbURL)
	api := s.URL + "/api/integrations/v1"
	ids := lisbonIDs(t, s.URL, keys.APIKey)
	slots := distinctSlots(t, 2000)

	// A connection per request: a refused dial is then a request the server
	// never took, anything else short of a full response is a broken one.
	tr := &http.Transport{DisableKeepAlives: !keepAlive, MaxIdleConnsPerHost: 64}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	type outcome struct {
		ref, reqID      string
		status          int
		id              string
		err             error
		reused          bool // sent on a connection the server had accepted before
		began, finished time.Time
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		next     atomic.Int64
		termAt   atomic.Int64 // unix nanos of the SIGTERM
		wg       sync.WaitGroup
	)
	const workers = 32
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(slots) {
					return
				}
				o := outcome{ref: fmt.Sprintf("drain-%d", i), reqID: fmt.Sprintf("drain-req-%d", i), began: time.Now()}
				body := ids.bookingAt(slots[i], fmt.Sprintf("+3519130%05d", i), o.ref)
				body["barber_id"] = ids.joao
				var reused atomic.Bool
				trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused.Store(ci.Reused) }}
				r, err := sendWithID(client, "POST", api+"/appointments", keys.APIKey, o.reqID, body, trace)
				o.reused = reused.Load()
				o.finished, o.err = time.Now(), err
				if err == nil {
					o.status = r.Status
					if r.Status == 201 {
						var a struct{ ID string }
						if json.Unmarshal(r.Body, &a) != nil || a.ID == "" {
							o.err = fmt.Errorf("201 with an incomplete body: %q", r.Body)
						}
						o.id = a.ID
					}
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if err != nil && termAt.Load() != 0 {
					return // the server is gone
				}
				_ = w
			}
		})
	}
	// Let the burst get going, then stop the server under it.
	for {
		mu.Lock()
		n := len(outcomes)
		mu.Unlock()
		if n >= 60 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	termAt.Store(time.Now().UnixNano())
	code, took := s.stop()
	wg.Wait()
	term := time.Unix(0, termAt.Load())

	// What the server says it handled, by request id.
	handled := map[string]int{}
	for line := range strings.SplitSeq(s.stderr.String(), "\n") {
		var e struct {
			Msg       string
			Status    int
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" && strings.HasPrefix(e.RequestID, "drain-req-") {
			handled[e.RequestID] = e.Status
		}
	}
	var answered, created, inFlight, refused int
	var createdIDs []string
	for _, o := range outcomes {
		st, logged := handled[o.reqID]
		switch {
		case o.err == nil:
			answered++
			if logged && st != o.status {
				t.Errorf("%s: server logged %d, client got %d", o.ref, st, o.status)
			}
			if o.began.Before(term) && o.finished.After(term) {
				inFlight++
			}
			if o.status >= 500 {
				t.Errorf("%s: %d", o.ref, o.status)
			}
			if o.status == 201 {
				created++
				createdIDs = append(createdIDs, o.id)
			}
		case isRefused(o.err):
			refused++
			if logged {
				t.Errorf("%s: refused at dial yet logged by the server", o.ref)
			}
		case logged:
			t.Errorf("%s: the server handled it (status %d) but the client got %v", o.ref, st, o.err)
		case o.reused:
			t.Errorf("%s: sent on a kept-alive connection, yet cut: %v", o.ref, o.err)
		default:
			// Reset before the server accepted it (still in the listen
			// backlog when the listener closed): never taken in.
			refused++
		}
	}
	t.Logf("SIGTERM: exit %d in %v; %d requests answered in full (%d of them in flight at the SIGTERM), %d created; %d never taken in (refused once the listener closed)",
		code, took.Round(time.Millisecond), answered, inFlight, created, refused)
	if code != 0 || !strings.Contains(s.stderr.String(), `"msg":"stopped"`) {
		t.Fatalf("exit %d after SIGTERM\nstderr: %.3000s", code, s.stderr)
	}
	if inFlight == 0 {
		t.Log("no request was in flight at the SIGTERM (timing); the drain was not exercised this run")
	}
	db := openDB(t, dbURL)
	for _, id := range createdIDs {
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM appointments WHERE id = ? AND status = 'confirmed'", id); n != 1 {
			t.Errorf("appointment %s answered 201 is not in the database", id)
		}
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM appointments"); n != created {
		t.Errorf("%d appointments in the database, %d answered 201", n, created)
	}
	checkInvariants(t, db)
}

// TestSIGTERMKeepsIdleConnections: a connection kept alive and idle when
// the SIGTERM comes may still bring its next request during the drain
// delay, and gets a whole answer that closes it, while new connections are
// refused. Without the delay the server would close the idle connection at
// once, and a client sending on it at that moment would get a reset.
func TestSIGTERMKeepsIdleConnections(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--jobs-interval", "0",
				"--drain-delay", "5s", "--database-url", storetest.URL(t, d))
			host := strings.TrimPrefix(s.URL, "http://")
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			get := func() (*http.Response, error) {
				if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: barberd\r\n\r\n"); err != nil {
					return nil, err
				}
				resp, err := http.ReadResponse(br, nil)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				return resp, err
			}
			if resp, err := get(); err != nil || resp.StatusCode != 200 || resp.Close {
				t.Fatalf("before the SIGTERM: %v %v", resp, err)
			}
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			// Until the listener is closed, a dial may still succeed.
			deadline := time.Now().Add(10 * time.Second)
			for {
				c, err := net.Dial("tcp", host)
				if err != nil {
					break
				}
				c.Close()
				if time.Now().After(deadline) {
					t.Fatal("new connections are still accepted 10 s after the SIGTERM")
				}
				time.Sleep(10 * time.Millisecond)
			}
			resp, err := get()
			if err != nil {
				t.Fatalf("a request on the connection kept alive during the drain: %v", err)
			}
			if resp.StatusCode != 200 || !resp.Close {
				t.Fatalf("during the drain: status %d, Connection: close %v; want 200 closing the connection", resp.StatusCode, resp.Close)
			}
			// The server is now free to stop before the delay is out.
			select {
			case <-s.done:
			case <-time.After(4 * time.Second):
				t.Fatal("the server did not stop once its last connection closed")
			}
			if s.code != 0 {
				t.Fatalf("exit %d\n%s", s.code, s.stderr)
			}
		})
	}
}

// sendWithID is send with an X-Request-Id (and, when given, a trace).
func sendWithID(client *http.Client, method, url, key, reqID string, body any, trace ...*httptrace.ClientTrace) (*reply, error) {
	var tr *httptrace.ClientTrace
	if len(trace) > 0 {
		tr = trace[0]
	}
	return apitest.Do(&http.Client{Transport: headerTransport{client.Transport, "X-Request-Id", reqID, tr}, Timeout: client.Timeout}, method, url, key, body)
}

type headerTransport struct {
	rt          http.RoundTripper
	name, value string
	trace       *httptrace.ClientTrace
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if h.trace != nil {
		ctx = httptrace.WithClientTrace(ctx, h.trace)
	}
	r = r.Clone(ctx)
	r.Header.Set(h.name, h.value)
	rt := h.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	return rt.RoundTrip(r)
}

// isRefused says whether err is a refused connection.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
