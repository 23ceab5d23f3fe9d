package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"barberd/cmd/barberd/playground"
	"barberd/demo"
	"barberd/graph"
	"barberd/graph/gqlserver"
	"barberd/graph/store"
	"barberd/mcpserver"
	"barberd/rest"
	"barberd/webhook"
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
	retention       time.Duration // 0: nothing is pruned
	rateLimit       float64       // requests a second per API key on each replica; 0: no limit
	rateBurst       int
	pprofAddr       string // "": no profiling endpoint
	metricsAddr     string // "": /metrics on the API listener
	drainDelay      time.Duration
	maxBody         int64
	anonRate        float64 // requests a second without a key, per client address
	anonBurst       int
	failRate        float64 // failed authentications a second, per client address
	failBurst       int
	trustedProxies  string
	mcpOrigins      string // comma-separated Origin headers /mcp accepts; "": none
	holdsPerKey     int
	maxSlots        int // slots one availability answer or next search may list or compute
	cacheMB         int // availability cache
	memoryLimitMB   int // soft limit for the Go runtime; 0: none
	freshness       time.Duration
	webhooks        webhook.Settings // Resolver, Log and Metrics are set by serve
	redisURL        string           // "": limits per replica
	redisPrefix     string
	redisTimeout    time.Duration
	shared          *rest.SharedLimits // set by serveCmd from redisURL
}

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer, demo bool) error {
	name := "serve"
	if demo {
		name = "demo"
	}
	about := `Runs the server: REST v1 for chatbots under /api/integrations/v1, GraphQL for dashboards at
/graphql (playground at /playground), MCP at /mcp, signed webhooks, background jobs.
It migrates the database first.`
	if demo {
		about = `Runs the server (as serve) on a demo account: seeds one when the database has none, prints a
booking key and an admin key (fresh ones at every start), and a first command to try.`
	}
	fs, f := newFlagSet(name, name+" [flags]", about, stderr)
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
		{&c.drainDelay, "drain-delay", "BARBERD_DRAIN_DELAY", time.Second, "on SIGTERM, how long open keep-alive connections may still bring a request (answered with Connection: close) while /readyz says 503, before the server stops; new connections are refused at once"},
		{&c.webhooks.Timeout, "webhook-timeout", "BARBERD_WEBHOOK_TIMEOUT", 10 * time.Second, "longest time a webhook request may take, from connecting to the end of the answer; after it the delivery is retried"},
		{&c.webhooks.Lease, "webhook-lease", "BARBERD_WEBHOOK_LEASE", 30 * time.Second, "how long a replica's claim on a webhook endpoint lasts unless renewed: a replica that dies mid-delivery delays that endpoint's deliveries by up to this long"},
		{&c.redisTimeout, "redis-timeout", "BARBERD_REDIS_TIMEOUT", rest.DefaultRedisTimeout, "how long a rate limit check waits for Redis (--redis-url) before this replica decides alone"},
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
	if err := addrLimitFlags(fs, &c); err != nil {
		return err
	}
	maxBody, err := envInt("BARBERD_MAX_BODY_BYTES", rest.DefaultMaxBody)
	if err != nil {
		return err
	}
	fs.Int64Var(&c.maxBody, "max-body-bytes", int64(maxBody), "largest request body of REST and GraphQL, in bytes; larger ones get 413 payload_too_large (env BARBERD_MAX_BODY_BYTES)")
	holdsPerKey, err := envInt("BARBERD_MAX_HOLDS_PER_KEY", graph.DefaultLimits.ActiveHoldsPerKey)
	if err != nil {
		return err
	}
	maxSlots, err := envInt("BARBERD_MAX_SLOTS", graph.DefaultMaxSlots)
	if err != nil {
		return err
	}
	fs.IntVar(&c.maxSlots, "max-slots", maxSlots, "most slots one availability answer may list, and one search for the next free times may compute (about a second of CPU per 100,000 on a large unit); larger requests get 400 validation_failed naming what to narrow (fewer days, one barber); MCP's get_availability answers stay under 1 MiB whatever this says (env BARBERD_MAX_SLOTS)")
	fs.IntVar(&c.holdsPerKey, "max-holds-per-key", holdsPerKey, "most holds an API key without a cap of its own (apikey create --max-holds, GraphQL updateApiKey) may have active at once; past it a hold gets 429 too_many_holds; 0: no cap (env BARBERD_MAX_HOLDS_PER_KEY)")
	fs.StringVar(&c.mcpOrigins, "mcp-allowed-origins", os.Getenv("BARBERD_MCP_ALLOWED_ORIGINS"), "web origins (e.g. https://agents.example.com) whose pages may call /mcp from a browser, comma-separated; a request with any other Origin header gets 403 origin_not_allowed, one without Origin (desktop and server clients) is served; empty: no browser page (env BARBERD_MCP_ALLOWED_ORIGINS)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", os.Getenv("BARBERD_METRICS_ADDR"), "serve /metrics on this separate address (e.g. 127.0.0.1:9090) instead of on --addr; empty: /metrics is on --addr (env BARBERD_METRICS_ADDR)")
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
	retention, err := envDuration("BARBERD_RETENTION", graph.DefaultRetention)
	if err != nil {
		return err
	}
	fs.DurationVar(&c.retention, "retention", retention, "how long notifications (with their feed rows, webhook deliveries and attempts) and ended holds are kept before the background jobs delete them; 0: kept for ever (env BARBERD_RETENTION)")
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
	allowPrivate, err := envSetting("BARBERD_WEBHOOK_ALLOW_PRIVATE", false, strconv.ParseBool)
	if err != nil {
		return err
	}
	fs.BoolVar(&c.webhooks.AllowPrivate, "webhook-allow-private", allowPrivate, "let webhook endpoints be plain http and loopback, private or link-local addresses: for development and tests, never in production (env BARBERD_WEBHOOK_ALLOW_PRIVATE)")
	senders, err := envInt("BARBERD_WEBHOOK_SENDERS", 16)
	if err != nil {
		return err
	}
	perAccount, err := envInt("BARBERD_WEBHOOK_SENDERS_PER_ACCOUNT", 4)
	if err != nil {
		return err
	}
	fs.IntVar(&c.webhooks.Endpoints, "webhook-senders", senders, "how many webhook endpoints each replica sends to at once (env BARBERD_WEBHOOK_SENDERS)")
	fs.IntVar(&c.webhooks.PerAccount, "webhook-senders-per-account", perAccount, "how many of those senders one account's endpoints may hold at once, so that one account's slow or failing receivers cannot delay the others' (env BARBERD_WEBHOOK_SENDERS_PER_ACCOUNT)")
	fs.StringVar(&c.redisURL, "redis-url", os.Getenv("BARBERD_REDIS_URL"), "share the per-key rate limits and the per-address limits with every replica through this Redis, e.g. redis://127.0.0.1:6379/0 (redis://[:password@]host:port/db, rediss:// for TLS); while it does not answer, each replica limits alone; empty: each replica limits alone (env BARBERD_REDIS_URL)")
	fs.StringVar(&c.redisPrefix, "redis-prefix", envOr("BARBERD_REDIS_PREFIX", "barberd:ratelimit:"), "prefix of barberd's keys in Redis: replicas sharing limits need the same one, other deployments on the same Redis another (env BARBERD_REDIS_PREFIX)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", os.Getenv("BARBERD_PPROF_ADDR"), "serve Go's profiler (/debug/pprof/) on this separate address, e.g. 127.0.0.1:6060; empty: off (env BARBERD_PPROF_ADDR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.jobsInterval < 0 || c.reminderLead < 0 {
		return errors.New("--jobs-interval and --reminder-lead must not be negative")
	}
	if c.retention != 0 && c.retention < graph.MinRetention {
		return fmt.Errorf("--retention must be 0 (keep everything) or at least %s, past webhooks' retries", graph.MinRetention)
	}
	if c.rateLimit < 0 || c.rateBurst < 1 || c.anonRate < 0 || c.anonBurst < 1 || c.failRate < 0 || c.failBurst < 1 {
		return errors.New("rate limits must not be negative and bursts must be at least 1")
	}
	if c.maxBody < 1024 || c.drainDelay < 0 || c.holdsPerKey < 0 {
		return errors.New("--max-body-bytes must be at least 1024, and --drain-delay and --max-holds-per-key not negative")
	}
	if c.maxSlots < 1000 {
		return errors.New("--max-slots must be at least 1000")
	}
	if _, err := rest.NewClientAddr(c.trustedProxies); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if _, err := origins(c.mcpOrigins); err != nil {
		return fmt.Errorf("--mcp-allowed-origins: %w", err)
	}
	if c.cacheMB < 1 || c.memoryLimitMB < 0 {
		return errors.New("--availability-cache-mb must be at least 1 and --memory-limit-mb not negative")
	}
	if c.webhooks.Timeout <= 0 || c.webhooks.Lease < time.Second {
		return errors.New("--webhook-timeout must be positive and --webhook-lease at least 1s")
	}
	if c.webhooks.Endpoints < 1 || c.webhooks.PerAccount < 1 || c.webhooks.PerAccount > c.webhooks.Endpoints {
		return errors.New("--webhook-senders must be at least 1, and --webhook-senders-per-account between 1 and --webhook-senders")
	}
	if c.freshness < 0 || c.freshness > time.Second {
		return errors.New("--freshness-window must be between 0 and 1s")
	}
	if c.memoryLimitMB > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(c.memoryLimitMB) << 20)
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

// addrLimitFlags defines the flags of the limits kept per client address.
func addrLimitFlags(fs *flag.FlagSet, c *serverConfig) error {
	for _, d := range []struct {
		rate      *float64
		burst     *int
		flag, env string
		defRate   float64
		defBurst  int
		what      string
	}{
		{&c.anonRate, &c.anonBurst, "anonymous-rate", "BARBERD_ANONYMOUS_RATE", 2, 20, "GraphQL requests without an API key (introspection for the playground)"},
		{&c.failRate, &c.failBurst, "auth-failure-rate", "BARBERD_AUTH_FAILURE_RATE", 1, 10, "requests with a missing or wrong API key; past it, such an address is refused before its key is looked up"},
	} {
		rate, err := envFloat(d.env+"_LIMIT", d.defRate)
		if err != nil {
			return err
		}
		burst, err := envInt(d.env+"_BURST", d.defBurst)
		if err != nil {
			return err
		}
		fs.Float64Var(d.rate, d.flag+"-limit", rate, "a second, sustained, each client address may make "+d.what+", on each replica; 0 disables the limit (env "+d.env+"_LIMIT)")
		fs.IntVar(d.burst, d.flag+"-burst", burst, "how many of those an address may make at once (env "+d.env+"_BURST)")
	}
	fs.StringVar(&c.trustedProxies, "trusted-proxies", os.Getenv("BARBERD_TRUSTED_PROXIES"), "load balancers in front of barberd, as comma-separated addresses or CIDR prefixes: behind them the client address is read from X-Forwarded-For; empty: the connection's peer is the client (env BARBERD_TRUSTED_PROXIES)")
	return nil
}

// origins reads a comma-separated list of web origins, each a scheme and
// host (and port) as a browser sends them in Origin: no path, no slash.
func origins(list string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(list, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%q is not an origin like https://agents.example.com", o)
		}
		out = append(out, o)
	}
	return out, nil
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
		if key, _, err = res.CreateAPIKey(ctx, accountID, "Demo chatbot", graph.BookingScopes); err != nil {
			return err
		}
		if admin, _, err = res.CreateAPIKey(ctx, accountID, "Demo dashboard", graph.AllScopes); err != nil {
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
	r.Use(rest.Middleware(res.Settings().Log)...)
	r.Use(rest.Deadline(c.writeTimeout))
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
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusServiceUnavailable)
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
	gqlError := func(w http.ResponseWriter, r *http.Request, err error) { writeGraphQLError(w, err) }
	r.Route("/graphql", func(r chi.Router) {
		r.Use(rest.LimitBody(maxBody, true, gqlError))
		r.Use(rest.Authenticate(res, limits, false, gqlError))
		r.Use(limiter.Middleware(gqlError))
		r.Get("/", gql.ServeHTTP)
		r.Post("/", gql.ServeHTTP)
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD, POST")
			gqlError(w, r, graph.Errorf(rest.CodeMethodNotAllowed, "%s is not allowed on /graphql; send queries with POST (or GET).", r.Method))
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
