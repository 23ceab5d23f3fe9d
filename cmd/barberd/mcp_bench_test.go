package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/graph/storetest"
)

// BenchmarkNextSlots compares a find_next_slots tool call with the REST
// call it wraps, GET /availability/next, on the same server and data (what
// routes mounts, no rate limit): "rest" is the REST request, "mcp" the tool
// call as one JSON-RPC POST to /mcp, "mcp_client" the same through the SDK's
// client (which also decodes and checks the result). The days are cached
// after the first call, as for a busy chatbot.
//
// Run: go test ./cmd/barberd -run '^$' -bench NextSlots -benchtime 2s
func BenchmarkNextSlots(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			e := newMCPEnv(b, storetest.Open(b, d), serverConfig{})
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
			a := httpAgent(b, e.srv.URL, keyed(e.keys.APIKey, "X-Service-Api-Key", client.Transport))
			s := a.lisbon()
			after := nextWeekday(time.Tuesday) + "T12:00:00"
			args := map[string]any{"unit_id": s.unit, "service_id": s.haircut, "after": after, "limit": 3}
			q := url.Values{"unit_id": {s.unit}, "service_id": {s.haircut}, "after": {after}, "limit": {"3"}}
			restURL := e.srv.URL + "/api/integrations/v1/availability/next?" + q.Encode()
			rpc := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find_next_slots","arguments":{"unit_id":%q,"service_id":%q,"after":%q,"limit":3}}}`, s.unit, s.haircut, after)
			do := func(b *testing.B, req *http.Request) {
				req.Header.Set("X-Service-Api-Key", e.keys.APIKey)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !strings.Contains(string(body), `"starts_at":"`) || strings.Contains(string(body), `"isError":true`) {
					b.Fatalf("%d %s", resp.StatusCode, body)
				}
			}
			b.Run("rest", func(b *testing.B) {
				for b.Loop() {
					req, _ := http.NewRequest("GET", restURL, nil)
					do(b, req)
				}
			})
			b.Run("mcp", func(b *testing.B) {
				for b.Loop() {
					req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(rpc))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					do(b, req)
				}
			})
			// Under load: 16 callers at once, so ns/op is what a call costs
			// of the machine (CPU and database), not how long one waits.
			b.Run("rest_parallel", func(b *testing.B) {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req, _ := http.NewRequest("GET", restURL, nil)
						do(b, req)
					}
				})
			})
			b.Run("mcp_parallel", func(b *testing.B) {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(rpc))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						do(b, req)
					}
				})
			})
			b.Run("mcp_client", func(b *testing.B) {
				for b.Loop() {
					r, err := a.s.CallTool(context.Background(), &mcp.CallToolParams{Name: "find_next_slots", Arguments: args})
					if err != nil || r.IsError {
						b.Fatalf("%v %v", err, r)
					}
				}
			})
		})
	}
}
