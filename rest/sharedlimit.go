package rest

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedLimits keeps the buckets of rate limiters in Redis, so every
// replica pointed at the same Redis and prefix charges one bucket per key
// (or client address). When Redis fails or is slow, limiters fall back to
// their own per-replica buckets and say so in the log and in OnChange; a
// request is never refused because Redis is away. One probe a second looks
// whether Redis is back.
type SharedLimits struct {
	client  *redis.Client
	prefix  string
	timeout time.Duration
	log     *slog.Logger
	// OnChange, when set, is told whether Redis is in use (true) or the
	// limiters are per replica (false), at each change (metrics). Set it
	// before the first request.
	OnChange func(shared bool)
	// OnError, when set, counts every failed Redis call (metrics).
	OnError func()

	down    atomic.Bool
	probing atomic.Bool
	mu      sync.Mutex
	retryAt time.Time
}

// sharedRetry is how long limiters stay per replica after Redis failed
// before one request tries Redis again.
const sharedRetry = time.Second

// DefaultRedisTimeout is how long a limit check waits for Redis before the
// replica decides alone.
const DefaultRedisTimeout = 100 * time.Millisecond

// NewSharedLimits connects to the Redis at url (redis://[:password@]host:port/db
// or rediss://) and keeps its buckets under keys starting with prefix; a
// check Redis has not answered within timeout (0: DefaultRedisTimeout) is
// decided per replica. It does not wait for Redis.
func NewSharedLimits(url, prefix string, timeout time.Duration, log *slog.Logger) (*SharedLimits, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultRedisTimeout
	}
	// A slow Redis must not slow requests down: fail fast and fall back.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 2*timeout, timeout, timeout
	opt.PoolTimeout, opt.MaxRetries, opt.DialerRetries = timeout, -1, 1
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// go-redis logs every failed dial on its own; our log says when Redis
	// goes and comes back, so its lines go to debug.
	redisLogOnce.Do(func() { redis.SetLogger(redisLog{log}) })
	return &SharedLimits{client: redis.NewClient(opt), prefix: prefix, timeout: timeout * 3 / 2, log: log}, nil
}

// Close closes the connections to Redis.
func (s *SharedLimits) Close() error { return s.client.Close() }

// Check asks whether Redis answers, logs and reports (OnChange) whether
// limits are shared from now on, and returns Redis's error.
func (s *SharedLimits) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(time.Second, 2*s.timeout))
	defer cancel()
	if err := s.client.Ping(ctx).Err(); err != nil {
		s.failed(err)
		return err
	}
	s.log.Info("rate limits shared through Redis")
	if s.OnChange != nil {
		s.OnChange(true)
	}
	return nil
}

// tokenBucket charges ARGV[3] calls (0: only look) one after another until
// one is refused, as the per-replica limiter does, to the bucket at KEYS[1]
// of ARGV[1] tokens a second and ARGV[2] at most, with Redis's clock, so
// replicas whose clocks differ agree; it returns whether every call passed
// and the tokens left. An idle bucket expires once it would be full.
var tokenBucket = redis.NewScript(`
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens, ts = tonumber(v[1]), tonumber(v[2])
if tokens == nil or ts == nil then tokens, ts = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
local allowed = 0
if cost == 0 or tokens >= cost then
  allowed = 1
  tokens = tokens - cost
else
  tokens = tokens - math.floor(tokens)
end
if cost > 0 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
end
return {allowed, tostring(tokens)}
`)

// take charges cost calls to the bucket name:key of a limiter and returns the
// tokens left and whether it passed; ok is false when Redis could not be
// asked (the caller then decides per replica).
func (s *SharedLimits) take(name, key string, rate float64, burst, cost int) (tokens float64, allowed, ok bool) {
	if s.down.Load() && !s.tryAgain() {
		return 0, false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	res, err := tokenBucket.Run(ctx, s.client, []string{s.prefix + name + key},
		strconv.FormatFloat(rate, 'g', -1, 64), burst, cost).Slice()
	if err == nil && len(res) == 2 {
		n, _ := res[0].(int64)
		str, _ := res[1].(string)
		if tokens, err = strconv.ParseFloat(str, 64); err == nil {
			s.up()
			return tokens, n == 1, true
		}
	}
	s.failed(err)
	return 0, false, false
}

// tryAgain lets one caller at a time try Redis again once sharedRetry has
// passed since it failed.
func (s *SharedLimits) tryAgain() bool {
	s.mu.Lock()
	due := time.Now().After(s.retryAt)
	s.mu.Unlock()
	return due && s.probing.CompareAndSwap(false, true)
}

func (s *SharedLimits) up() {
	if s.down.Load() {
		s.probing.Store(false)
		if s.down.CompareAndSwap(true, false) {
			s.log.Info("rate limits shared through Redis again")
			if s.OnChange != nil {
				s.OnChange(true)
			}
		}
	}
}

func (s *SharedLimits) failed(err error) {
	if s.OnError != nil {
		s.OnError()
	}
	s.mu.Lock()
	s.retryAt = time.Now().Add(sharedRetry)
	s.mu.Unlock()
	s.probing.Store(false)
	if s.down.CompareAndSwap(false, true) {
		s.log.Warn("Redis unreachable: rate limits are per replica until it answers", "err", errString(err))
		if s.OnChange != nil {
			s.OnChange(false)
		}
	}
}

var redisLogOnce sync.Once

type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

func errString(err error) string {
	if err == nil {
		return "unexpected answer"
	}
	return err.Error()
}
