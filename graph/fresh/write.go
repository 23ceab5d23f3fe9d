package fresh

import (
	"context"
	"sync/atomic"
	"time"
)

// Track returns a context in which Committed records the request's commits,
// and settle, which waits until the freshness window has passed since the
// last of them (not at all when none committed, nor past the request's
// end). Call settle before the request answers.
func Track(ctx context.Context, window time.Duration) (_ context.Context, settle func()) {
	w := new(writes)
	ctx = context.WithValue(ctx, writesKey{}, w)
	return ctx, func() {
		last := w.last.Load()
		if last == 0 {
			return
		}
		wait := window - time.Since(time.Unix(0, last))
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

type writesKey struct{}

// writes records when a request's last transaction committed (Unix
// nanoseconds; 0: none did).
type writes struct{ last atomic.Int64 }

// Committed records a commit in ctx's request, if it is tracked. Call it
// after every commit that may change a version.
func Committed(ctx context.Context) {
	if w, ok := ctx.Value(writesKey{}).(*writes); ok {
		w.last.Store(time.Now().UnixNano())
	}
}

// Answer runs answer with its commits tracked and returns its result once
// settled (Track), for an adapter that writes its answer afterwards.
func Answer[T any](ctx context.Context, window time.Duration, answer func(context.Context) T) T {
	ctx, settle := Track(ctx, window)
	v := answer(ctx)
	settle()
	return v
}
