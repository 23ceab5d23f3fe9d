package rest

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type testKey struct{}

// newLazy is a started lazyDeadline d from now over parent.
func newLazy(parent context.Context, d time.Duration) *lazyDeadline {
	c := &lazyDeadline{}
	c.init(parent, time.Now().Add(d))
	return c
}

// TestLazyDeadline: a lazyDeadline behaves as context.WithDeadline does,
// whether or not its timer was made, and makes it only when asked.
func TestLazyDeadline(t *testing.T) {
	t.Parallel()
	parent := context.WithValue(context.Background(), testKey{}, "v")

	t.Run("unasked", func(t *testing.T) {
		c := newLazy(parent, time.Hour)
		if c.Err() != nil || c.Value(testKey{}) != "v" {
			t.Fatalf("Err %v, Value %v", c.Err(), c.Value(testKey{}))
		}
		if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
			t.Fatalf("Deadline %v %v", d, ok)
		}
		if c.timed.Load() != nil {
			t.Fatal("a timer was made though nothing waited")
		}
		c.stop()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err after stop: %v", c.Err())
		}
		select {
		case <-c.Done():
		default:
			t.Fatal("Done is open after stop")
		}
	})

	t.Run("waited", func(t *testing.T) {
		c := newLazy(parent, 20*time.Millisecond)
		defer c.stop()
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the deadline did not end a wait")
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Fatalf("Err %v, Cause %v", c.Err(), context.Cause(c))
		}
	})

	t.Run("past, never waited", func(t *testing.T) {
		c := newLazy(parent, -time.Millisecond)
		defer c.stop()
		if !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Fatalf("Cause %v", context.Cause(c))
		}
		c = newLazy(parent, -time.Millisecond)
		defer c.stop()
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err %v", c.Err())
		}
	})

	t.Run("child", func(t *testing.T) {
		c := newLazy(parent, 20*time.Millisecond)
		defer c.stop()
		child, cancel := context.WithCancel(c)
		defer cancel()
		if child.Value(testKey{}) != "v" {
			t.Fatal("the child lost the parent's value")
		}
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the deadline did not end the child")
		}
		if !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("child Err %v", child.Err())
		}
		fired := make(chan struct{})
		context.AfterFunc(newLazy(parent, time.Millisecond), func() { close(fired) })
		select {
		case <-fired:
		case <-time.After(5 * time.Second):
			t.Fatal("AfterFunc did not run at the deadline")
		}
	})

	t.Run("parent canceled", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		c := newLazy(p, time.Hour)
		defer c.stop()
		cancel()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err %v", c.Err())
		}
		<-c.Done()
	})

	t.Run("earlier parent deadline", func(t *testing.T) {
		p, cancel := context.WithTimeout(parent, time.Minute)
		defer cancel()
		c := newLazy(p, time.Hour)
		defer c.stop()
		pd, _ := p.Deadline()
		if d, _ := c.Deadline(); !d.Equal(pd) {
			t.Fatalf("Deadline %v, want the parent's %v", d, pd)
		}
	})

	t.Run("many waiters", func(t *testing.T) {
		c := newLazy(parent, 30*time.Millisecond)
		defer c.stop()
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				select {
				case <-c.Done():
				case <-time.After(5 * time.Second):
					t.Error("a waiter was not woken")
				}
			})
		}
		wg.Wait()
	})
}

// TestWellFormedRequestID: the hand-written check accepts what the
// pattern ^[A-Za-z0-9._:-]{1,128}$ accepts, and nothing else: every byte
// alone and inside an id, and the lengths around the bound.
func TestWellFormedRequestID(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	ids := []string{"", strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), "req_0f1e", "é", "a\x00b"}
	for c := range 256 {
		ids = append(ids, string([]byte{byte(c)}), "req-"+string([]byte{byte(c)})+"-1")
	}
	for _, id := range ids {
		if got, want := wellFormedRequestID(id), pattern.MatchString(id); got != want {
			t.Errorf("wellFormedRequestID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
	if id := NewRequestID(); !pattern.MatchString(id) || len(id) != 28 || !strings.HasPrefix(id, "req_") {
		t.Errorf("NewRequestID() = %q", id)
	}
}
