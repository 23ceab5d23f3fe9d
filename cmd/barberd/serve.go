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
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/cmd/barberd/playground"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/rest"
)

// serverConfig holds the settings of serve and demo.
type serverConfig struct {
	addr            string
	readTimeout     time.Duration
	writeTimeout    time.Duration
	idleTimeout     time.Duration
	shutdownTimeout time.Duration
	jobsInterval    time.Duration // 0: no background jobs
	reminderLead    time.Duration
	rateLimit       float64 // requests a second per API key on each replica; 0: no limit
	rateBurst       int
	pprofAddr       string // "": no profiling endpoint
	cacheMB         int    // availability cache
	memoryLimitMB   int    // soft limit for the Go runtime; 0: none
	freshness       time.Duration
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, demo bool) error {
	name := "serve"
	if demo {
		name = "demo"
	}
	fs, f := newFlagSet(name, stderr)
	var c serverConfig
	fs.StringVar(&c.addr, "addr", envOr("BARBERD_ADDR", ":8080"), "listen address (env BARBERD_ADDR)")
	for _, d := range []struct {
		v         *time.Duration
		flag, env string
		def       time.Duration
		usage     string
	}{
		{&c.readTimeout, "read-timeout", "BARBERD_READ_TIMEOUT", 15 * time.Second, "longest time to read a request"},
		{&c.writeTimeout, "write-timeout", "BARBERD_WRITE_TIMEOUT", 30 * time.Second, "longest time to write a response"},
		{&c.idleTimeout, "idle-timeout", "BARBERD_IDLE_TIMEOUT", 120 * time.Second, "how long an idle keep-alive connection stays open"},
		{&c.shutdownTimeout, "shutdown-timeout", "BARBERD_SHUTDOWN_TIMEOUT", 20 * time.Second, "how long a stop waits for requests in flight"},
		{&c.freshness, "freshness-window", "BARBERD_FRESHNESS_WINDOW", graph.DefaultFreshnessWindow, "how long a check of the database's change versions answers for cached keys, catalogs and availability; writes through barberd wait this long before they answer, so every replica's next answer shows them; changes written straight to SQL show within it; 0: every cached answer is checked after its request arrived, and writes do not wait (at most 1s)"},
	} {
		def, err := envDuration(d.env, d.def)
		if err != nil {
			return err
		}
		fs.DurationVar(d.v, d.flag, def, d.usage+" (env "+d.env+")")
	}
	rateLimit, err := envFloat("BARBERD_RATE_LIMIT", 20)
	if err != nil {
		return err
	}
	rateBurst, err := envInt("BARBERD_RATE_BURST", 40)
	if err != nil {
		return err
	}
	fs.Float64Var(&c.rateLimit, "rate-limit", rateLimit, "requests a second each API key may make, sustained, on each replica (N replicas allow N times as many); 0 disables the limit (env BARBERD_RATE_LIMIT)")
	fs.IntVar(&c.rateBurst, "rate-burst", rateBurst, "requests an API key may make at once before --rate-limit applies (env BARBERD_RATE_BURST)")
	jobsInterval, err := envDuration("BARBERD_JOBS_INTERVAL", 15*time.Second)
	if err != nil {
		return err
	}
	reminderLead, err := envDuration("BARBERD_REMINDER_LEAD", 24*time.Hour)
	if err != nil {
		return err
	}
	fs.DurationVar(&c.jobsInterval, "jobs-interval", jobsInterval, "how often background jobs (expiring holds, reminders) run; 0 disables them (env BARBERD_JOBS_INTERVAL)")
	fs.DurationVar(&c.reminderLead, "reminder-lead", reminderLead, "how long before an appointment its reminder notification is written (env BARBERD_REMINDER_LEAD)")
	cacheMB, err := envInt("BARBERD_AVAILABILITY_CACHE_MB", graph.DefaultAvailabilityCacheBytes>>20)
	if err != nil {
		return err
	}
	memoryLimitMB, err := envInt("BARBERD_MEMORY_LIMIT_MB", 100)
	if err != nil {
		return err
	}
	fs.IntVar(&c.cacheMB, "availability-cache-mb", cacheMB, "memory for cached availability answers, in MB (env BARBERD_AVAILABILITY_CACHE_MB)")
	fs.IntVar(&c.memoryLimitMB, "memory-limit-mb", memoryLimitMB, "soft memory limit of the process in MB: above it the garbage collector works harder; 0: none; GOMEMLIMIT, when set, wins (env BARBERD_MEMORY_LIMIT_MB)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", os.Getenv("BARBERD_PPROF_ADDR"), "serve Go's profiler (/debug/pprof/) on this separate address, e.g. 127.0.0.1:6060; empty: off (env BARBERD_PPROF_ADDR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.jobsInterval < 0 || c.reminderLead < 0 {
		return errors.New("--jobs-interval and --reminder-lead must not be negative")
	}
	if c.rateLimit < 0 || c.rateBurst < 1 {
		return errors.New("--rate-limit must not be negative and --rate-burst must be at least 1")
	}
	if c.cacheMB < 1 || c.memoryLimitMB < 0 {
		return errors.New("--availability-cache-mb must be at least 1 and --memory-limit-mb not negative")
	}
	if c.freshness < 0 || c.freshness > time.Second {
		return errors.New("--freshness-window must be between 0 and 1s")
	}
	if c.memoryLimitMB > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(c.memoryLimitMB) << 20)
	}
	res, db, err := f.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	res.AvailabilityCacheBytes = c.cacheMB << 20
	res.FreshnessWindow = c.freshness
	if c.pprofAddr != "" {
		stop, err := serveProfiler(c.pprofAddr)
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
	return serve(ctx, ln, c, res, db)
}

// introduceDemo seeds the demo account when the database has none and
// prints a working key with a first command to try. On later starts a
// fresh key is made for the same account: secrets are stored only hashed.
func introduceDemo(ctx context.Context, res *graph.Resolver, stdout io.Writer, addr net.Addr) error {
	accountID, err := res.DemoAccount(ctx)
	if err != nil {
		return err
	}
	var key, admin string
	if accountID == "" {
		keys, err := res.SeedDemo(ctx)
		if err != nil {
			return err
		}
		accountID, key, admin = keys.AccountID, keys.APIKey, keys.AdminAPIKey
	} else if key, _, err = res.CreateAPIKey(ctx, accountID, "Demo chatbot", graph.BookingScopes); err != nil {
		return err
	}
	base := "http://localhost" + portOf(addr)
	fmt.Fprintf(stdout, "barberd demo account %s\n\n", accountID)
	fmt.Fprintf(stdout, "API key (booking scopes): %s\n", key)
	if admin != "" {
		fmt.Fprintf(stdout, "Admin API key (GraphQL):  %s\n", admin)
	}
	fmt.Fprintf(stdout, "\nTry:\n  curl -H 'X-Service-Api-Key: %s' %s%s/units\n\n", key, base, rest.BasePath)
	fmt.Fprintf(stdout, "GraphQL playground: %s/playground  (send the key in header X-Service-Api-Key)\n\n", base)
	return nil
}

// envSetting reads a setting from the environment with parse, or returns
// def when the variable is unset.
func envSetting[T any](key string, def T, parse func(string) (T, error)) (T, error) {
	v, ok := os.LookupEnv(key)
	if !ok || v == "" {
		return def, nil
	}
	x, err := parse(v)
	if err != nil {
		return def, fmt.Errorf("%s: %w", key, err)
	}
	return x, nil
}

func envDuration(key string, def time.Duration) (time.Duration, error) {
	return envSetting(key, def, time.ParseDuration)
}

func envFloat(key string, def float64) (float64, error) {
	return envSetting(key, def, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
}

func envInt(key string, def int) (int, error) { return envSetting(key, def, strconv.Atoi) }

func portOf(addr net.Addr) string {
	s := addr.String()
	return s[strings.LastIndex(s, ":"):]
}

// serve runs the HTTP server (and the background jobs) on ln until ctx
// ends, then drains requests in flight for up to the shutdown timeout.
func serve(ctx context.Context, ln net.Listener, c serverConfig, res *graph.Resolver, db *store.DB) error {
	metrics := rest.NewMetrics(db.SQL)
	res.Metrics = metrics // before the jobs start: they count too
	jobsCtx, stopJobs := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer jobs.Wait()
	defer stopJobs()
	if c.jobsInterval > 0 {
		jobs.Go(func() { res.RunJobs(jobsCtx, c.jobsInterval, c.reminderLead) })
	}
	srv := &http.Server{
		Handler:           routes(res, db, c, metrics),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       c.readTimeout,
		WriteTimeout:      c.writeTimeout,
		IdleTimeout:       c.idleTimeout,
		ErrorLog:          slog.NewLogLogger(res.Log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	res.Log.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	res.Log.Info("shutting down", "timeout", c.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	res.Log.Info("stopped")
	return nil
}

// newRouter assembles every route of the server, without a rate limit.
func newRouter(res *graph.Resolver, db *store.DB) http.Handler {
	return routes(res, db, serverConfig{}, rest.NewMetrics(db.SQL))
}

// routes assembles every route of the server. /metrics needs no API key:
// expose it only on an internal network.
func routes(res *graph.Resolver, db *store.DB, c serverConfig, metrics *rest.Metrics) http.Handler {
	limiter := rest.NewRateLimiter(c.rateLimit, c.rateBurst) // nil when disabled
	if limiter != nil {
		limiter.OnLimited = metrics.RateLimited
	}
	r := chi.NewRouter()
	r.Use(metrics.Middleware) // first: it sees the 500 of a recovered panic
	r.Use(rest.Middleware(res.Log)...)
	r.NotFound(rest.New(res, rest.WithRateLimiter(limiter)).ServeHTTP) // unknown routes get a problem+json 404
	r.Handle("/metrics", metrics.Handler())
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	r.Get("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := db.Ping(ctx); err != nil {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "database unreachable\n")
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	r.Mount(rest.BasePath, rest.New(res, rest.WithRateLimiter(limiter)))
	gql := graph.NewHandler(res)
	gqlError := func(w http.ResponseWriter, r *http.Request, err error) { writeGraphQLError(w, err) }
	r.Handle("/graphql", rest.Authenticate(res, false, gqlError)(limiter.Middleware(gqlError)(gql)))
	r.Mount("/playground", playground.Handler("/playground", "/graphql")) // GraphiQL, embedded: works offline
	return r
}

// serveProfiler serves Go's profiler on its own address, away from the
// public router, and returns how to stop it.
func serveProfiler(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return func() { srv.Close() }, nil
}
