package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"barberd/graph"
	"barberd/graph/quota"
	"barberd/graph/waitlist"
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
	waitlistPerKey  int
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

// parseServerConfig reads the settings of serve (demo: of demo) from args
// and the environment, and checks them.
func parseServerConfig(args []string, stderr io.Writer, demo bool) (serverConfig, *dbFlags, error) {
	name := "serve"
	if demo {
		name = "demo"
	}
	about := `Runs the server: REST v1 for chatbots under /api/integrations/v1, GraphQL for dashboards at
/graphql (playground at /playground), MCP at /mcp, signed webhooks, background jobs.
It applies the database's pending schema migrations first (--migrate=false: only checks).`
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
			return c, nil, err
		}
		fs.DurationVar(d.v, d.flag, def, d.usage+" (env "+d.env+")")
	}
	rateLimit, err := envFloat("BARBERD_RATE_LIMIT", 20)
	if err != nil {
		return c, nil, err
	}
	rateBurst, err := envInt("BARBERD_RATE_BURST", 40)
	if err != nil {
		return c, nil, err
	}
	if err := addrLimitFlags(fs, &c); err != nil {
		return c, nil, err
	}
	maxBody, err := envInt("BARBERD_MAX_BODY_BYTES", rest.DefaultMaxBody)
	if err != nil {
		return c, nil, err
	}
	fs.Int64Var(&c.maxBody, "max-body-bytes", int64(maxBody), "largest request body of REST and GraphQL, in bytes; larger ones get 413 payload_too_large (env BARBERD_MAX_BODY_BYTES)")
	holdsPerKey, err := envInt("BARBERD_MAX_HOLDS_PER_KEY", graph.DefaultLimits.ActiveHoldsPerKey)
	if err != nil {
		return c, nil, err
	}
	waitlistPerKey, err := envInt("BARBERD_MAX_WAITLIST_PER_KEY", waitlist.DefaultPerKey)
	if err != nil {
		return c, nil, err
	}
	fs.IntVar(&c.waitlistPerKey, "max-waitlist-per-key", waitlistPerKey, "most waiting waitlist entries an API key may have at once; past it a join gets 429 too_many_waitlist_entries; 0: no cap (env BARBERD_MAX_WAITLIST_PER_KEY)")
	maxSlots, err := envInt("BARBERD_MAX_SLOTS", quota.DefaultMaxSlots)
	if err != nil {
		return c, nil, err
	}
	fs.IntVar(&c.maxSlots, "max-slots", maxSlots, "most slots one availability answer may list, and one search for the next free times may compute (about a second of CPU per 100,000 on a large unit); larger requests get 400 validation_failed naming what to narrow (fewer days, one barber); MCP's get_availability answers stay under 1 MiB whatever this says (env BARBERD_MAX_SLOTS)")
	fs.IntVar(&c.holdsPerKey, "max-holds-per-key", holdsPerKey, "most holds an API key without a cap of its own (apikey create --max-holds, GraphQL updateApiKey) may have active at once; past it a hold gets 429 too_many_holds; 0: no cap (env BARBERD_MAX_HOLDS_PER_KEY)")
	fs.StringVar(&c.mcpOrigins, "mcp-allowed-origins", os.Getenv("BARBERD_MCP_ALLOWED_ORIGINS"), "web origins (e.g. https://agents.example.com) whose pages may call /mcp from a browser, comma-separated; a request with any other Origin header gets 403 origin_not_allowed, one without Origin (desktop and server clients) is served; empty: no browser page (env BARBERD_MCP_ALLOWED_ORIGINS)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", os.Getenv("BARBERD_METRICS_ADDR"), "serve /metrics on this separate address (e.g. 127.0.0.1:9090) instead of on --addr; empty: /metrics is on --addr (env BARBERD_METRICS_ADDR)")
	fs.Float64Var(&c.rateLimit, "rate-limit", rateLimit, "requests a second each API key may make, sustained, on each replica (N replicas allow N times as many); 0 disables the limit (env BARBERD_RATE_LIMIT)")
	fs.IntVar(&c.rateBurst, "rate-burst", rateBurst, "requests an API key may make at once before --rate-limit applies (env BARBERD_RATE_BURST)")
	jobsInterval, err := envDuration("BARBERD_JOBS_INTERVAL", 15*time.Second)
	if err != nil {
		return c, nil, err
	}
	reminderLead, err := envDuration("BARBERD_REMINDER_LEAD", 24*time.Hour)
	if err != nil {
		return c, nil, err
	}
	fs.DurationVar(&c.jobsInterval, "jobs-interval", jobsInterval, "how often background jobs (reminders, pruning) run; expired holds are freed every second, or this often if shorter; 0 disables them all (env BARBERD_JOBS_INTERVAL)")
	retention, err := envDuration("BARBERD_RETENTION", graph.DefaultRetention)
	if err != nil {
		return c, nil, err
	}
	fs.DurationVar(&c.retention, "retention", retention, "how long notifications (with their feed rows, webhook deliveries and attempts) and ended holds are kept before the background jobs delete them; 0: kept for ever (env BARBERD_RETENTION)")
	fs.DurationVar(&c.reminderLead, "reminder-lead", reminderLead, "how long before an appointment its reminder notification is written (env BARBERD_REMINDER_LEAD)")
	cacheMB, err := envInt("BARBERD_AVAILABILITY_CACHE_MB", graph.DefaultAvailabilityCacheBytes>>20)
	if err != nil {
		return c, nil, err
	}
	memoryLimitMB, err := envInt("BARBERD_MEMORY_LIMIT_MB", 100)
	if err != nil {
		return c, nil, err
	}
	fs.IntVar(&c.cacheMB, "availability-cache-mb", cacheMB, "memory for cached availability answers, in MB (env BARBERD_AVAILABILITY_CACHE_MB)")
	fs.IntVar(&c.memoryLimitMB, "memory-limit-mb", memoryLimitMB, "soft memory limit of the process in MB: above it the garbage collector works harder, below it it runs when the heap has grown to five times what is live (GOGC=400); 0: none, and Go's default collection; GOMEMLIMIT and GOGC, when set, win (env BARBERD_MEMORY_LIMIT_MB)")
	allowPrivate, err := envSetting("BARBERD_WEBHOOK_ALLOW_PRIVATE", false, strconv.ParseBool)
	if err != nil {
		return c, nil, err
	}
	fs.BoolVar(&c.webhooks.AllowPrivate, "webhook-allow-private", allowPrivate, "let webhook endpoints be plain http and loopback, private or link-local addresses: for development and tests, never in production (env BARBERD_WEBHOOK_ALLOW_PRIVATE)")
	senders, err := envInt("BARBERD_WEBHOOK_SENDERS", 16)
	if err != nil {
		return c, nil, err
	}
	perAccount, err := envInt("BARBERD_WEBHOOK_SENDERS_PER_ACCOUNT", 4)
	if err != nil {
		return c, nil, err
	}
	fs.IntVar(&c.webhooks.Endpoints, "webhook-senders", senders, "how many webhook endpoints each replica sends to at once (env BARBERD_WEBHOOK_SENDERS)")
	fs.IntVar(&c.webhooks.PerAccount, "webhook-senders-per-account", perAccount, "how many of those senders one account's endpoints may hold at once, so that one account's slow or failing receivers cannot delay the others' (env BARBERD_WEBHOOK_SENDERS_PER_ACCOUNT)")
	fs.StringVar(&c.redisURL, "redis-url", os.Getenv("BARBERD_REDIS_URL"), "share the per-key rate limits and the per-address limits with every replica through this Redis, e.g. redis://127.0.0.1:6379/0 (redis://[:password@]host:port/db, rediss:// for TLS); while it does not answer, each replica limits alone; empty: each replica limits alone (env BARBERD_REDIS_URL)")
	fs.StringVar(&c.redisPrefix, "redis-prefix", envOr("BARBERD_REDIS_PREFIX", "barberd:ratelimit:"), "prefix of barberd's keys in Redis: replicas sharing limits need the same one, other deployments on the same Redis another (env BARBERD_REDIS_PREFIX)")
	fs.StringVar(&c.pprofAddr, "pprof-addr", os.Getenv("BARBERD_PPROF_ADDR"), "serve Go's profiler (/debug/pprof/) on this separate address, e.g. 127.0.0.1:6060; empty: off (env BARBERD_PPROF_ADDR)")
	migrate, err := envSetting("BARBERD_MIGRATE", true, strconv.ParseBool)
	if err != nil {
		return c, nil, err
	}
	fs.BoolVar(&migrate, "migrate", migrate, "apply the database's pending schema migrations at start, under a lock (replicas starting at once apply each once); false: only check that the schema is this barberd's and refuse to start otherwise (run barberd migrate first) (env BARBERD_MIGRATE)")
	if err := fs.Parse(args); err != nil {
		return c, nil, err
	}
	f.checkOnly = !migrate
	if c.jobsInterval < 0 || c.reminderLead < 0 {
		return c, nil, errors.New("--jobs-interval and --reminder-lead must not be negative")
	}
	if c.retention != 0 && c.retention < graph.MinRetention {
		return c, nil, fmt.Errorf("--retention must be 0 (keep everything) or at least %s, past webhooks' retries", graph.MinRetention)
	}
	if c.rateLimit < 0 || c.rateBurst < 1 || c.anonRate < 0 || c.anonBurst < 1 || c.failRate < 0 || c.failBurst < 1 {
		return c, nil, errors.New("rate limits must not be negative and bursts must be at least 1")
	}
	if c.maxBody < 1024 || c.drainDelay < 0 || c.holdsPerKey < 0 || c.waitlistPerKey < 0 {
		return c, nil, errors.New("--max-body-bytes must be at least 1024, and --drain-delay, --max-holds-per-key and --max-waitlist-per-key not negative")
	}
	if c.maxSlots < 1000 {
		return c, nil, errors.New("--max-slots must be at least 1000")
	}
	if _, err := rest.NewClientAddr(c.trustedProxies); err != nil {
		return c, nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	if _, err := origins(c.mcpOrigins); err != nil {
		return c, nil, fmt.Errorf("--mcp-allowed-origins: %w", err)
	}
	if c.cacheMB < 1 || c.memoryLimitMB < 0 {
		return c, nil, errors.New("--availability-cache-mb must be at least 1 and --memory-limit-mb not negative")
	}
	if c.webhooks.Timeout <= 0 || c.webhooks.Lease < time.Second {
		return c, nil, errors.New("--webhook-timeout must be positive and --webhook-lease at least 1s")
	}
	if c.webhooks.Endpoints < 1 || c.webhooks.PerAccount < 1 || c.webhooks.PerAccount > c.webhooks.Endpoints {
		return c, nil, errors.New("--webhook-senders must be at least 1, and --webhook-senders-per-account between 1 and --webhook-senders")
	}
	if c.freshness < 0 || c.freshness > time.Second {
		return c, nil, errors.New("--freshness-window must be between 0 and 1s")
	}
	applyMemoryLimit(c.memoryLimitMB, os.Getenv)
	return c, f, nil
}

// gcPercentUnderLimit is how far the heap grows past what is live before
// Go's garbage collector runs, while barberd's memory limit bounds it (a
// GOGC of 400, where Go's default is 100). The limit is the memory
// budget; collecting whenever the heap doubled cost about a tenth of
// barberd's CPU on a booking (docs/performance.md).
const gcPercentUnderLimit = 400

// applyMemoryLimit sets the runtime's soft memory limit to mb (none for
// 0), and under it collects at gcPercentUnderLimit; GOMEMLIMIT and GOGC,
// when set, win.
func applyMemoryLimit(mb int, getenv func(string) string) {
	if mb <= 0 || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(int64(mb) << 20)
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercentUnderLimit)
	}
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
