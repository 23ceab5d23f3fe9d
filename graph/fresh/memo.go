package fresh

import "sync"

// Memo is a map bounded by a budget, for caches: each entry costs what
// cost says, and when the budget is spent, arbitrary entries are forgotten
// to make room. Entries carry their own validity; Memo only bounds memory.
type Memo[K comparable, V any] struct {
	mu     sync.RWMutex
	budget int
	spent  int
	cost   func(V) int
	m      map[K]V
}

// NewMemo returns a memo of the given budget; a nil cost counts entries.
func NewMemo[K comparable, V any](budget int, cost func(V) int) *Memo[K, V] {
	if cost == nil {
		cost = func(V) int { return 1 }
	}
	return &Memo[K, V]{budget: budget, cost: cost, m: make(map[K]V)}
}

// Get returns the entry of k, if kept.
func (m *Memo[K, V]) Get(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.m[k]
	return v, ok
}

// Put keeps v as k's entry, forgetting others to make room; an entry that
// costs more than the whole budget is not kept.
func (m *Memo[K, V]) Put(k K, v V) {
	c := m.cost(v)
	if c > m.budget {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked(k)
	for old := range m.m {
		if m.spent+c <= m.budget {
			break
		}
		m.dropLocked(old)
	}
	m.m[k] = v
	m.spent += c
}

// Drop forgets k's entry.
func (m *Memo[K, V]) Drop(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked(k)
}

func (m *Memo[K, V]) dropLocked(k K) {
	if v, ok := m.m[k]; ok {
		m.spent -= m.cost(v)
		delete(m.m, k)
	}
}
