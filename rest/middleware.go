package rest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"barberd/graph"
)

// Middleware is the chain every route of the server runs behind: request
// id, room for the key id, the access log, and panic recovery.
func Middleware(log *slog.Logger) []func(http.Handler) http.Handler {
	return []func(http.Handler) http.Handler{RequestID(log), KeyHolder, AccessLog, Recover}
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
				b := make([]byte, 12)
				_, _ = rand.Read(b)
				id = "req_" + hex.EncodeToString(b)
			}
			w.Header().Set("X-Request-Id", id)
			ctx := context.WithValue(r.Context(), requestIDKey{}, id)
			ctx = context.WithValue(ctx, loggerKey{}, log.With("request_id", id))
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// AccessLog logs one structured line per request: route, status, latency and
// key id; never a key secret or a client's personal data.
func AccessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
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
type viewerHolder struct{ v *graph.Viewer }

type viewerHolderKey struct{}

func viewerOf(r *http.Request) (*graph.Viewer, bool) {
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
				writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Authenticate resolves the X-Service-Api-Key header to a viewer. With
// required, a request without a valid key is refused with 401; without it, a
// request with no key goes on anonymously (GraphQL serves introspection so),
// and onError renders refusals in the caller's own error format.
func Authenticate(res *graph.Resolver, required bool, onError func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			secret := r.Header.Get("X-Service-Api-Key")
			if secret == "" && !required {
				next.ServeHTTP(w, r)
				return
			}
			v, err := res.Authenticate(r.Context(), secret)
			if err != nil {
				onError(w, r, err)
				return
			}
			if h, _ := r.Context().Value(viewerHolderKey{}).(*viewerHolder); h != nil {
				h.v = v
			}
			next.ServeHTTP(w, r.WithContext(graph.WithViewer(r.Context(), v)))
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

// settleWrites makes a request that may have written (any method but GET
// and HEAD) wait out the freshness window after its last commit before its
// answer goes out (graph.Resolver.TrackWrites): its handler writes the
// answer after its transactions committed.
func settleWrites(res *graph.Resolver) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				next.ServeHTTP(w, r)
				return
			}
			ctx, settle := res.TrackWrites(r.Context())
			next.ServeHTTP(&settlingWriter{ResponseWriter: w, settle: settle}, r.WithContext(ctx))
		})
	}
}

// settlingWriter settles before the first byte of the answer.
type settlingWriter struct {
	http.ResponseWriter
	settle  func()
	settled bool
}

func (w *settlingWriter) wait() {
	if !w.settled {
		w.settled = true
		w.settle()
	}
}

func (w *settlingWriter) WriteHeader(code int) {
	w.wait()
	w.ResponseWriter.WriteHeader(code)
}

func (w *settlingWriter) Write(b []byte) (int, error) {
	w.wait()
	return w.ResponseWriter.Write(b)
}

func (w *settlingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
