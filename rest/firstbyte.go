package rest

import (
	"net/http"
	"time"

	"barberd/graph/fresh"
)

// Middleware that acts before the first byte of an answer is written.

// SettleWrites tracks the requests that may write (every method but GET
// and HEAD) and settles them (fresh.Track) before the first byte of their
// answer.
func SettleWrites(window time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				next.ServeHTTP(w, r)
				return
			}
			ctx, settle := fresh.Track(r.Context(), window)
			next.ServeHTTP(&firstByteWriter{ResponseWriter: w, before: releaseFunc(settle)}, r.WithContext(ctx))
		})
	}
}

// firstByteWriter releases before once, ahead of the first byte of the
// answer.
type firstByteWriter struct {
	http.ResponseWriter
	before interface{ Release() }
	called bool
}

// releaseFunc is a function as firstByteWriter.before.
type releaseFunc func()

func (f releaseFunc) Release() { f() }

func (w *firstByteWriter) first() {
	if !w.called {
		w.called = true
		w.before.Release()
	}
}

func (w *firstByteWriter) WriteHeader(code int) {
	w.first()
	w.ResponseWriter.WriteHeader(code)
}

func (w *firstByteWriter) Write(b []byte) (int, error) {
	w.first()
	return w.ResponseWriter.Write(b)
}

func (w *firstByteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
