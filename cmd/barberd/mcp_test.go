package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/demo"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
)

// The MCP tests drive barberd as an LLM agent would, with the SDK's own
// client: over streamable HTTP against what routes mounts, and over stdio
// against the built binary's "barberd mcp".

// agent is an MCP client session with the output schemas of its tools.
type agent struct {
	t       testing.TB
	s       *mcp.ClientSession
	schemas map[string]*jsonschema.Resolved
	tools   []string // the names tools/list gave
}

// connect opens a session over t and lists its tools.
func connect(t testing.TB, tr mcp.Transport) *agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "barberd-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	a := &agent{t: t, s: s, schemas: map[string]*jsonschema.Resolved{}}
	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, tool := range list.Tools {
		a.tools = append(a.tools, tool.Name)
		b, _ := json.Marshal(tool.OutputSchema)
		var schema jsonschema.Schema
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		r, err := schema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		a.schemas[tool.Name] = r
		if tool.Annotations == nil || tool.Description == "" {
			t.Errorf("%s has no annotations or description", tool.Name)
		}
	}
	return a
}

// httpAgent connects over streamable HTTP to base/mcp with client, which
// carries the key.
func httpAgent(t testing.TB, base string, client *http.Client) *agent {
	return connect(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: client, MaxRetries: -1})
}

// keyed is a client that sends key in header (X-Service-Api-Key, or
// Authorization as "Bearer key"), over next (nil: the default transport).
func keyed(key, header string, next http.RoundTripper) *http.Client {
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Timeout: time.Minute, Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		if header == "Authorization" {
			r.Header.Set(header, "Bearer "+key)
		} else {
			r.Header.Set(header, key)
		}
		return next.RoundTrip(r)
	})}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// problem is the JSON text of a tool error.
type problem struct {
	Code, Detail string
	Status       int
	Errors       []struct{ Field, Message string }
	Alternatives []map[string]any
	RequestID    string `json:"request_id"`
}

// call calls a tool; a protocol error fails the test.
func (a *agent) call(name string, args map[string]any) (*mcp.CallToolResult, []byte) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := a.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	if r.IsError {
		return r, problemText(a.t, r)
	}
	b, _ := json.Marshal(r.StructuredContent)
	return r, b
}

// problemText is the problem a tool error carries as JSON text after its
// summary line; it has no structured content, which the TypeScript SDK
// 1.x would check against the tool's output schema.
func problemText(t testing.TB, r *mcp.CallToolResult) []byte {
	t.Helper()
	if r.StructuredContent != nil || len(r.Content) != 2 {
		t.Fatalf("tool error with structured content %v and %d content blocks, want none and 2", r.StructuredContent, len(r.Content))
	}
	return []byte(r.Content[1].(*mcp.TextContent).Text)
}

// ok calls a tool that must succeed, checks its structured content against
// its output schema, decodes it into out and returns the summary line.
func (a *agent) ok(name string, args map[string]any, out any) string {
	a.t.Helper()
	r, b := a.call(name, args)
	if r.IsError {
		a.t.Fatalf("%s(%v): tool error: %s", name, args, b)
	}
	var v any
	_ = json.Unmarshal(b, &v)
	if err := a.schemas[name].Validate(v); err != nil {
		a.t.Errorf("%s: structured content does not match its output schema: %v\n%s", name, err, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s: %v: %s", name, err, b)
		}
	}
	if len(r.Content) != 2 {
		a.t.Fatalf("%s: %d content blocks, want a summary and the JSON", name, len(r.Content))
	}
	var text any
	if j := r.Content[1].(*mcp.TextContent).Text; json.Unmarshal([]byte(j), &text) != nil || !reflect.DeepEqual(text, v) {
		a.t.Errorf("%s: JSON text %s differs from the structured content %s", name, j, b)
	}
	return r.Content[0].(*mcp.TextContent).Text
}

// refused calls a tool that must answer with a tool error, and returns its
// problem.
func (a *agent) refused(name string, args map[string]any, code string) problem {
	a.t.Helper()
	r, b := a.call(name, args)
	if !r.IsError {
		a.t.Fatalf("%s(%v): succeeded, want the tool error %s: %s", name, args, code, b)
	}
	var p problem
	if err := json.Unmarshal(b, &p); err != nil {
		a.t.Fatalf("%s: problem: %v: %s", name, err, b)
	}
	if p.Code != code || p.Detail == "" {
		a.t.Fatalf("%s: code %q (%s), want %q", name, p.Code, b, code)
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, p.Detail) {
		a.t.Errorf("%s: text %q lacks the detail %q", name, text, p.Detail)
	}
	return p
}

type listOf[T any] struct{ Data []T }

type named struct{ ID, Name string }

type slotJSON struct {
	StartsAt string `json:"starts_at"`
	BarberID string `json:"barber_id"`
}

type appointmentJSON struct {
	ID, Status string
	StartsAt   string  `json:"starts_at"`
	HoldID     *string `json:"hold_id"`
	Replayed   bool
}

// agentShop is what a booking at the Lisbon demo unit needs, found by
// tools rather than by REST.
type agentShop = demoIDs

func (a *agent) lisbon() agentShop {
	a.t.Helper()
	find := func(tool string, args map[string]any, name string) string {
		var l listOf[named]
		a.ok(tool, args, &l)
		for _, x := range l.Data {
			if x.Name == name {
				return x.ID
			}
		}
		a.t.Fatalf("%s: no %q in %v", tool, name, l.Data)
		return ""
	}
	var s agentShop
	s.unit = find("list_units", nil, "Barbearia Chiado")
	s.haircut = find("list_services", map[string]any{"unit_id": s.unit}, "Haircut")
	s.joao = find("list_barbers", map[string]any{"unit_id": s.unit, "service_id": s.haircut}, "João Silva")
	return s
}

// walk books, finds, moves and cancels an appointment through the tools,
// and reads and acknowledges what that told.
func walk(t *testing.T, a *agent, day string) {
	var ctxv rest.Context
	a.ok("get_context", nil, &ctxv)
	if !slices.Equal(ctxv.APIKey.Scopes, slices.Sorted(slices.Values(domain.BookingScopes))) {
		t.Errorf("context scopes %v", ctxv.APIKey.Scopes)
	}
	s := a.lisbon()
	var next struct {
		Timezone string
		Slots    []slotJSON
	}
	text := a.ok("find_next_slots", map[string]any{
		"unit_id": s.unit, "service_id": s.haircut, "barber_id": s.joao,
		"after": day + "T09:00:00", "limit": 3, "time_from": "09:00", "weekdays": []int{2},
	}, &next)
	if len(next.Slots) != 3 || next.Slots[0].StartsAt != day+"T09:00:00" || next.Timezone != "Europe/Lisbon" {
		t.Fatalf("next slots %+v", next)
	}
	if !strings.Contains(text, day+" 09:00") {
		t.Errorf("next slots summary %q", text)
	}
	var hold struct {
		HoldID string `json:"hold_id"`
		Status string
	}
	a.ok("hold_slot", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "barber_id": s.joao, "starts_at": next.Slots[0].StartsAt}, &hold)
	if hold.Status != "active" {
		t.Fatalf("hold %+v", hold)
	}
	phone := fmt.Sprintf("+3519%08d", time.Now().UnixNano()%1e8)
	ref := "conv-" + phone
	body := s.bookingAt(next.Slots[0].StartsAt, phone, ref)
	body["hold_id"] = hold.HoldID
	var first appointmentJSON
	text = a.ok("book_appointment", body, &first)
	if first.Status != "confirmed" || first.Replayed || first.HoldID == nil || *first.HoldID != hold.HoldID {
		t.Fatalf("booked %+v", first)
	}
	if want := "Booked Haircut with João Silva on " + day + " 09:00 (Europe/Lisbon)"; !strings.HasPrefix(text, want) || !strings.Contains(text, first.ID) {
		t.Errorf("booking summary %q, want it to start %q and name %s", text, want, first.ID)
	}
	// A retry with the same reference, whatever else it says, is the same
	// appointment.
	var again appointmentJSON
	a.ok("book_appointment", s.bookingAt(next.Slots[2].StartsAt, phone, ref), &again)
	if again.ID != first.ID || !again.Replayed {
		t.Fatalf("replay %+v, want %s replayed", again, first.ID)
	}
	var found listOf[appointmentJSON]
	a.ok("find_client_appointments", map[string]any{"client_phone": phone}, &found)
	if len(found.Data) != 1 || found.Data[0].ID != first.ID {
		t.Fatalf("found %+v", found)
	}
	var moved appointmentJSON
	a.ok("reschedule_appointment", map[string]any{"appointment_id": first.ID, "starts_at": next.Slots[1].StartsAt}, &moved)
	if moved.ID != first.ID || moved.StartsAt != next.Slots[1].StartsAt || moved.Status != "confirmed" {
		t.Fatalf("moved %+v", moved)
	}
	var got appointmentJSON
	a.ok("get_appointment", map[string]any{"appointment_id": first.ID}, &got)
	if got.StartsAt != moved.StartsAt {
		t.Fatalf("get_appointment %+v", got)
	}
	var cancelled appointmentJSON
	a.ok("cancel_appointment", map[string]any{"appointment_id": first.ID, "reason": "The client asked by chat"}, &cancelled)
	if cancelled.Status != "cancelled" {
		t.Fatalf("cancelled %+v", cancelled)
	}
	type note struct {
		ID            string
		Type          string
		AppointmentID string `json:"appointment_id"`
	}
	var pending, peeked listOf[note]
	a.ok("get_pending_notifications", nil, &pending)
	a.ok("get_pending_notifications", nil, &peeked) // a peek consumes nothing
	var types []string
	for _, n := range pending.Data {
		if n.AppointmentID == first.ID {
			types = append(types, n.Type)
		}
	}
	if want := []string{"appointment.created", "appointment.rescheduled", "appointment.cancelled"}; !slices.Equal(types, want) {
		t.Fatalf("notifications %v, want %v", types, want)
	}
	if len(peeked.Data) != len(pending.Data) {
		t.Fatalf("the second peek saw %d notifications, the first %d", len(peeked.Data), len(pending.Data))
	}
	var ack struct{ Acknowledged int }
	a.ok("ack_notifications", map[string]any{"through": pending.Data[len(pending.Data)-1].ID}, &ack)
	if ack.Acknowledged != len(pending.Data) {
		t.Fatalf("acknowledged %d of %d", ack.Acknowledged, len(pending.Data))
	}
	a.ok("get_pending_notifications", nil, &pending)
	if len(pending.Data) != 0 {
		t.Fatalf("after ack: %d pending", len(pending.Data))
	}
}

// refusals checks a business refusal and bad input: tool errors with the
// v1 problem, and nothing written for bad input (count counts appointments).
func refusals(t *testing.T, a *agent, day string, count func() int) {
	s := a.lisbon()
	at := day + "T10:00:00"
	a.ok("book_appointment", s.bookingAt(at, "+351911111111", "taken-1"), nil)
	p := a.refused("book_appointment", s.bookingAt(at, "+351922222222", "taken-2"), domain.CodeSlotUnavailable)
	if p.Status != 409 || len(p.Alternatives) == 0 || !strings.HasPrefix(p.RequestID, "req_") {
		t.Fatalf("slot taken: %+v", p)
	}
	for _, alt := range p.Alternatives {
		if alt["barber_id"] != s.joao || !strings.HasPrefix(alt["starts_at"].(string), day) {
			t.Errorf("alternative %v: not João's on %s", alt, day)
		}
	}

	before := count()
	bad := s.bookingAt(day+"T10:00:00Z", "12345", "bad-1")
	p = a.refused("book_appointment", bad, domain.CodeValidationFailed)
	fields := map[string]bool{}
	for _, e := range p.Errors {
		fields[e.Field] = true
	}
	if !fields["starts_at"] || !fields["client.phone"] {
		t.Errorf("bad booking: errors %+v, want starts_at and client.phone named", p.Errors)
	}
	for _, c := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"find_next_slots", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "limit": "three"}, "limit"},
		{"find_next_slots", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "limit": 50}, "limit"},
		{"book_appointment", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "starts_at": at, "client": "Ana"}, "client"},
		{"book_appointment", map[string]any{"unitId": s.unit}, "unitId"},
		{"get_availability", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "from": day, "to": "2099-01-01"}, "to"},
		{"cancel_appointment", map[string]any{"appointment_id": "", "reason": "x"}, "appointment_id"},
		{"hold_slot", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "starts_at": at, "ttl_seconds": 5}, "ttl_seconds"},
		// A NUL reached PostgreSQL in the reference's lookup: internal_error.
		{"book_appointment", s.bookingAt(day+"T11:00:00", "+351933333333", "x\x00"), "external_reference"},
		{"find_client_appointments", map[string]any{"client_phone": "+351\x00"}, "client_phone"},
	} {
		p := a.refused(c.tool, c.args, domain.CodeValidationFailed)
		if len(p.Errors) == 0 || p.Errors[0].Field != c.field {
			t.Errorf("%s(%v): errors %+v, want %s named", c.tool, c.args, p.Errors, c.field)
		}
	}
	a.refused("get_appointment", map[string]any{"appointment_id": "apt_nope"}, domain.CodeAppointmentNotFound)
	if after := count(); after != before {
		t.Errorf("bad input wrote: %d appointments before, %d after", before, after)
	}
}

// catalogOnly checks that a key with only catalog:read sees the catalog
// tools alone and is refused another.
func catalogOnly(t *testing.T, a *agent) {
	if want := []string{"list_barbers", "list_services", "list_units"}; !slices.Equal(slices.Sorted(slices.Values(a.tools)), want) {
		t.Fatalf("tools %v, want %v", a.tools, want)
	}
	a.lisbon()
	p := a.refused("book_appointment", map[string]any{"unit_id": "unt_x"}, domain.CodeInsufficientScope)
	if !strings.Contains(p.Detail, domain.ScopeAppointmentsWrite) {
		t.Errorf("refusal %q does not name the scope", p.Detail)
	}
}

// mcpEnv is a server assembled by routes over a fresh database holding
// the demo account.
type mcpEnv struct {
	db   *store.DB
	res  *graph.Resolver
	srv  *httptest.Server
	keys *demo.Keys
}

func newMCPEnv(t testing.TB, db *store.DB, c serverConfig) *mcpEnv {
	t.Helper()
	res := graph.New(graph.Settings{DB: db})
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(routes(res, db, c, rest.NewMetrics(db.SQL), nil))
	t.Cleanup(srv.Close)
	return &mcpEnv{db: db, res: res, srv: srv, keys: keys}
}

// key makes a key of the demo account with scopes.
func (e *mcpEnv) key(t testing.TB, scopes ...string) string {
	t.Helper()
	secret, _, err := e.res.CreateAPIKey(context.Background(), e.keys.AccountID, "MCP test", scopes)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func countAppointments(t testing.TB, db *store.DB) func() int {
	return func() int {
		n, err := db.Appointment.Query().Count(tenant.System(context.Background()))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

func TestMCPOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{})
		day := nextWeekday(time.Tuesday)
		t.Run("walk", func(t *testing.T) {
			walk(t, httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil)), day)
		})
		t.Run("bearer", func(t *testing.T) {
			a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "Authorization", nil))
			if len(a.tools) != 19 {
				t.Fatalf("a booking key sees %d tools: %v", len(a.tools), a.tools)
			}
			refusals(t, a, nextWeekday(time.Wednesday), countAppointments(t, db))
		})
		t.Run("catalog only", func(t *testing.T) {
			catalogOnly(t, httpAgent(t, e.srv.URL, keyed(e.key(t, domain.ScopeCatalogRead), "Authorization", nil)))
		})
		t.Run("concurrent bookings", func(t *testing.T) {
			a := httpAgent(t, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", nil))
			race(t, a, a.lisbon(), nextWeekday(time.Thursday)+"T15:00:00")
		})
	})
}

// race books one slot from 12 goroutines at once: one succeeds, the others
// are refused with slot_unavailable, and none meets a protocol error.
func race(t *testing.T, a *agent, s agentShop, at string) {
	const n = 12
	var wg sync.WaitGroup
	var booked, refused atomic.Int32
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r, err := a.s.CallTool(ctx, &mcp.CallToolParams{Name: "book_appointment",
				Arguments: s.bookingAt(at, fmt.Sprintf("+35193%07d", i), fmt.Sprintf("race-%d-%s", i, at))})
			if err != nil {
				t.Errorf("contender %d: %v", i, err)
				return
			}
			var p problem
			var b []byte
			if r.IsError {
				b = problemText(t, r)
				_ = json.Unmarshal(b, &p)
			}
			switch {
			case !r.IsError:
				booked.Add(1)
			case p.Code == domain.CodeSlotUnavailable:
				refused.Add(1)
			default:
				t.Errorf("contender %d: %s", i, b)
			}
		})
	}
	close(start)
	wg.Wait()
	if booked.Load() != 1 || refused.Load() != n-1 {
		t.Fatalf("%d booked and %d refused, want 1 and %d", booked.Load(), refused.Load(), n-1)
	}
}

// TestMCPReplicas serves one agent from two servers on one database,
// request by request in turn: statelessness means either serves any.
func TestMCPReplicas(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			first := newMCPEnv(t, storetest.OpenURL(t, dbURL), serverConfig{})
			db2 := storetest.OpenURL(t, dbURL)
			second := httptest.NewServer(routes(graph.New(graph.Settings{DB: db2}), db2, serverConfig{}, rest.NewMetrics(db2.SQL), nil))
			t.Cleanup(second.Close)
			var turn, hits [2]atomic.Int32
			urls := []string{first.srv.URL, second.URL}
			alternate := roundTrip(func(r *http.Request) (*http.Response, error) {
				i := int(turn[0].Add(1)) % 2
				hits[i].Add(1)
				r = r.Clone(r.Context())
				r.URL.Host = strings.TrimPrefix(urls[i], "http://")
				r.Host = r.URL.Host
				return http.DefaultTransport.RoundTrip(r)
			})
			a := httpAgent(t, first.srv.URL, keyed(first.keys.APIKey, "X-Service-Api-Key", alternate))
			walk(t, a, nextWeekday(time.Tuesday))
			race(t, a, a.lisbon(), nextWeekday(time.Friday)+"T11:00:00")
			if hits[0].Load() < 10 || hits[1].Load() < 10 {
				t.Fatalf("requests per replica %d and %d: not alternating", hits[0].Load(), hits[1].Load())
			}
		})
	}
}

// TestMCPHTTPRefusals checks what /mcp answers before MCP runs: 401
// without a key, 429 past the key's rate, 413 past the body limit, each
// as problem+json.
func TestMCPHTTPRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{rateLimit: 0.01, rateBurst: 2, maxBody: 4096})
		post := func(header, value, body string) *http.Response {
			req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if header != "" {
				req.Header.Set(header, value)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { resp.Body.Close() })
			return resp
		}
		expect := func(resp *http.Response, status int, code string) {
			t.Helper()
			b, _ := io.ReadAll(resp.Body)
			var p problem
			if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(b, &p) != nil || p.Code != code {
				t.Fatalf("status %d %s: %s, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), b, status, code)
			}
		}
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
		expect(post("", "", list), 401, domain.CodeMissingAPIKey)
		expect(post("Authorization", "Bearer bk_wrong", list), 401, domain.CodeInvalidAPIKey)
		expect(post("Authorization", "Basic "+e.keys.APIKey, list), 401, domain.CodeMissingAPIKey)
		expect(post("X-Service-Api-Key", e.keys.APIKey, `{"pad":"`+strings.Repeat("x", 5000)+`"}`), 413, rest.CodePayloadTooLarge)
		for i := range 2 {
			if resp := post("Authorization", "Bearer "+e.keys.APIKey, list); resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
			}
		}
		resp := post("Authorization", "Bearer "+e.keys.APIKey, list)
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		expect(resp, 429, rest.CodeRateLimited)
	})
}

// desktopConfig is the MCP client config docs/operations.md gives for
// "barberd mcp".
func desktopConfig(t *testing.T) struct {
	Command string
	Args    []string
	Env     map[string]string
} {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "```json\n")
	block, _, _ = strings.Cut(block, "```")
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	if err := json.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("docs/operations.md's MCP config: %v\n%s", err, block)
	}
	c, ok := cfg.MCPServers["barberd"]
	if !ok || c.Command != "barberd" || len(c.Args) == 0 || c.Env["BARBERD_API_KEY"] == "" {
		t.Fatalf("docs/operations.md's MCP config: %+v", cfg)
	}
	return c
}

// TestMCPStdio runs "barberd mcp" as a desktop agent would, started as
// docs/operations.md's client config says, on both databases: the walk,
// refusals, a catalog-only key, and a bad key.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			keys := seedDemo(t, dbURL)
			cfg := desktopConfig(t)
			stdio := func(key string) *agent {
				// As docs/operations.md's desktop client config starts it.
				cmd := exec.Command(barberd(t), cfg.Args...)
				cmd.Env = childEnv()
				for name := range cfg.Env {
					value := map[string]string{"BARBERD_API_KEY": key, "DATABASE_URL": dbURL}[name]
					if value == "" {
						t.Fatalf("docs/operations.md's config sets %s, which this test does not know", name)
					}
					cmd.Env = append(cmd.Env, name+"="+value)
				}
				cmd.Stderr = &syncBuffer{}
				return connect(t, &mcp.CommandTransport{Command: cmd})
			}
			walk(t, stdio(keys.APIKey), nextWeekday(time.Tuesday))
			db := storetest.OpenURL(t, dbURL)
			refusals(t, stdio(keys.APIKey), nextWeekday(time.Wednesday), countAppointments(t, db))
			catalog := strings.TrimSpace(mustCLI(t, "", "apikey", "create", "--database-url", dbURL,
				"--account", keys.AccountID, "--name", "catalog", "--scopes", domain.ScopeCatalogRead))
			catalogOnly(t, stdio(catalog))

			cmd := exec.Command(barberd(t), "mcp", "--database-url", dbURL)
			cmd.Env = append(childEnv(), "BARBERD_API_KEY=bk_wrong")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("a bad key: %v, exit %d", err, cmd.ProcessState.ExitCode())
			}
			if !strings.Contains(stderr.String(), "BARBERD_API_KEY: The API key is not valid.") || stdout.Len() != 0 {
				t.Fatalf("a bad key: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}
