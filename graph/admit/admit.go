// Package admit is the admission gate of expensive work: a weighted
// semaphore whose capacity is a share of the process's cores, so that
// heavy requests queue for it while light ones (and everything that does
// not pass the gate) keep the rest of the machine.
//
// Work is admitted in arrival order once its weight fits. Waiting respects
// the caller's context (a caller who goes away leaves the queue) and is
// bounded: past the gate's longest wait the caller is refused with
// [ErrBusy].
//
// A request that has a [Hold] (an HTTP adapter gives every request one)
// keeps its admission until the adapter releases the hold, as it starts to
// write the answer, so the work of encoding the answer counts too. Without
// a hold, admission ends when the work's caller releases it. A request
// holds at most one admission at a time: asking again first gives back the
// one it holds, so a request can never wait for itself.
package admit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy is the refusal of work that waited the gate's longest wait.
var ErrBusy = errors.New("admit: the server is busy with other heavy requests")

// Metrics receives the gate's state and waits (graph.Metrics implements it).
type Metrics interface {
	// Admission: the weight admitted and the requests waiting changed.
	Admission(inUse, waiting int)
	// AdmissionWaited: a request waited d to be admitted, or was refused
	// (admitted false: it waited too long or went away).
	AdmissionWaited(d time.Duration, admitted bool)
}

// A Gate admits weighted work up to its capacity.
type Gate struct {
	capacity int
	maxWait  time.Duration
	metrics  Metrics

	mu      sync.Mutex
	inUse   int
	waiting []*waiter // in arrival order
}

type waiter struct {
	weight int
	ready  chan struct{} // closed once admitted
}

// New returns a gate of capacity (at least 1) whose callers wait at most
// maxWait; a nil metrics counts nothing.
func New(capacity int, maxWait time.Duration, metrics Metrics) *Gate {
	return &Gate{capacity: max(capacity, 1), maxWait: maxWait, metrics: metrics}
}

// Capacity is the weight the gate admits at once.
func (g *Gate) Capacity() int { return g.capacity }

// Acquire admits work of weight (between 1 and the capacity) and returns
// its release, to call once; with a Hold in ctx, the hold releases it
// instead and release does nothing. Errors: ErrBusy, or ctx's.
func (g *Gate) Acquire(ctx context.Context, weight int) (release func(), err error) {
	h, _ := ctx.Value(holdKey{}).(*Hold)
	h.give() // before waiting: a request never waits for its own admission
	weight = min(max(weight, 1), g.capacity)
	g.mu.Lock()
	if len(g.waiting) == 0 && g.inUse+weight <= g.capacity {
		g.inUse += weight
		g.report()
		g.mu.Unlock()
		return h.keep(g.releaser(weight)), nil
	}
	w := &waiter{weight: weight, ready: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.report()
	g.mu.Unlock()

	start := time.Now()
	timer := time.NewTimer(g.maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		g.waited(start, true)
		return h.keep(g.releaser(weight)), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = ErrBusy
	}
	g.mu.Lock()
	select {
	case <-w.ready: // admitted meanwhile: give it back
		g.inUse -= weight
	default:
		g.remove(w)
	}
	g.admit()
	g.report()
	g.mu.Unlock()
	g.waited(start, false)
	return nil, err
}

// releaser gives weight back, once.
func (g *Gate) releaser(weight int) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.inUse -= weight
			g.admit()
			g.report()
			g.mu.Unlock()
		})
	}
}

// admit admits the waiters at the head of the queue that fit. g.mu is held.
func (g *Gate) admit() {
	for len(g.waiting) > 0 && g.inUse+g.waiting[0].weight <= g.capacity {
		w := g.waiting[0]
		g.waiting = g.waiting[1:]
		g.inUse += w.weight
		close(w.ready)
	}
}

// remove takes w out of the queue. g.mu is held.
func (g *Gate) remove(w *waiter) {
	for i, x := range g.waiting {
		if x == w {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return
		}
	}
}

// report tells the metrics the gate's state. g.mu is held.
func (g *Gate) report() {
	if g.metrics != nil {
		g.metrics.Admission(g.inUse, len(g.waiting))
	}
}

func (g *Gate) waited(start time.Time, admitted bool) {
	if g.metrics != nil {
		g.metrics.AdmissionWaited(time.Since(start), admitted)
	}
}

type holdKey struct{}

// A Hold keeps a request's admission until Release (once the answer starts
// to be written; again at the request's end does no harm). Its zero value
// is ready to use, in a context made by WithHold.
type Hold struct {
	mu       sync.Mutex
	release  func()
	released bool
}

// WithHold returns a context whose admissions h keeps.
func WithHold(ctx context.Context, h *Hold) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

// Release gives back the admission h keeps, and any taken afterwards.
func (h *Hold) Release() {
	h.mu.Lock()
	h.released = true
	h.mu.Unlock()
	h.give()
}

// give releases the admission h keeps, if any (h may be nil).
func (h *Hold) give() {
	if h == nil {
		return
	}
	h.mu.Lock()
	release := h.release
	h.release = nil
	h.mu.Unlock()
	if release != nil {
		release()
	}
}

// keep makes h keep release and returns what the caller should call in its
// place: nothing when h keeps it (h may be nil, then release itself).
func (h *Hold) keep(release func()) func() {
	if h == nil {
		return release
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released { // the answer is already being written
		return release
	}
	if h.release != nil { // a concurrent admission of the same request
		return release
	}
	h.release = release
	return func() {}
}
