// Package periodic runs background jobs: each about every interval, with
// jitter so that replicas started together spread out, logging what a job
// did and surviving its panics.
package periodic

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"time"
)

// Every runs jobs about every interval, with jitter, until ctx ends.
func Every(ctx context.Context, interval time.Duration, jobs func()) {
	t := time.NewTimer(jitter(interval, true))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		jobs()
		t.Reset(jitter(interval, false))
	}
}

// Run runs one job, logging its outcome to log (what it did at debug
// level, a failure at warn); a panic is logged, not raised.
func Run(ctx context.Context, log *slog.Logger, name string, job func() (int, error)) {
	defer func() {
		if v := recover(); v != nil {
			log.Error("background job panicked", "job", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	began := time.Now()
	n, err := job()
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping: an interrupted job is no failure.
	case err != nil:
		log.Warn("background job failed", "job", name, "done", n, "error", err.Error())
	case n > 0:
		log.Debug("background job", "job", name, "done", n, "took", time.Since(began).String())
	}
}

// jitter returns every give or take a fifth; the first wait is anywhere up
// to every.
func jitter(every time.Duration, first bool) time.Duration {
	if first {
		return rand.N(every) + 1
	}
	spread := every / 5
	if spread <= 0 {
		return every
	}
	return every - spread + rand.N(2*spread)
}
