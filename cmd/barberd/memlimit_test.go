package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// barberd's memory limit, and the collection under it, give way to the
// runtime's own settings when they are in the environment.
func TestApplyMemoryLimit(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	for _, c := range []struct {
		name        string
		mb          int
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{"default", 100, nil, gcPercentUnderLimit, 100 << 20},
		{"no limit", 0, nil, 100, math.MaxInt64},
		{"GOGC set", 100, map[string]string{"GOGC": "150"}, 100, 100 << 20},
		{"GOMEMLIMIT set", 100, map[string]string{"GOMEMLIMIT": "1GiB"}, 100, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			applyMemoryLimit(c.mb, func(k string) string { return c.env[k] })
			if got := debug.SetGCPercent(100); got != c.wantPercent {
				t.Errorf("GC percent %d, want %d", got, c.wantPercent)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != c.wantLimit {
				t.Errorf("memory limit %d, want %d", got, c.wantLimit)
			}
		})
	}
}
