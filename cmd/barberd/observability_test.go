package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest"
)

// TestServeHelp: serve --help lists every flag with its environment
// variable, the rate limit among them.
func TestServeHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	help := stderr.String()
	flagLine := regexp.MustCompile(`(?m)^  -(\S+)`)
	flags := flagLine.FindAllStringSubmatch(help, -1)
	if len(flags) < 11 {
		t.Fatalf("%d flags listed:\n%s", len(flags), help)
	}
	// Each flag's usage runs until the next flag line.
	blocks := flagLine.Split(help, -1)[1:]
	for i, f := range flags {
		if !regexp.MustCompile(`\(env [A-Z_]+\)`).MatchString(blocks[i]) {
			t.Errorf("--%s lists no environment variable: %q", f[1], blocks[i])
		}
	}
	for _, want := range []string{"-rate-limit", "BARBERD_RATE_LIMIT", "(default 20)", "-rate-burst", "BARBERD_RATE_BURST", "(default 40)"} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}

// TestEnvRateLimit: the environment sets the defaults; a bad value is an
// error.
func TestEnvRateLimit(t *testing.T) {
	t.Setenv("BARBERD_RATE_LIMIT", "2.5")
	if v, err := envFloat("BARBERD_RATE_LIMIT", 20); err != nil || v != 2.5 {
		t.Fatalf("envFloat = %v, %v", v, err)
	}
	t.Setenv("BARBERD_RATE_BURST", "x")
	if _, err := envInt("BARBERD_RATE_BURST", 40); err == nil {
		t.Fatal("envInt accepted x")
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--rate-burst", "5"}, io.Discard, &stderr); code == 0 || !strings.Contains(stderr.String(), "BARBERD_RATE_BURST") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

// TestRouterRateLimitAndMetrics: the server's router limits GraphQL per key
// too (429 in GraphQL's form, after authentication), and serves /metrics
// without a key.
func TestRouterRateLimitAndMetrics(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		metrics := rest.NewMetrics(db.SQL)
		res := graph.New(graph.Settings{DB: db, Metrics: metrics})
		keys, err := demo.Seed(context.Background(), res)
		if err != nil {
			t.Fatal(err)
		}
		// Two at once, then one every 100 s: the test never sees a refill.
		srv := httptest.NewServer(routes(res, db, serverConfig{rateLimit: 0.01, rateBurst: 2}, metrics, nil))
		t.Cleanup(srv.Close)

		gql := func(key string) (*http.Response, map[string]any) {
			t.Helper()
			req, _ := http.NewRequest("POST", srv.URL+"/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("X-Service-Api-Key", key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			return resp, body
		}
		for i := range 2 {
			resp, _ := gql(keys.AdminAPIKey)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit-Limit") != "2" {
				t.Fatalf("request %d: status %d, RateLimit-Limit %q", i, resp.StatusCode, resp.Header.Get("RateLimit-Limit"))
			}
		}
		resp, body := gql(keys.AdminAPIKey)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("over the limit: status %d, Retry-After %q, RateLimit-Remaining %q: %v",
				resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit-Remaining"), body)
		}
		errs, _ := body["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["extensions"].(map[string]any)["code"] != rest.CodeRateLimited {
			t.Fatalf("over the limit: %v", body)
		}
		// The GraphQL and REST interfaces share the key's bucket.
		req, _ := http.NewRequest("GET", srv.URL+rest.BasePath+"/context", nil)
		req.Header.Set("X-Service-Api-Key", keys.AdminAPIKey)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("REST with the same key: %v %v", resp.StatusCode, err)
		} else {
			resp.Body.Close()
		}
		// Anonymous GraphQL (introspection) is not charged to a key.
		for range 3 {
			if resp, _ := gql(""); resp.StatusCode != http.StatusOK {
				t.Fatalf("anonymous: status %d", resp.StatusCode)
			}
		}

		resp, err = http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{
			"barberd_rate_limited_requests_total 2",
			`barberd_http_requests_total{method="POST",route="/graphql",status="429"} 1`,
			`go_sql_open_connections{db_name="barberd"}`,
		} {
			if !strings.Contains(string(b), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}
