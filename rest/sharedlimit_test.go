package rest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/graph/domain"
	"barberd/rest"
)

// redisAddr is the Redis the shared-limit tests use.
const redisAddr = "127.0.0.1:6379"

// needRedis skips the test when Redis does not answer on redisAddr (fails
// it under CI).
func needRedis(t *testing.T) {
	t.Helper()
	c, err := net.DialTimeout("tcp", redisAddr, time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("BARBERD_REQUIRE_REDIS") == "1" {
			t.Fatalf("Redis is needed on %s: %v", redisAddr, err)
		}
		t.Skipf("Redis is needed on %s: %v", redisAddr, err)
	}
	c.Close()
}

// sharedLimits connects to the Redis at addr with a prefix of the test's
// own, as one replica would.
func sharedLimits(t *testing.T, addr, prefix string, log *slog.Logger) *rest.SharedLimits {
	t.Helper()
	// A loaded test machine can take long to answer: the timeout is
	// generous, so the tests see sharing and not the per-replica fallback
	// (a closed connection fails at once whatever the timeout).
	s, err := rest.NewSharedLimits("redis://"+addr+"/0", prefix, 5*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testPrefix(t *testing.T) string {
	return fmt.Sprintf("barberd-test:%s:%d:", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// replica serves the v1 handler over e's resolver with a rate limiter per
// key and a bad-key budget per address of its own, shared through shared
// when it is not nil, as one barberd replica among several.
func replica(t *testing.T, e *env, shared *rest.SharedLimits, perSecond float64, burst int) *httptest.Server {
	lim := rest.NewRateLimiter(perSecond, burst)
	failures := rest.NewRateLimiter(perSecond, burst)
	if shared != nil {
		lim.Share(shared, "key:")
		failures.Share(shared, "auth-failure:")
	}
	r := chi.NewRouter()
	r.Use(rest.Middleware(e.res.Settings().Log, 30*time.Second))
	r.Mount(rest.BasePath, rest.New(e.res, rest.WithRateLimiter(lim), rest.WithAddrLimits(&rest.AddrLimits{Failures: failures})))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

// TestSharedRateLimit: two replicas on one Redis enforce one limit per key
// and one bad-key budget per address; without Redis each has its own.
func TestSharedRateLimit(t *testing.T) {
	needRedis(t)
	each(t, func(t *testing.T, e *env) {
		const burst = 6
		prefix := testPrefix(t)
		// A refill of one request every 1000 s: only the burst passes.
		a := replica(t, e, sharedLimits(t, redisAddr, prefix, nil), 0.001, burst)
		b := replica(t, e, sharedLimits(t, redisAddr, prefix, nil), 0.001, burst)
		lone := replica(t, e, nil, 0.001, burst)
		lone2 := replica(t, e, nil, 0.001, burst)
		count := func(servers ...*httptest.Server) (ok, limited int) {
			for i := range 4 * burst {
				r := doRequest(t, servers[i%len(servers)].URL, "GET", "/context", e.keys.APIKey, nil, nil)
				switch r.Status {
				case http.StatusOK:
					ok++
				case http.StatusTooManyRequests:
					limited++
				default:
					t.Fatalf("status %d: %s", r.Status, r.Body)
				}
			}
			return ok, limited
		}
		if ok, limited := count(a, b); ok != burst || limited != 3*burst {
			t.Errorf("two replicas on one Redis: %d passed, %d limited; want %d and %d", ok, limited, burst, 3*burst)
		}
		// Control: the same key on two replicas without Redis gets a
		// burst on each.
		e2 := e.key(domain.BookingScopes...)
		e.keys.APIKey, e2 = e2, e.keys.APIKey
		defer func() { e.keys.APIKey = e2 }()
		if ok, _ := count(lone, lone2); ok != 2*burst {
			t.Errorf("two replicas without Redis: %d passed, want %d", ok, 2*burst)
		}

		// Wrong keys: the address's budget is spent across both replicas;
		// then even a good key from it is refused before its lookup.
		for i := range burst {
			r := doRequest(t, []*httptest.Server{a, b}[i%2].URL, "GET", "/context", "bk_wrong", nil, nil)
			expect(t, r, http.StatusUnauthorized, domain.CodeInvalidAPIKey)
		}
		good := e.key(domain.BookingScopes...)
		for _, s := range []*httptest.Server{a, b} {
			r := doRequest(t, s.URL, "GET", "/context", good, nil, nil)
			expect(t, r, http.StatusTooManyRequests, rest.CodeRateLimited)
		}
	})
}

// proxy forwards TCP connections to target until closed; closing it cuts
// every connection, as a Redis that goes away would.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestSharedRateLimitRedisGone: Redis going away mid-traffic fails no
// request: the replicas go on limiting alone, log it and say so in the
// metrics.
func TestSharedRateLimitRedisGone(t *testing.T) {
	needRedis(t)
	each(t, func(t *testing.T, e *env) {
		p := newProxy(t, redisAddr)
		var logged strings.Builder
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logged.Write(b)
		}), nil))
		m := rest.NewMetrics(nil)
		shared := sharedLimits(t, p.ln.Addr().String(), testPrefix(t), log)
		var state atomic.Int32 // 1 shared, 2 per replica
		shared.OnChange = func(s bool) {
			m.RateLimitsShared(s)
			if s {
				state.Store(1)
			} else {
				state.Store(2)
			}
		}
		shared.OnError = m.RedisError
		if err := shared.Check(context.Background()); err != nil || state.Load() != 1 {
			t.Fatalf("Check: %v (state %d)", err, state.Load())
		}
		srv := replica(t, e, shared, 1e6, 1e6) // no request is limited (SQLite serves over 2,000 a second here): every one must pass
		var wg sync.WaitGroup
		var failed atomic.Int32
		stop := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					req := newRequest(t, srv.URL, "GET", "/context", e.keys.APIKey, nil, nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						failed.Add(1)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						failed.Add(1)
					}
				}
			})
		}
		time.Sleep(300 * time.Millisecond)
		p.close() // Redis goes away mid-traffic
		// The next limit check sees it; on a loaded machine the requests
		// in flight may take a while to get there, so the traffic goes on
		// until it does, for at most 10 s.
		for deadline := time.Now().Add(10 * time.Second); state.Load() != 2 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // and requests go on passing without it
		close(stop)
		wg.Wait()
		if n := failed.Load(); n != 0 {
			t.Errorf("%d requests failed while Redis went away", n)
		}
		if state.Load() != 2 {
			t.Errorf("limits still reported shared 10 s after Redis went away")
		}
		mu.Lock()
		if !strings.Contains(logged.String(), "Redis unreachable") {
			t.Errorf("no log line says Redis went away:\n%s", logged.String())
		}
		mu.Unlock()
		resp, err := http.Get(metricsServer(t, m).URL)
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{"barberd_rate_limits_shared 0", "barberd_rate_limit_redis_errors_total"} {
			if !strings.Contains(string(metrics), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		// Alone, the replica still limits: a small limiter sharing the
		// same gone Redis refuses past its own burst.
		lim := rest.NewRateLimiter(0.001, 2)
		lim.Share(shared, "key:")
		if d1, d2, d3 := lim.Allow("k"), lim.Allow("k"), lim.Allow("k"); !d1.Allowed || !d2.Allowed || d3.Allowed {
			t.Errorf("per-replica fallback: %v %v %v", d1.Allowed, d2.Allowed, d3.Allowed)
		}
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func metricsServer(t *testing.T, m *rest.Metrics) *httptest.Server {
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestSharedRateLimitBatch: a request carrying n calls (rest.WithCalls) is
// charged n in one Redis command, with the per-replica limiter's outcome
// and counts, and is still limited alone once Redis is gone.
func TestSharedRateLimitBatch(t *testing.T) {
	needRedis(t)
	p := newProxy(t, redisAddr)
	shared := sharedLimits(t, p.ln.Addr().String(), testPrefix(t), nil)
	var commands atomic.Int64
	shared.CountCommands(&commands)
	// A refill of one call every 1000 s: only the burst passes.
	viaRedis, alone := rest.NewRateLimiter(0.001, 10), rest.NewRateLimiter(0.001, 10)
	viaRedis.Share(shared, "key:")
	viaRedis.Allow("warm-up") // loads the script, which may take a second command
	bg := context.Background()
	// The refused batch of 5 spends the 4 calls left, as calls charged
	// one after another until one is refused do.
	for i, n := range []int{3, 0, 2, 5, 1, 10} {
		before := commands.Load()
		ctx := bg
		if n > 0 {
			ctx = rest.WithCalls(bg, n)
		}
		got, want := viaRedis.AllowCalls(ctx, "k"), alone.AllowCalls(ctx, "k")
		if c := commands.Load() - before; c != 1 {
			t.Errorf("request %d (%d calls): %d Redis commands, want 1", i, n, c)
		}
		if got.Allowed != want.Allowed || got.Remaining != want.Remaining || got.Limit != want.Limit {
			t.Errorf("request %d (%d calls): Redis %+v, per replica %+v", i, n, got, want)
		}
	}
	if d := alone.AllowCalls(bg, "fresh"); !d.Allowed || d.Remaining != 9 {
		t.Fatalf("control: a fresh bucket after one call: %+v", d)
	}

	p.close() // Redis goes away: the replica's own bucket decides
	d := viaRedis.AllowCalls(rest.WithCalls(bg, 4), "k")
	if !d.Allowed || d.Remaining != 6 {
		t.Errorf("a batch of 4 without Redis: %+v, want allowed with 6 left", d)
	}
	if d = viaRedis.AllowCalls(rest.WithCalls(bg, 7), "k"); d.Allowed || d.Remaining != 0 {
		t.Errorf("a batch of 7 with 6 left without Redis: %+v, want refused with 0 left", d)
	}
}
