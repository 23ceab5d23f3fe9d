package rest

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"barberd/graph/domain"

	"golang.org/x/time/rate"
)

// CodeRateLimited is the error code of a request refused by the rate
// limiter (429).
const CodeRateLimited = codeRateLimited

// RateLimiter limits authenticated requests per API key with a token bucket
// per key id: Burst requests at once and PerSecond a second sustained, on
// each replica (see "Limits kept in memory" in the package doc), or across
// replicas once Share gives it a SharedLimits.
type RateLimiter struct {
	limit rate.Limit
	burst int
	// full is how long an empty bucket takes to refill; a bucket idle that
	// long may be dropped.
	full time.Duration
	// OnLimited, when set, is called for every refused request (metrics).
	OnLimited func()
	// Now is the clock; tests may replace it before the first request.
	Now func() time.Time

	shared *SharedLimits // nil: per replica
	name   string        // the limiter's part of its shared buckets' keys

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// Share keeps the limiter's buckets in shared (Redis) under name, which
// tells this limiter's buckets from those of the others sharing it; while
// Redis is away, the limiter's own buckets decide. Call it before the first
// request; a nil limiter ignores it.
func (l *RateLimiter) Share(shared *SharedLimits, name string) {
	if l != nil {
		l.shared, l.name = shared, name
	}
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time // last request charged
}

// sweepEvery is how often, at most, idle buckets are looked for.
const sweepEvery = time.Minute

// NewRateLimiter returns a limiter allowing perSecond requests a second per
// key with bursts of burst (at least 1), or nil, which limits nothing, when
// perSecond is not positive.
func NewRateLimiter(perSecond float64, burst int) *RateLimiter {
	if perSecond <= 0 || math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	full := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &RateLimiter{
		limit: rate.Limit(perSecond), burst: burst, full: max(full, time.Second),
		Now: time.Now, buckets: map[string]*bucket{},
	}
}

// Decision is the outcome of charging one request to a key.
type Decision struct {
	Allowed    bool
	Limit      int           // the bucket's size (burst)
	Remaining  int           // whole requests left at once
	Reset      time.Duration // until the bucket is full again
	RetryAfter time.Duration // until the next request would pass (when refused)
}

// Allow charges one request to key and tells whether it may go on.
func (l *RateLimiter) Allow(key string) Decision { return l.allowN(key, 1) }

// allowN charges key n calls, one after another until one is refused, in
// one step: one round trip when Redis keeps the bucket.
func (l *RateLimiter) allowN(key string, n int) Decision {
	if l.shared != nil {
		if tokens, allowed, ok := l.shared.take(l.name, key, float64(l.limit), l.burst, n); ok {
			return l.decision(allowed, tokens)
		}
	}
	now := l.Now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		l.sweep(now)
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.last = now
	l.mu.Unlock()

	allowed := true
	for i := 0; i < n && allowed; i++ {
		allowed = b.lim.AllowN(now, 1)
	}
	return l.decision(allowed, b.lim.TokensAt(now))
}

// decision describes a charge that left tokens in its bucket.
func (l *RateLimiter) decision(allowed bool, tokens float64) Decision {
	d := Decision{Limit: l.burst, Allowed: allowed}
	d.Remaining = max(int(math.Floor(tokens)), 0)
	d.Reset = l.wait(float64(l.burst) - tokens)
	if !d.Allowed {
		d.RetryAfter = l.wait(1 - tokens)
	}
	return d
}

// wait is how long the bucket takes to gain tokens.
func (l *RateLimiter) wait(tokens float64) time.Duration {
	if tokens <= 0 {
		return 0
	}
	return time.Duration(tokens / float64(l.limit) * float64(time.Second))
}

// sweep drops the buckets idle long enough to have refilled. Callers hold mu.
func (l *RateLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.last) >= l.full {
			delete(l.buckets, k)
		}
	}
}

// Len is how many buckets the limiter holds.
func (l *RateLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Empty tells, without charging anything, whether key's bucket is empty,
// and how long until it holds a request again. A nil limiter is never empty.
func (l *RateLimiter) Empty(key string) (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	if l.shared != nil {
		if tokens, _, ok := l.shared.take(l.name, key, float64(l.limit), l.burst, 0); ok {
			if tokens >= 1 {
				return 0, false
			}
			return l.wait(1 - tokens), true
		}
	}
	now := l.Now()
	l.mu.Lock()
	b := l.buckets[key]
	l.mu.Unlock()
	if b == nil {
		return 0, false
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return 0, false
	}
	return l.wait(1 - tokens), true
}

// Middleware charges each request with a viewer (Authenticate runs before
// it) to its key and sets the RateLimit-* headers; one over the limit gets
// Retry-After and is refused through onLimited with rate_limited. A nil
// limiter limits nothing.
func (l *RateLimiter) Middleware(onLimited func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, ok := domain.ViewerFrom(r.Context())
			if !ok || v == nil || v.KeyID == "" {
				next.ServeHTTP(w, r)
				return
			}
			d := l.allowCalls(r.Context(), v.KeyID)
			h := w.Header()
			h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
			h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
			h.Set("RateLimit-Reset", strconv.Itoa(ceilSeconds(d.Reset, 0)))
			if !d.Allowed {
				l.refuse(w, r, d.RetryAfter, onLimited, "Too many requests for this API key")
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// callsKey holds how many calls a request carries (WithCalls).
type callsKey struct{}

// WithCalls says that requests made with ctx carry n calls (a batch of
// JSON-RPC requests): the per-key and per-address limits charge each.
func WithCalls(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, callsKey{}, n)
}

// allowCalls charges key one unit for each call the request made with ctx
// carries, and returns the first refusal, or the last decision.
func (l *RateLimiter) allowCalls(ctx context.Context, key string) Decision {
	n, _ := ctx.Value(callsKey{}).(int)
	return l.allowN(key, max(n, 1))
}

// refuse answers a request over the limit: Retry-After, and a rate_limited
// error through onLimited.
func (l *RateLimiter) refuse(w http.ResponseWriter, r *http.Request, retry time.Duration, onLimited func(http.ResponseWriter, *http.Request, error), what string) {
	if l.OnLimited != nil {
		l.OnLimited()
	}
	secs := ceilSeconds(retry, 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	onLimited(w, r, domain.Errorf(codeRateLimited, "%s; retry after %d seconds.", what, secs))
}

// ceilSeconds rounds d up to whole seconds, at least least.
func ceilSeconds(d time.Duration, least int) int {
	return max(int(math.Ceil(d.Seconds())), least)
}
