package rest

import (
	"maps"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
)

// madeOnce maps the keys of a small, bounded set (routes, methods,
// statuses) to values made once each, for code that every request runs:
// a lookup takes no lock and allocates nothing, and the rare new key
// copies the map.
type madeOnce[K comparable, V any] struct {
	mu sync.Mutex // serializes the copies
	m  atomic.Pointer[map[K]V]
}

// get returns k's value, made by newValue the first time.
func (c *madeOnce[K, V]) get(k K, newValue func(K) V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
	}
	m := map[K]V{}
	if old != nil {
		m = maps.Clone(*old)
	}
	v := newValue(k)
	m[k] = v
	c.m.Store(&m)
	return v
}

// routeKey is the route patterns a request went through, one per router
// (chi.Context.RoutePatterns), for the usual depth.
type routeKey [4]string

// patterns are the route patterns of the routes requests took, as
// chi.Context.RoutePattern joins them: a bounded set, since every pattern
// is a route's, never a path.
var patterns madeOnce[routeKey, string]

// routePattern is the pattern of the route r took (as
// chi.Context.RoutePattern), or "" when it took none.
func routePattern(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil {
		return ""
	}
	if len(rc.RoutePatterns) > len(routeKey{}) {
		return rc.RoutePattern()
	}
	var k routeKey
	copy(k[:], rc.RoutePatterns)
	return patterns.get(k, func(routeKey) string { return rc.RoutePattern() })
}
