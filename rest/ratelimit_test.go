package rest_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/rest"
)

// stack is what serve puts around the v1 handler that the plain harness
// leaves out: metrics (first in the chain), a rate limiter and the log.
type stack struct {
	log     *slog.Logger // nil: discard
	limiter *rest.RateLimiter
	metrics *rest.Metrics
	extra   func(chi.Router) // more routes, for tests
}

// serve replaces e's server with one assembled like cmd/barberd's router:
// metrics middleware, then rest.Middleware, the v1 handler (also answering
// unknown routes) with the limiter, and /metrics.
func (e *env) serve(s stack) {
	e.t.Helper()
	log := s.log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e.reconfigure(func(c *graph.Settings) {
		c.Log = log
		if s.metrics != nil {
			c.Metrics = s.metrics
		}
	})
	r := chi.NewRouter()
	if s.metrics != nil {
		if s.limiter != nil {
			s.limiter.OnLimited = s.metrics.RateLimited
		}
		r.Use(s.metrics.Middleware)
	}
	r.Use(rest.Middleware(log, 30*time.Second))
	if s.metrics != nil {
		r.Handle("/metrics", s.metrics.Handler())
	}
	v1 := rest.New(e.res, rest.WithRateLimiter(s.limiter))
	r.NotFound(v1.ServeHTTP)
	r.Mount(rest.BasePath, v1)
	if s.extra != nil {
		s.extra(r)
	}
	e.srv = httptest.NewServer(r)
	e.t.Cleanup(e.srv.Close)
}

// manualClock is a clock for the limiter that moves only when told.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newLimiter(perSecond float64, burst int) (*rest.RateLimiter, *manualClock) {
	c := &manualClock{t: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := rest.NewRateLimiter(perSecond, burst)
	l.Now = c.now
	return l, c
}

// expectQuota checks the RateLimit-* headers of a response.
func expectQuota(t *testing.T, r *response, limit, remaining, reset int) {
	t.Helper()
	for name, want := range map[string]int{"RateLimit-Limit": limit, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset} {
		if got := r.Header.Get(name); got != strconv.Itoa(want) {
			t.Errorf("%s = %q, want %d", name, got, want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		lim, clk := newLimiter(1, 3) // 3 at once, then 1 a second
		m := rest.NewMetrics(e.db.SQL)
		e.serve(stack{limiter: lim, metrics: m})
		key := e.keys.APIKey

		// The burst passes, counting down.
		for i := range 3 {
			r := call(t, e, "GET", "/context", key, nil)
			expect(t, r, http.StatusOK, "")
			// Remaining after this request; the bucket refills a token a second.
			expectQuota(t, r, 3, 2-i, i+1)
		}

		// Then 429 with Retry-After and the quota headers.
		r := call(t, e, "GET", "/units", key, nil)
		expect(t, r, http.StatusTooManyRequests, rest.CodeRateLimited)
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After = %q, want 1", got)
		}
		expectQuota(t, r, 3, 0, 3)
		if p := problemOf(t, r); p.RequestID == "" || p.RequestID != r.Header.Get("X-Request-Id") {
			t.Errorf("problem request_id %q, X-Request-Id %q", p.RequestID, r.Header.Get("X-Request-Id"))
		}
		// Writes are refused before they touch anything.
		r = call(t, e, "POST", "/appointments", key, e.booking(haircut, tuesdayAt10))
		expect(t, r, http.StatusTooManyRequests, rest.CodeRateLimited)
		if n := e.db.Appointment.Query().CountX(e.ctx); n != 0 {
			t.Fatalf("%d appointments after a refused create", n)
		}

		// Another key, even of the same account, has its own bucket.
		other := e.key(domain.BookingScopes...)
		r = call(t, e, "GET", "/context", other, nil)
		expect(t, r, http.StatusOK, "")
		expectQuota(t, r, 3, 2, 1)

		// Requests with a bad key are not charged to anyone and carry no quota.
		for range 5 {
			r = call(t, e, "GET", "/context", "bk_live_not-a-key", nil)
			expect(t, r, http.StatusUnauthorized, domain.CodeInvalidAPIKey)
			if h := r.Header.Get("RateLimit-Limit"); h != "" {
				t.Errorf("401 carries RateLimit-Limit %q", h)
			}
		}
		r = call(t, e, "GET", "/context", other, nil)
		expectQuota(t, r, 3, 1, 2)

		// Tokens refill: one a second.
		clk.advance(time.Second)
		r = call(t, e, "GET", "/context", key, nil)
		expect(t, r, http.StatusOK, "")
		expectQuota(t, r, 3, 0, 3)
		r = call(t, e, "GET", "/context", key, nil)
		expect(t, r, http.StatusTooManyRequests, rest.CodeRateLimited)
		clk.advance(10 * time.Second) // full again, and no more than full
		for i := range 3 {
			expect(t, call(t, e, "GET", "/context", key, nil), http.StatusOK, "")
			_ = i
		}
		expect(t, call(t, e, "GET", "/context", key, nil), http.StatusTooManyRequests, rest.CodeRateLimited)

		// Every refusal was counted.
		body := scrape(t, e)
		if got := metricValue(t, body, "barberd_rate_limited_requests_total", nil); got != 4 {
			t.Errorf("barberd_rate_limited_requests_total = %v, want 4", got)
		}
		if got := metricValue(t, body, "barberd_http_requests_total",
			map[string]string{"route": rest.BasePath + "/units", "method": "GET", "status": "429"}); got != 1 {
			t.Errorf("429s on /units = %v, want 1", got)
		}
	})
}

// TestRateLimitRetryAfter: Retry-After is whole seconds rounded up, and at
// least 1 even when the next token is due sooner.
func TestRateLimitRetryAfter(t *testing.T) {
	lim, clk := newLimiter(0.25, 1) // a token every 4 s
	if d := lim.Allow("k"); !d.Allowed || d.Remaining != 0 || d.Reset != 4*time.Second {
		t.Fatalf("first: %+v", d)
	}
	clk.advance(1500 * time.Millisecond)
	d := lim.Allow("k")
	if d.Allowed || d.RetryAfter != 2500*time.Millisecond {
		t.Fatalf("second: %+v, want refused, retry after 2.5s", d)
	}

	fast, fclk := newLimiter(100, 1) // a token every 10 ms
	fast.Allow("k")
	fclk.advance(5 * time.Millisecond)
	if d := fast.Allow("k"); d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 10*time.Millisecond {
		t.Fatalf("fast: %+v", d)
	}
	// The header rounds that up to 1 s: checked through HTTP below.
	h := fast.Middleware(func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusTooManyRequests)
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/", nil).WithContext(domain.WithViewer(context.Background(), &domain.Viewer{AccountID: "a", KeyID: "k"}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || rec.Header().Get("RateLimit-Reset") != "1" {
		t.Fatalf("status %d, Retry-After %q, RateLimit-Reset %q", rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("RateLimit-Reset"))
	}

	// Without a viewer nothing is charged and no header is set.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Limit") != "" {
		t.Fatalf("anonymous: status %d, RateLimit-Limit %q", rec.Code, rec.Header().Get("RateLimit-Limit"))
	}
}

// TestRateLimitEviction: buckets idle long enough to have refilled are
// dropped (they would behave like new ones); busy ones are kept.
func TestRateLimitEviction(t *testing.T) {
	lim, clk := newLimiter(10, 20) // refills from empty in 2 s
	for i := range 1000 {
		lim.Allow("idle-" + strconv.Itoa(i))
	}
	clk.advance(59 * time.Second)
	for range 20 {
		lim.Allow("busy") // empties its bucket
	}
	clk.advance(time.Second) // a minute after the first: time to sweep
	lim.Allow("new")
	if n := lim.Len(); n != 2 {
		t.Fatalf("%d buckets after the sweep, want 2 (busy, new)", n)
	}
	// The busy key's bucket was kept, not reset: 1 s refilled 10 tokens.
	if d := lim.Allow("busy"); d.Remaining != 9 {
		t.Fatalf("busy key after the sweep: %+v, want 9 remaining", d)
	}
}

// TestRateLimitDisabled: a rate of 0 means no limiter, and a nil limiter
// lets everything through without headers.
func TestRateLimitDisabled(t *testing.T) {
	if l := rest.NewRateLimiter(0, 40); l != nil {
		t.Fatal("NewRateLimiter(0, 40) is not nil")
	}
	each(t, func(t *testing.T, e *env) {
		e.serve(stack{})
		for range 50 {
			r := call(t, e, "GET", "/context", e.keys.APIKey, nil)
			expect(t, r, http.StatusOK, "")
			if h := r.Header.Get("RateLimit-Limit"); h != "" {
				t.Fatalf("RateLimit-Limit %q without a limiter", h)
			}
		}
	})
}
