package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"barberd/graph"
	"barberd/graph/admit"
	"barberd/graph/domain"
)

// Middleware is what every route of the server runs behind, in one
// handler, since every request pays for it: a request id, the headers
// every answer carries, room for the key id, the access log, panic
// recovery, the admission a computation keeps until its answer (package
// admit), and the deadline d from the request's start (the server's write
// timeout; 0: none), so that once the answer could no longer be written,
// the resolvers and database work behind it stop (the client going away
// cancels the context already: net/http). Its state takes one allocation
// and the request one copy.
func Middleware(log *slog.Logger, d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if !wellFormedRequestID(id) {
				id = NewRequestID()
			}
			h := w.Header()
			h["X-Request-Id"] = []string{id}
			noStore(h)
			// The status, for the log: that of Metrics' writer when it
			// runs first, as the server has it.
			sw, ok := w.(middleware.WrapResponseWriter)
			if !ok {
				sw = middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			}
			st := &requestState{log: requestLog{base: log, id: id}}
			st.answer.ResponseWriter, st.answer.before = sw, &st.hold
			ctx := admit.WithHold(context.WithValue(r.Context(), requestKey{}, st), &st.hold)
			if d > 0 {
				st.deadline.init(ctx, start.Add(d))
				ctx = &st.deadline
			}
			r = r.WithContext(ctx)
			st.serve(next, sw, r)
			if logEnabled(ctx, slog.LevelInfo) {
				st.logRequest(r, sw.Status(), start)
			}
		})
	}
}

// requestState is what Middleware keeps of a request.
type requestState struct {
	log      requestLog
	viewer   *domain.Viewer // the key's, once Authenticate found it
	hold     admit.Hold
	answer   firstByteWriter // releases hold before the first byte
	deadline lazyDeadline
}

type requestKey struct{}

// stateOf is ctx's requestState, or nil.
func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestKey{}).(*requestState)
	return st
}

// serve runs next, and turns a panic in it into a 500 problem+json with
// the request id, written on w, and logs it with its stack. The admission
// and the deadline end when next returns.
func (st *requestState) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logger(r).ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			WriteError(w, r, fmt.Errorf("panic: %v", v))
		}
	}()
	defer st.deadline.stop()
	defer st.hold.Release()
	next.ServeHTTP(&st.answer, r)
}

// logRequest logs one structured line for a request: route, status,
// latency and key id; never a key secret or a client's personal data.
func (st *requestState) logRequest(r *http.Request, status int, start time.Time) {
	route := routePattern(r)
	if route == "" {
		route = r.URL.Path
	}
	attrs := []any{
		"method", r.Method, "route", route, "status", status,
		"latency_ms", float64(time.Since(start).Microseconds()) / 1000,
	}
	if st.viewer != nil {
		attrs = append(attrs, "key_id", st.viewer.KeyID)
	}
	st.log.logger().InfoContext(r.Context(), "request", attrs...)
}

// The headers that mark every answer as one that no cache may keep and no
// browser may sniff: answers carry clients' personal data and keys'
// details. Handlers of content that may be cached (the playground's
// assets) set Cache-Control themselves, over this. The values are shared
// by every answer, as a header's values are never changed in place (Add
// appends to a full slice: a new one).
var (
	noStoreValue = []string{"no-store"}
	nosniffValue = []string{"nosniff"}
)

func noStore(h http.Header) {
	h["Cache-Control"] = noStoreValue
	h["X-Content-Type-Options"] = nosniffValue
}

// wellFormedRequestID reports whether an incoming X-Request-Id may be
// echoed: 1 to 128 of A-Z a-z 0-9 . _ : -. Anything else is replaced, so
// logs never carry client garbage.
func wellFormedRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewRequestID returns a new request id: req_ and 24 hex digits.
func NewRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	var id [4 + 2*len(b)]byte
	copy(id[:], "req_")
	hex.Encode(id[4:], b[:])
	return string(id[:])
}

// WithRequestID gives ctx the request id id, which problems carry, and log
// with it: what Middleware does for an HTTP request, for requests that
// come another way (MCP over stdio).
func WithRequestID(ctx context.Context, log *slog.Logger, id string) context.Context {
	return context.WithValue(ctx, requestKey{}, &requestState{log: requestLog{base: log, id: id}})
}

func requestID(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.log.id
	}
	return ""
}

// requestLog is a request's id and its logger, made with the id the first
// time something is logged: most requests log nothing at the usual levels.
type requestLog struct {
	base *slog.Logger
	id   string
	once sync.Once
	log  *slog.Logger
}

func (rl *requestLog) logger() *slog.Logger {
	rl.once.Do(func() { rl.log = rl.base.With("request_id", rl.id) })
	return rl.log
}

// AddrLimits are the limits kept per client address, for the requests no
// key can be charged for: requests without a key (anonymous GraphQL:
// introspection for the playground) and failed authentications, so a flood
// of wrong keys never reaches the database. IPv6 clients are limited per
// /64, the block one subscriber usually holds. A nil *AddrLimits, or a nil
// limiter in it, limits nothing.
type AddrLimits struct {
	Anonymous *RateLimiter // requests without a key
	Failures  *RateLimiter // refused keys; an address with none left is refused before the lookup
	Addr      *ClientAddr  // how the client address is found (trusted proxies)
}

// bucket is the limiter key of r's client address.
func (l *AddrLimits) bucket(r *http.Request) string {
	a := l.Addr.Of(r)
	if ip, err := netip.ParseAddr(a); err == nil && ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return a
}

// Authenticate resolves the X-Service-Api-Key header to a viewer. With
// required, a request without a valid key is refused with 401; without it, a
// request with no key goes on anonymously (GraphQL serves introspection so),
// charged to its client address. onError renders refusals in the caller's
// own error format.
func Authenticate(res *graph.Resolver, limits *AddrLimits, required bool, onError func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return authenticate(res, limits, required, serviceKey, onError)
}

// AuthenticateBearer is Authenticate, key required, that also takes the
// key as "Authorization: Bearer <key>", the header MCP clients send;
// X-Service-Api-Key wins when both are there. REST and GraphQL keep to
// X-Service-Api-Key alone, as their contract says.
func AuthenticateBearer(res *graph.Resolver, limits *AddrLimits, onError func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return authenticate(res, limits, true, func(r *http.Request) string {
		if k := serviceKey(r); k != "" {
			return k
		}
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return ""
		}
		return strings.TrimSpace(token)
	}, onError)
}

func serviceKey(r *http.Request) string { return r.Header.Get("X-Service-Api-Key") }

func authenticate(res *graph.Resolver, limits *AddrLimits, required bool, secretOf func(*http.Request) string, onError func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	if limits == nil {
		limits = &AddrLimits{}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			secret := secretOf(r)
			if secret == "" && !required {
				if l := limits.Anonymous; l != nil {
					if d := l.Allow(limits.bucket(r)); !d.Allowed {
						l.refuse(w, r, d.RetryAfter, onError, "Too many requests without an API key from this address")
						return
					}
				}
				next.ServeHTTP(w, r)
				return
			}
			failures := limits.Failures
			var addr string
			if failures != nil {
				addr = limits.bucket(r)
				if retry, empty := failures.Empty(addr); empty {
					failures.refuse(w, r, retry, onError, "Too many requests with a missing or wrong API key from this address")
					return
				}
			}
			v, err := res.Authenticate(r.Context(), secret)
			if err != nil {
				if code := domain.ErrorCode(err); failures != nil && (code == domain.CodeInvalidAPIKey || code == domain.CodeMissingAPIKey) {
					failures.allowCalls(r.Context(), addr)
				}
				onError(w, r, err)
				return
			}
			if st := stateOf(r.Context()); st != nil {
				st.viewer = v // for the access log
			}
			next.ServeHTTP(w, r.WithContext(domain.WithViewer(r.Context(), v)))
		})
	}
}
