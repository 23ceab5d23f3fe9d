// Package wake tells a waiting worker which keys became due: a signal that
// holds a value while any key is due, and the set of those keys, so that
// wakes sent while the worker is busy coalesce into one.
package wake

import "sync"

// A Set is the keys woken since they were last taken. Its zero value is
// not usable: make one with New.
type Set struct {
	ch  chan struct{} // holds a value while due is not empty
	mu  sync.Mutex
	due map[string]struct{}
}

// New returns an empty set.
func New() *Set {
	return &Set{ch: make(chan struct{}, 1), due: map[string]struct{}{}}
}

// Wake marks keys due and signals the worker.
func (s *Set) Wake(keys ...string) {
	s.mu.Lock()
	for _, k := range keys {
		s.due[k] = struct{}{}
	}
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default: // already told
	}
}

// C receives a value when keys were woken; Take then says which.
func (s *Set) C() <-chan struct{} { return s.ch }

// Take returns the keys woken since it was last called, and forgets them.
func (s *Set) Take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.due))
	for k := range s.due {
		out = append(out, k)
		delete(s.due, k)
	}
	return out
}
