package rest

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// AllowCalls is allowCalls, for package rest_test.
func (l *RateLimiter) AllowCalls(ctx context.Context, key string) Decision {
	return l.allowCalls(ctx, key)
}

// CountCommands adds to n every command s sends Redis.
func (s *SharedLimits) CountCommands(n *atomic.Int64) { s.client.AddHook(commandCounter{n}) }

type commandCounter struct{ n *atomic.Int64 }

func (c commandCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c commandCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c commandCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
