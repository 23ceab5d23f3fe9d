package graph

import "sync"

// memo is a map bounded by a budget, for caches: each entry costs what
// cost says, and when the budget is spent, arbitrary entries are forgotten
// to make room. Entries carry their own validity; memo only bounds memory.
type memo[K comparable, V any] struct {
	mu     sync.RWMutex
	budget int
	spent  int
	cost   func(V) int
	m      map[K]V
}

// newMemo returns a memo of the given budget; a nil cost counts entries.
func newMemo[K comparable, V any](budget int, cost func(V) int) *memo[K, V] {
	if cost == nil {
		cost = func(V) int { return 1 }
	}
	return &memo[K, V]{budget: budget, cost: cost, m: make(map[K]V)}
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.m[k]
	return v, ok
}

func (m *memo[K, V]) put(k K, v V) {
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

func (m *memo[K, V]) drop(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropLocked(k)
}

func (m *memo[K, V]) dropLocked(k K) {
	if v, ok := m.m[k]; ok {
		m.spent -= m.cost(v)
		delete(m.m, k)
	}
}
