package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// gqlEnv is a server with the full router over a fresh database holding
// the demo account.
type gqlEnv struct {
	srv  *httptest.Server
	keys *demo.Keys
	now  *atomic.Int64 // the server's clock in Unix nanoseconds; setNow moves it
}

func newGQLEnv(t *testing.T, db *store.DB, configure ...func(*graph.Settings)) *gqlEnv {
	t.Helper()
	now := new(atomic.Int64)
	now.Store(time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC).UnixNano()) // a Monday
	cfg := graph.Settings{DB: db, Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }, FreshnessWindow: graph.DefaultFreshnessWindow}
	for _, c := range configure {
		c(&cfg)
	}
	res := graph.New(cfg)
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newRouter(res, db))
	t.Cleanup(srv.Close)
	return &gqlEnv{srv: srv, keys: keys, now: now}
}

// setNow moves the server's clock.
func (e *gqlEnv) setNow(t time.Time) { e.now.Store(t.UnixNano()) }

type gqlResponse struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
	status int
}

func (e *gqlEnv) query(t *testing.T, key, query string, vars map[string]any) *gqlResponse {
	t.Helper()
	a, err := apitest.Do(nil, "POST", e.srv.URL+"/graphql", key, map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	var out gqlResponse
	a.Decode(t, &out)
	out.status = a.Status
	return &out
}

func (r *gqlResponse) code(t *testing.T) string {
	t.Helper()
	if len(r.Errors) == 0 {
		t.Fatalf("no errors in response: %+v", r.Data)
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

func (r *gqlResponse) ok(t *testing.T) map[string]any {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("graphql errors: %+v", r.Errors)
	}
	return r.Data
}

func TestGraphQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db)
		t.Run("introspection shows the domain types", func(t *testing.T) {
			data := e.query(t, "", `{ __schema { types { name } } }`, nil).ok(t)
			var names []string
			for _, ty := range data["__schema"].(map[string]any)["types"].([]any) {
				names = append(names, ty.(map[string]any)["name"].(string))
			}
			all := strings.Join(names, " ")
			for _, want := range []string{"Unit", "Service", "Barber", "Appointment", "Notification", "Hold", "Availability"} {
				if !strings.Contains(" "+all+" ", " "+want+" ") {
					t.Errorf("type %s missing from the schema", want)
				}
			}
		})
		t.Run("bookable catalog with a booking key", func(t *testing.T) {
			data := e.query(t, e.keys.APIKey, `{ bookableUnits { id name timezone } }`, nil).ok(t)
			if n := len(data["bookableUnits"].([]any)); n != 2 {
				t.Fatalf("%d units, want 2", n)
			}
		})
		t.Run("relay connections with an admin key", func(t *testing.T) {
			data := e.query(t, e.keys.AdminAPIKey, `{ barbers(first: 10, where: {active: true}) { totalCount edges { node { id name units { name } } } } }`, nil).ok(t)
			if n := data["barbers"].(map[string]any)["totalCount"].(float64); n != 4 {
				t.Fatalf("%v active barbers, want 4", n)
			}
		})
		t.Run("admin queries need the admin scope", func(t *testing.T) {
			if c := e.query(t, e.keys.APIKey, `{ units(first: 1) { totalCount } }`, nil).code(t); c != domain.CodeInsufficientScope {
				t.Fatalf("code %q", c)
			}
		})
		t.Run("missing key", func(t *testing.T) {
			if c := e.query(t, "", `{ bookableUnits { id } }`, nil).code(t); c != domain.CodeMissingAPIKey {
				t.Fatalf("code %q", c)
			}
		})
		t.Run("invalid key", func(t *testing.T) {
			r := e.query(t, "bk_nope", `{ bookableUnits { id } }`, nil)
			if r.status != http.StatusUnauthorized || r.code(t) != domain.CodeInvalidAPIKey {
				t.Fatalf("status %d code %q", r.status, r.code(t))
			}
		})
		t.Run("node of another account is null", func(t *testing.T) {
			other := e.query(t, e.keys.AdminAPIKey, `{ units(first: 1) { edges { node { id } } } }`, nil).ok(t)
			id := other["units"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["id"]
			e2 := newGQLEnv(t, db) // a second demo account on the same database
			data := e2.query(t, e2.keys.AdminAPIKey, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}).ok(t)
			if data["node"] != nil {
				t.Fatalf("node of another account: %v", data["node"])
			}
			acc := e2.query(t, e2.keys.AdminAPIKey, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": e.keys.AccountID}).ok(t)
			if acc["node"] != nil {
				t.Fatalf("another account's account node: %v", acc["node"])
			}
			mine := e.query(t, e.keys.AdminAPIKey, `query($id: ID!) { node(id: $id) { id ... on Unit { name } } }`, map[string]any{"id": id}).ok(t)
			if mine["node"] == nil {
				t.Fatal("own node not found")
			}
		})
		t.Run("booking through GraphQL, conflict code in extensions", func(t *testing.T) {
			unitID, serviceID := e.keys.IDs["Barbearia Chiado"], e.keys.IDs["Haircut"]
			const create = `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { replayed appointment { id status barber { name } clientPhone } } }`
			in := map[string]any{"unitId": unitID, "serviceId": serviceID, "startsAt": "2027-03-02T10:00:00",
				"client": map[string]any{"name": "Ana", "phone": "+351912345678"}}
			for i := 0; i < 2; i++ {
				e.query(t, e.keys.APIKey, create, map[string]any{"in": in}).ok(t)
			}
			r := e.query(t, e.keys.APIKey, create, map[string]any{"in": in})
			if c := r.code(t); c != domain.CodeSlotUnavailable {
				t.Fatalf("third create at a time with two barbers: code %q", c)
			}
			if alts, _ := r.Errors[0].Extensions["alternatives"].([]any); len(alts) == 0 {
				t.Fatal("slot_unavailable without alternatives")
			}
			in["client"].(map[string]any)["phone"] = "12"
			if c := e.query(t, e.keys.APIKey, create, map[string]any{"in": in}).code(t); c != domain.CodeValidationFailed {
				t.Fatalf("bad phone: code %q", c)
			}
		})
		t.Run("playground page", func(t *testing.T) {
			resp, err := http.Get(e.srv.URL + "/playground")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("playground: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		})
	})
}

func TestGraphQLBadArgument(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db)
		r := e.query(t, e.keys.AdminAPIKey, `{ units(first: 1, after: "not-a-cursor") { totalCount } }`, nil)
		if c := r.code(t); c != domain.CodeValidationFailed {
			t.Fatalf("malformed cursor: code %q, want %s: %+v", c, domain.CodeValidationFailed, r.Errors)
		}
		r = e.query(t, e.keys.AdminAPIKey, `{ units(first: -1) { totalCount } }`, nil)
		if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] == domain.CodeInternal {
			t.Fatalf("negative first: %+v", r.Errors)
		}
	})
}

func TestGraphQLQueryErrorsCarryCodes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db)
		var costly strings.Builder
		costly.WriteString("{")
		for i := range 600 {
			fmt.Fprintf(&costly, " u%d: bookableUnits { id }", i)
		}
		costly.WriteString(" }")
		for name, q := range map[string]string{
			"syntax error":     `{ bookableUnits { id `,
			"unknown field":    `{ bookableUnits { nope } }`,
			"too complex":      costly.String(),
			"missing argument": `{ appointment { id } }`,
		} {
			t.Run(name, func(t *testing.T) {
				r := e.query(t, e.keys.AdminAPIKey, q, nil)
				if c := r.code(t); c != domain.CodeValidationFailed {
					t.Fatalf("code %q, want %s: %+v", c, domain.CodeValidationFailed, r.Errors)
				}
			})
		}
	})
}

// A GraphQL mutation waits out the freshness window after its commit before
// it answers, so every replica's caches show it by then (package
// graph/fresh); a query, or a mutation that committed nothing, does not
// wait.
func TestGraphQLMutationsSettle(t *testing.T) {
	const window = time.Second
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db, func(c *graph.Settings) { c.FreshnessWindow = window })
		timed := func(query string) time.Duration {
			start := time.Now()
			e.query(t, e.keys.AdminAPIKey, query, nil).ok(t)
			return time.Since(start)
		}
		if d := timed(`mutation { createApiKey(input: {name: "CRM", scopes: ["context:read"]}) { secret } }`); d < window {
			t.Fatalf("a mutation answered after %v, within the window of %v", d, window)
		}
		if d := timed(`{ apiKeys { id } }`); d >= window {
			t.Fatalf("a query took %v: queries should not wait out the window", d)
		}
		start := time.Now()
		e.query(t, e.keys.AdminAPIKey, `mutation { revokeApiKey(id: "key_01KAB3Y7W3QZ000000000000") { id } }`, nil)
		if d := time.Since(start); d >= window {
			t.Fatalf("a mutation that committed nothing took %v", d)
		}
	})
}
