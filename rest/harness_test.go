package rest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/demo"
	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
	"barberd/rest/apitest"
	"barberd/rest/openapitest"
)

// testNow is the clock of every test: Monday 2027-03-01 06:00 UTC, i.e.
// 03:00 in São Paulo and 06:00 in Lisbon, so the demo shops open in hours.
var testNow = time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC)

// Demo unit, service and barber names (see package demo).
const (
	lisbon       = "Barbearia Chiado"
	saoPaulo     = "Barbearia Paulista"
	haircut      = "Haircut"           // 30 min, every Lisbon barber
	beardTrim    = "Beard trim"        // 45 min
	cutAndBeard  = "Haircut and beard" // 60 min, not Miguel
	hotTowel     = "Hot towel shave"   // inactive
	wedding      = "Wedding package"   // not bookable online
	joao         = "João Silva"
	miguel       = "Miguel Costa"
	pedro        = "Pedro Santos" // inactive
	corte        = "Corte de cabelo"
	rafael       = "Rafael Souza"
	tuesday      = "2027-03-02"
	tuesdayAt10  = "2027-03-02T10:00:00"
	tuesdayAt11  = "2027-03-02T11:00:00"
	validPhone   = "+351912345678"
	otherPhone   = "+5511987654321"
	clientName   = "Ana Costa"
	problemMedia = "application/problem+json"
)

// clock is a test clock that can be moved forward.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time { return testNow.Add(time.Duration(c.offset.Load())) }

// advance moves the clock forward by d.
func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// env is one test's barberd: a fresh database with the demo account, a
// server in front of it, and its keys.
type env struct {
	t     testing.TB
	db    *store.DB
	res   *graph.Resolver
	srv   *httptest.Server
	clock *clock
	keys  *demo.Keys
	ctx   context.Context // acting for the demo account, for direct reads
}

var (
	validatorOnce sync.Once
	validator     *openapitest.Validator
)

func openAPI(t testing.TB) *openapitest.Validator {
	validatorOnce.Do(func() {
		v, err := openapitest.New(rest.OpenAPI)
		if err != nil {
			t.Fatalf("openapi.json: %v", err)
		}
		validator = v
	})
	if validator == nil {
		t.Fatal("openapi.json did not load")
	}
	return validator
}

// each runs fn against SQLite and PostgreSQL, each with a fresh env.
func each(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, db *store.DB) { fn(t, newEnv(t, db)) })
}

func newEnv(t testing.TB, db *store.DB) *env {
	t.Helper()
	return newEnvWindow(t, db, graph.DefaultFreshnessWindow)
}

// newEnvWindow is newEnv with the given freshness window.
func newEnvWindow(t testing.TB, db *store.DB, window time.Duration) *env {
	t.Helper()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if os.Getenv("BARBERD_TEST_LOG") != "" {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	c := &clock{}
	res := graph.New(graph.Settings{DB: db, Log: log, Now: c.now, FreshnessWindow: window})
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	return &env{
		t: t, db: db, res: res, srv: v1Server(t, res), clock: c, keys: keys,
		ctx: tenant.WithAccount(context.Background(), keys.AccountID),
	}
}

// v1Server serves the v1 handler over res, as a replica would.
func v1Server(t testing.TB, res *graph.Resolver) *httptest.Server {
	r := chi.NewRouter()
	r.Use(rest.Middleware(res.Settings().Log, 30*time.Second)) // as the server has it: every test runs under a deadline
	r.Mount(rest.BasePath, rest.New(res))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

// reconfigure replaces e's resolver with one made of its config as change
// leaves it, and e's server with one over the new resolver.
func (e *env) reconfigure(change func(*graph.Settings)) {
	e.t.Helper()
	c := e.res.Settings()
	change(&c)
	e.res = graph.New(c)
	e.srv = v1Server(e.t, e.res)
}

// response is one checked exchange.
type response = apitest.Answer

// do sends a request with the given key (none when "") and JSON body (none
// when nil; a string or []byte is sent as is), and checks the exchange
// against the OpenAPI document.
func (e *env) do(method, path, key string, body any) *response {
	e.t.Helper()
	return doRequest(e.t, e.srv.URL, method, path, key, body, nil)
}

func doRequest(t testing.TB, base, method, path, key string, body any, header http.Header) *response {
	t.Helper()
	req := newRequest(t, base, method, path, key, body, header)
	r := send(t, http.DefaultClient, req)
	if err := openAPI(t).Check(req, r.Status, r.Header, r.Body); err != nil {
		t.Errorf("response does not match openapi.json: %v\nbody: %s", err, r.Body)
	}
	return r
}

// newRequest builds a request to the v1 interface with the given key (none
// when "") and JSON body (none when nil; a string or []byte is sent as is).
func newRequest(t testing.TB, base, method, path, key string, body any, header http.Header) *http.Request {
	t.Helper()
	req, err := apitest.NewRequest(method, base+rest.BasePath+path, key, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return req
}

// send performs a request and reads the whole response.
func send(t testing.TB, c *http.Client, req *http.Request) *response {
	t.Helper()
	r, err := apitest.Send(c, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// expect fails the test unless the response has the given status (and, for
// errors, problem code).
func expect(t testing.TB, r *response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.Code(); got != code {
			t.Fatalf("code %q, want %q: %s", got, code, r.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != problemMedia {
			t.Fatalf("Content-Type %q, want %s", ct, problemMedia)
		}
	}
}

// unit, service and barber return the id of the demo unit, service or
// barber with the given name.
func (e *env) unit(name string) string    { return e.demoID(name) }
func (e *env) service(name string) string { return e.demoID(name) }
func (e *env) barber(name string) string  { return e.demoID(name) }

func (e *env) demoID(name string) string {
	e.t.Helper()
	id, ok := e.keys.IDs[name]
	if !ok {
		e.t.Fatalf("the demo has no %q", name)
	}
	return id
}

// key makes another key of the demo account with the given scopes.
func (e *env) key(scopes ...string) string {
	e.t.Helper()
	secret, _, err := e.res.CreateAPIKey(context.Background(), e.keys.AccountID, "test key", scopes)
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

// otherAccount seeds a second, separate demo account and returns its keys.
func (e *env) otherAccount() *demo.Keys {
	e.t.Helper()
	keys, err := demo.Seed(context.Background(), e.res)
	if err != nil {
		e.t.Fatal(err)
	}
	return keys
}

// booking is a create request body for the Lisbon demo unit.
func (e *env) booking(service, startsAt string) map[string]any {
	return map[string]any{
		"unit_id":    e.unit(lisbon),
		"service_id": e.service(service),
		"starts_at":  startsAt,
		"client":     map[string]any{"name": clientName, "phone": validPhone},
	}
}

// appointment reads an appointment row directly.
func (e *env) appointment(id string) *ent.Appointment {
	e.t.Helper()
	a, err := e.db.Appointment.Get(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}
