package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/cmd/barberd/playground"
	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/gqlserver"
	"barberd/graph/store"
	"barberd/mcpserver"
	"barberd/rest"
	"barberd/webhook"
)

// serveCmd runs serve, or demo.
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, demo bool) error {
	c, f, err := parseServerConfig(args, stderr, demo)
	if err != nil {
		return err
	}
	log, db, err := f.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	metricsAt := c.metricsAddr
	if metricsAt == "" {
		metricsAt = "/metrics on --addr"
	}
	redisAt := "none: limits per replica"
	if c.redisURL != "" {
		redisAt = store.Redact(c.redisURL)
	}
	log.Info("starting", "version", version(), "database", store.Redact(f.url), "addr", c.addr,
		"metrics", metricsAt, "pprof", c.pprofAddr, "rate_limit", c.rateLimit, "rate_burst", c.rateBurst,
		"redis", redisAt, "jobs_interval", c.jobsInterval.String())
	if c.webhooks.AllowPrivate {
		log.Warn("--webhook-allow-private is on: webhook endpoints may be plain http and private or loopback addresses; never in production")
	}
	metrics := rest.NewMetrics(db.SQL)
	if c.redisURL != "" {
		if c.shared, err = rest.NewSharedLimits(c.redisURL, c.redisPrefix, c.redisTimeout, log); err != nil {
			return fmt.Errorf("--redis-url: %w", err)
		}
		defer c.shared.Close()
		c.shared.OnChange, c.shared.OnError = metrics.RateLimitsShared, metrics.RedisError
		_ = c.shared.Check(ctx) // unreachable: logged, and retried by the requests
	}
	limits := graph.DefaultLimits
	limits.ActiveHoldsPerKey = c.holdsPerKey
	limits.WaitlistPerKey = c.waitlistPerKey
	limits.MaxSlots = c.maxSlots
	res := graph.New(graph.Settings{DB: db, Log: log, Limits: limits, Metrics: metrics,
		AvailabilityCacheBytes: c.cacheMB << 20, FreshnessWindow: c.freshness,
		WebhookAllowPrivate: c.webhooks.AllowPrivate})
	if c.pprofAddr != "" {
		stop, err := serveProfiler(c.pprofAddr)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.metricsAddr != "" {
		stop, err := serveAside(c.metricsAddr, "--metrics-addr", metrics.Handler())
		if err != nil {
			return err
		}
		defer stop()
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	if demo {
		if err := introduceDemo(ctx, res, stdout, ln.Addr()); err != nil {
			ln.Close()
			return err
		}
	}
	return serve(ctx, ln, c, res, db, metrics)
}

// introduceDemo seeds the demo account when the database has none and
// prints a working booking key and admin key with a first command to try.
// On later starts fresh keys are made for the same account: secrets are
// stored only hashed.
func introduceDemo(ctx context.Context, res *graph.Resolver, stdout io.Writer, addr net.Addr) error {
	accountID, err := demo.Account(ctx, res.Settings().DB)
	if err != nil {
		return err
	}
	var key, admin string
	if accountID == "" {
		keys, err := demo.Seed(ctx, res)
		if err != nil {
			return err
		}
		accountID, key, admin = keys.AccountID, keys.APIKey, keys.AdminAPIKey
	} else {
		if key, _, err = res.CreateAPIKey(ctx, accountID, "Demo chatbot", domain.BookingScopes); err != nil {
			return err
		}
		if admin, _, err = res.CreateAPIKey(ctx, accountID, "Demo dashboard", domain.AllScopes); err != nil {
			return err
		}
	}
	base := "http://localhost" + portOf(addr)
	fmt.Fprintf(stdout, "barberd demo account %s\n\n", accountID)
	fmt.Fprintf(stdout, "API key (booking scopes): %s\n", key)
	fmt.Fprintf(stdout, "Admin API key (GraphQL):  %s\n", admin)
	fmt.Fprintf(stdout, "\nTry:\n  curl -H 'X-Service-Api-Key: %s' %s%s/units\n\n", key, base, rest.BasePath)
	fmt.Fprintf(stdout, "GraphQL playground: %s/playground  (send the key in header X-Service-Api-Key)\n\n", base)
	return nil
}

func portOf(addr net.Addr) string {
	s := addr.String()
	return s[strings.LastIndex(s, ":"):]
}

// serve runs the HTTP server (and the background jobs) on ln until ctx
// ends, then drains: ln is closed at once, so no new connection is
// accepted; /readyz says 503 and every answer closes its connection, while
// open keep-alive connections may still bring the request they were
// sending for up to the drain delay; then the server waits for the requests
// in flight for up to the shutdown timeout. So every request the server
// accepted gets a whole answer.
func serve(ctx context.Context, ln net.Listener, c serverConfig, res *graph.Resolver, db *store.DB, metrics *rest.Metrics) error {
	jobsCtx, stopJobs := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer jobs.Wait()
	defer stopJobs()
	if c.jobsInterval > 0 {
		jobs.Go(func() { res.RunJobs(jobsCtx, c.jobsInterval, c.reminderLead, c.retention) })
	}
	// Webhooks go out from every replica (package webhook); a stop waits for
	// the requests in flight.
	w := c.webhooks
	w.Resolver, w.Log, w.Metrics = res, res.Settings().Log, metrics
	jobs.Go(func() { webhook.New(w).Run(jobsCtx) })
	d := &drain{}
	srv := &http.Server{
		Handler:           d.middleware(routes(res, db, c, metrics, d)),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       c.readTimeout,
		WriteTimeout:      c.writeTimeout,
		IdleTimeout:       c.idleTimeout,
		ConnState:         d.track,
		ErrorLog:          slog.NewLogLogger(res.Settings().Log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	res.Settings().Log.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	res.Settings().Log.Info("draining", "delay", c.drainDelay.String(), "timeout", c.shutdownTimeout.String())
	d.start()
	_ = ln.Close() // refuse new connections now
	// Serve returns at once; the connections it accepted go on.
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		return err
	}
	d.wait(c.drainDelay)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	res.Settings().Log.Info("stopped")
	return nil
}

// drain is the state of a server that was told to stop: it closes every
// connection after its next answer, and counts the connections still open.
type drain struct {
	draining atomic.Bool
	mu       sync.Mutex
	open     map[net.Conn]struct{}
	changed  chan struct{} // closed and replaced whenever a connection closes
}

func (d *drain) start() { d.draining.Store(true) }

// track follows connections (http.Server.ConnState).
func (d *drain) track(c net.Conn, s http.ConnState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open == nil {
		d.open = map[net.Conn]struct{}{}
		d.changed = make(chan struct{})
	}
	switch s {
	case http.StateNew:
		d.open[c] = struct{}{}
	case http.StateHijacked, http.StateClosed:
		delete(d.open, c)
		close(d.changed)
		d.changed = make(chan struct{})
	}
}

// wait returns once every connection has closed, or after delay.
func (d *drain) wait(delay time.Duration) {
	deadline := time.After(delay)
	for {
		d.mu.Lock()
		n, changed := len(d.open), d.changed
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-deadline:
			return
		case <-changed:
		}
	}
}

// middleware closes the connection after each answer once draining.
func (d *drain) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// newRouter assembles every route of the server, without rate limits.
func newRouter(res *graph.Resolver, db *store.DB) http.Handler {
	return routes(res, db, serverConfig{}, rest.NewMetrics(db.SQL), nil)
}

// routes assembles every route of the server. /metrics needs no API key:
// unless it has a listener of its own (--metrics-addr), expose the API only
// behind something that keeps /metrics internal. d may be nil (never
// draining).
func routes(res *graph.Resolver, db *store.DB, c serverConfig, metrics *rest.Metrics, d *drain) http.Handler {
	limiter := rest.NewRateLimiter(c.rateLimit, c.rateBurst) // nil when disabled
	addr, _ := rest.NewClientAddr(c.trustedProxies)          // checked when the flags were read
	limits := &rest.AddrLimits{
		Anonymous: rest.NewRateLimiter(c.anonRate, c.anonBurst),
		Failures:  rest.NewRateLimiter(c.failRate, c.failBurst),
		Addr:      addr,
	}
	for _, l := range []*rest.RateLimiter{limiter, limits.Anonymous, limits.Failures} {
		if l != nil {
			l.OnLimited = metrics.RateLimited
		}
	}
	if c.shared != nil {
		limiter.Share(c.shared, "key:")
		limits.Anonymous.Share(c.shared, "anonymous:")
		limits.Failures.Share(c.shared, "auth-failure:")
	}
	maxBody := c.maxBody
	if maxBody <= 0 {
		maxBody = rest.DefaultMaxBody
	}
	r := chi.NewRouter()
	r.Use(metrics.Middleware) // first: it sees the 500 of a recovered panic
	r.Use(rest.Middleware(res.Settings().Log, c.writeTimeout))
	v1 := rest.New(res, rest.WithRateLimiter(limiter), rest.WithAddrLimits(limits), rest.WithMaxBody(maxBody))
	r.NotFound(v1.ServeHTTP) // unknown routes get a problem+json 404
	// A browser opening the server's address lands on the playground;
	// programs still get the problem+json 404.
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, "/playground", http.StatusSeeOther)
			return
		}
		v1.ServeHTTP(w, r)
	})
	if c.metricsAddr == "" {
		r.Handle("/metrics", metrics.Handler())
	}
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if d != nil && d.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "stopping\n")
			return
		}
		if err := db.Ping(ctx); err != nil {
			rest.WriteStatus(w, http.StatusServiceUnavailable, "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "database unreachable\n")
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	r.Mount(rest.BasePath, v1)
	// MCP for LLM agents: the same key, limits and resolvers as REST.
	mcpOrigins, _ := origins(c.mcpOrigins) // checked when the flags were read
	r.Handle(mcpserver.Path, mcpserver.New(res).Handler(mcpserver.Limits{Limiter: limiter, Addr: limits, MaxBody: maxBody, Origins: mcpOrigins}))
	gql := gqlserver.NewHandler(res)
	gqlError := func(w http.ResponseWriter, r *http.Request, err error) { gqlserver.WriteError(w, nil, err) }
	r.Route("/graphql", func(r chi.Router) {
		r.Use(rest.LimitBody(maxBody, true, gqlError))
		r.Use(rest.Authenticate(res, limits, false, gqlError))
		r.Use(limiter.Middleware(gqlError))
		r.Get("/", gql.ServeHTTP)
		r.Post("/", gql.ServeHTTP)
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD, POST")
			gqlError(w, r, domain.Errorf(rest.CodeMethodNotAllowed, "%s is not allowed on /graphql; send queries with POST (or GET).", r.Method))
		})
	})
	r.Mount("/playground", playground.Handler("/playground", "/graphql")) // GraphiQL, embedded: works offline
	return r
}

// serveProfiler serves Go's profiler on its own address, away from the
// public router, and returns how to stop it.
func serveProfiler(addr string) (func(), error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveAside(addr, "--pprof-addr", mux)
}

// serveAside serves h on a listener of its own at addr, away from the
// public router, and returns how to stop it.
func serveAside(addr, flag string, h http.Handler) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return func() { srv.Close() }, nil
}
