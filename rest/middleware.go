package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"barberd/graph"
	"barberd/graph/domain"
)

// Middleware is the chain every route of the server runs behind: request
// id, headers every answer carries, room for the key id, the access log,
// panic recovery, and the admission a computation keeps until its answer.
func Middleware(log *slog.Logger) []func(http.Handler) http.Handler {
	return []func(http.Handler) http.Handler{RequestID(log), NoStore, KeyHolder, AccessLog, Recover, HoldAdmission}
}

// NoStore marks every answer as one that no cache may keep and no browser
// may sniff: answers carry clients' personal data and keys' details.
// Handlers of content that may be cached (the playground's assets) set
// Cache-Control themselves, over this.
func NoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// Deadline gives every request's context the deadline d from its start
// (the server's write timeout): once the answer could no longer be
// written, the resolvers and database work behind it stop. The client
// going away cancels the context already (net/http). 0: no deadline.
func Deadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

type requestIDKey struct{}

// wellFormedRequestID is what an incoming X-Request-Id must look like to be
// echoed; anything else is replaced, so logs never carry client garbage.
var wellFormedRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// RequestID gives every request an id, echoing a well-formed incoming
// X-Request-Id, and puts it in the response and the request's logger.
func RequestID(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("X-Request-Id")
			if !wellFormedRequestID.MatchString(id) {
				id = NewRequestID()
			}
			w.Header().Set("X-Request-Id", id)
			next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), log, id)))
		})
	}
}

// NewRequestID returns a new request id: req_ and 24 hex digits.
func NewRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "req_" + hex.EncodeToString(b)
}

// WithRequestID gives ctx the request id id, which problems carry, and log
// with it: what RequestID does for an HTTP request, for requests that come
// another way (MCP over stdio).
func WithRequestID(ctx context.Context, log *slog.Logger, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, &requestLog{base: log, id: id})
}

func requestID(ctx context.Context) string {
	if rl, ok := ctx.Value(requestIDKey{}).(*requestLog); ok {
		return rl.id
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

// AccessLog logs one structured line per request: route, status, latency and
// key id; never a key secret or a client's personal data.
func AccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		if !logEnabled(r.Context(), slog.LevelInfo) {
			return
		}
		route := r.URL.Path
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		attrs := []any{
			"method", r.Method, "route", route, "status", ww.Status(),
			"latency_ms", float64(time.Since(start).Microseconds()) / 1000,
		}
		if v, ok := viewerOf(r); ok {
			attrs = append(attrs, "key_id", v.KeyID)
		}
		logger(r).InfoContext(r.Context(), "request", attrs...)
	})
}

// viewerHolder lets AccessLog, which runs outside the authentication
// middleware, learn the key id that authentication found.
type viewerHolder struct{ v *domain.Viewer }

type viewerHolderKey struct{}

func viewerOf(r *http.Request) (*domain.Viewer, bool) {
	h, _ := r.Context().Value(viewerHolderKey{}).(*viewerHolder)
	if h == nil || h.v == nil {
		return nil, false
	}
	return h.v, true
}

// Recover turns a panic in a handler into a 500 problem+json with the
// request id, and logs it with its stack.
func Recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger(r).ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				WriteError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
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
			if h, _ := r.Context().Value(viewerHolderKey{}).(*viewerHolder); h != nil {
				h.v = v
			}
			next.ServeHTTP(w, r.WithContext(domain.WithViewer(r.Context(), v)))
		})
	}
}

// KeyHolder makes room in the request context for the key id that
// Authenticate finds, so AccessLog can log it.
func KeyHolder(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), viewerHolderKey{}, &viewerHolder{})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
