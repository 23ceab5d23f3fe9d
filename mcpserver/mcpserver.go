// Package mcpserver is the Model Context Protocol adapter of barberd: the
// booking operations of REST v1 as tools for LLM agents, over streamable
// HTTP (Handler, mounted at /mcp) and over stdio (Stdio, "barberd mcp").
//
// Like package rest, it holds no booking rule and no SQL: each tool checks
// the shape of its arguments, calls the resolver REST calls, and answers in
// REST v1's JSON (the rest package's render types) with a one-line summary
// a person could read. So scopes, idempotency, race safety, error codes and
// alternatives are REST's. A refusal is a tool result with isError set,
// whose text is the v1 problem (rest.ProblemOf), never a JSON-RPC error:
// a model reads it and can act on it in the same turn.
//
// A key sees only the tools its scopes allow: one *mcp.Server is built for
// each distinct set of booking scopes, when first asked for, and kept (at
// most 2^7 of them). A call to a tool the server knows but the key's scopes
// do not allow is refused as the tool error insufficient_scope, naming the
// scope, rather than as an unknown tool.
//
// HTTP is stateless (every request stands alone), so any replica serves any
// request: nothing of a session is kept between requests.
package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/fresh"
	"barberd/rest"
)

// Path is where Handler is mounted.
const Path = "/mcp"

// instructions tell a model how the tools fit together.
const instructions = `barberd books appointments at barbershops. Typical flow: list_units, then list_services and list_barbers for a unit; find_next_slots (or get_availability) for free times; hold_slot while the person decides; book_appointment with the hold and a new external_reference. When nothing suits the person, join_waitlist puts them on the waitlist: a matching time that frees up is held for them and announced by a slot.available notification (get_pending_notifications) with its hold_id; book it with book_appointment and that hold, or leave_waitlist. Times are wall times in the unit's own time zone, written exactly YYYY-MM-DDTHH:MM:SS (no offset, no Z); copy them from the slots tools return. Ids come from the tools (unt_..., svc_..., brb_..., hld_..., apt_..., wl_...); never invent one. A refusal comes back as a tool error whose "code" says why; on slot_unavailable (and on join_waitlist's slot_available) its "alternatives" are free times to offer instead.`

// MCP builds and keeps the MCP servers of one resolver.
type MCP struct {
	res    *graph.Resolver
	q      graph.QueryResolver
	m      graph.MutationResolver
	window time.Duration
	tools  []tool

	mu      sync.Mutex
	servers map[uint]*mcp.Server // by scope mask (< 2^len(scopeBits)); built when first asked for
}

// scopeBits are the scopes that grant tools, each a bit of a scope mask.
var scopeBits = domain.BookingScopes

// New returns the MCP adapter of res.
func New(res *graph.Resolver) *MCP {
	m := &MCP{res: res, q: res.Query(), m: res.Mutation(), window: res.Settings().FreshnessWindow, servers: map[uint]*mcp.Server{}}
	m.tools = m.catalog()
	return m
}

// mask is the scope mask of scopes (scopes that grant no tool, such as
// admin, are left out).
func mask(scopes []string) uint {
	var m uint
	for i, s := range scopeBits {
		if slices.Contains(scopes, s) {
			m |= 1 << i
		}
	}
	return m
}

func scopeBit(scope string) uint { return 1 << slices.Index(scopeBits, scope) }

// Server returns the server offering the tools scopes allow, built once per
// distinct set.
func (m *MCP) Server(scopes []string) *mcp.Server {
	k := mask(scopes)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.servers[k] == nil {
		m.servers[k] = m.newServer(k)
	}
	return m.servers[k]
}

// newServer builds a server with the tools of scope mask k.
func (m *MCP) newServer(k uint) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "barberd", Title: "barberd booking", Version: "1"},
		&mcp.ServerOptions{Instructions: instructions})
	for _, t := range m.tools {
		if k&scopeBit(t.scope) != 0 {
			srv.AddTool(t.tool, t.handler)
		}
	}
	srv.AddReceivingMiddleware(m.refuseOutOfScope(k))
	return srv
}

// refuseOutOfScope answers a call of a tool that k's scopes do not allow
// with the tool error insufficient_scope, so the model learns why.
func (m *MCP) refuseOutOfScope(k uint) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				if i := slices.IndexFunc(m.tools, func(t tool) bool { return t.tool.Name == call.Params.Name }); i >= 0 && k&scopeBit(m.tools[i].scope) == 0 {
					t := m.tools[i]
					return failure(ctx, domain.Errorf(domain.CodeInsufficientScope,
						"This API key lacks the scope %q that the tool %s needs.", t.scope, t.tool.Name)), nil
				}
			}
			return next(ctx, method, req)
		}
	}
}

// Limits are what /mcp shares with REST: the rate limiter charged per key,
// the limits per client address, and the largest body; and the web
// origins whose pages may call it.
type Limits struct {
	Limiter *rest.RateLimiter // nil: no limit
	Addr    *rest.AddrLimits  // nil: no limit
	MaxBody int64             // 0: rest.DefaultMaxBody
	Origins []string          // allowed Origin headers ("https://app.example"); none: no browser page
}

// Handler serves MCP over streamable HTTP, statelessly. A request's Origin,
// if any, must be allowed; it is held to the body limit, to MaxBatch
// messages, authenticated (X-Service-Api-Key, or Authorization: Bearer)
// and charged to its key's rate limit, one unit a call, before MCP reads
// it. Refusals are REST's problem+json (403, 413, 400, 401, 429), and so
// are the SDK's transport errors; no answer may be cached. It expects the
// server's middleware (rest.Middleware) to run before it.
func (m *MCP) Handler(l Limits) http.Handler {
	if l.MaxBody <= 0 {
		l.MaxBody = rest.DefaultMaxBody
	}
	streamable := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		v, ok := domain.ViewerFrom(r.Context())
		if !ok {
			return nil // authentication runs first: never so
		}
		return m.Server(v.Scopes)
	}, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, MaxRequestBodyBytes: l.MaxBody,
		// The SDK refuses a request that reached a loopback address under
		// another host name, against DNS rebinding of servers without
		// authentication. Every request here needs a key, which a rebound
		// page cannot send, and the check would refuse every request from a
		// reverse proxy on the same host.
		DisableLocalhostProtection: true,
	})
	h := withCaller(streamable)
	h = l.Limiter.Middleware(rest.WriteError)(h)
	h = rest.AuthenticateBearer(m.res, l.Addr, authError)(h)
	h = countCalls(h)
	h = rest.LimitBody(l.MaxBody, false, rest.WriteError)(h)
	h = checkOrigin(l.Origins)(h)
	return hygiene(h)
}

// callerKey holds the context of the HTTP request a tool call came in.
type callerKey struct{}

// withCaller serves h with the request's context under callerKey. Tool
// calls run in a context of the SDK's that keeps the request's values (its
// viewer, logger, request id) but not its end: they learn of that through
// callerKey (bound).
func withCaller(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, callerKey{}, ctx)))
	})
}

// bound ties ctx to the end and deadline of the HTTP request it came in,
// if any: a call whose answer nobody can read any more stops.
func bound(ctx context.Context) (context.Context, context.CancelFunc) {
	caller, ok := ctx.Value(callerKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	if d, ok := caller.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadline(ctx, d)
		return ctx, func() { stop(); cancelDeadline(); cancel(nil) }
	}
	return ctx, func() { stop(); cancel(nil) }
}

// Stdio serves MCP over t (stdin and stdout for "barberd mcp") as the key
// with secret, until the client closes it or ctx ends. The key is checked
// at start (an invalid one is an error here, before anything is served)
// and again for every request, so a revoked key stops working at once.
// Each request gets a request id, which its problems carry and log lines
// name. Failures are logged to log.
func (m *MCP) Stdio(ctx context.Context, t mcp.Transport, secret string, log *slog.Logger) error {
	v, err := m.res.Authenticate(ctx, secret)
	if err != nil {
		return err
	}
	srv := m.newServer(mask(v.Scopes)) // its own: the middleware below is this key's
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx = rest.WithRequestID(ctx, log, rest.NewRequestID())
			v, err := m.res.Authenticate(ctx, secret)
			if err != nil {
				if _, ok := req.(*mcp.CallToolRequest); ok {
					return failure(ctx, err), nil
				}
				return nil, err
			}
			return next(domain.WithViewer(ctx, v), method, req)
		}
	})
	return srv.Run(ctx, t)
}

// tool is one tool with the scope it needs.
type tool struct {
	scope   string
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// handle makes the handler of a tool that reads its arguments into In and
// runs run, which answers with the v1 JSON and a line for people. Writes
// settle before the answer (fresh.Track), as REST's do, so that once an
// agent is told a slot is booked every replica shows it.
func handle[In, Out any](window time.Duration, run func(context.Context, *In) (Out, string, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := bound(ctx)
		defer cancel()
		ctx, settle := fresh.Track(ctx, window)
		var in In
		var out Out
		var text string
		err := decodeArguments(req.Params.Arguments, &in)
		if err == nil {
			out, text, err = run(ctx, &in)
		}
		settle()
		if err != nil {
			return failure(ctx, err), nil
		}
		return success(out, text), nil
	}
}

// success is the result of a tool that did its work: the v1 JSON as
// structured content, and as text content after the summary line, for
// clients that show models only text (the spec's advice).
func success(v any, text string) *mcp.CallToolResult {
	b, _ := json.Marshal(v) // the render types always encode
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// failure is the tool error that tells of err: a line for people, then
// the v1 problem as JSON text. It has no structured content: the
// TypeScript SDK 1.x checks structured content against the tool's output
// schema even on an error, and would throw the refusal away (see "Tool
// errors" in docs/operations.md).
func failure(ctx context.Context, err error) *mcp.CallToolResult {
	p := rest.ProblemOf(ctx, err)
	b, _ := json.Marshal(p) // a problem always encodes
	text := p.Code + ": " + p.Detail
	for _, f := range p.Errors {
		text += " " + f.Field + " " + f.Message + "."
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(b)}},
	}
}
