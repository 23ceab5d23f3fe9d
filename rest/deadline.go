package rest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyDeadline is a context with a deadline whose timer is made only once
// something asks when the context ends (Done, or Err at or past the
// deadline). A request answered from caches never does, so most requests
// never make one; one that queries the database makes it at its first
// query, as context.WithDeadline would have at its start. Until then it
// answers from its parent and the deadline.
//
// Its zero value is unusable: start it with init, end it with stop.
type lazyDeadline struct {
	parent   context.Context
	deadline time.Time

	mu    sync.Mutex // serializes making the timer and stop
	timed atomic.Pointer[timedContext]
	ended bool // stop was called: a timer made afterwards is made stopped
}

// timedContext is the context.WithDeadline a lazyDeadline made.
type timedContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (c *lazyDeadline) init(parent context.Context, deadline time.Time) {
	c.parent, c.deadline = parent, deadline
}

// real is the context.WithDeadline behind c, made the first time.
func (c *lazyDeadline) real() context.Context {
	if t := c.timed.Load(); t != nil {
		return t.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return t.ctx
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	if c.ended {
		cancel()
	}
	c.timed.Store(&timedContext{ctx, cancel})
	return ctx
}

// stop ends c, as a context.CancelFunc does: its timer, if made, is
// stopped, and Done and Err say canceled from now on.
func (c *lazyDeadline) stop() {
	c.mu.Lock()
	c.ended = true
	t := c.timed.Load()
	c.mu.Unlock()
	if t != nil {
		t.cancel()
	}
}

func (c *lazyDeadline) Deadline() (time.Time, bool) {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Deadline()
	}
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *lazyDeadline) Done() <-chan struct{} { return c.real().Done() }

func (c *lazyDeadline) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Err()
	}
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if err := c.parent.Err(); err != nil || ended || !time.Now().Before(c.deadline) {
		return c.real().Err() // the parent's error, canceled, or past the deadline
	}
	return nil
}

func (c *lazyDeadline) Value(key any) any {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Value(key)
	}
	if _, ok := key.(*int); ok {
		// Package context finds the cancellation a context carries
		// (context.Cause, and the contexts made from this one) by a key
		// of type *int: only the real context answers for the deadline.
		return c.real().Value(key)
	}
	return c.parent.Value(key)
}

func (c *lazyDeadline) String() string { return "rest.lazyDeadline" }
