package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// TestEndToEnd drives the built binary through a newcomer's and an
// operator's first steps, on each database: migrate, seed, make a key,
// serve, stop, serve again.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()

			began := time.Now()
			_, stderr, code := runCLI(t, dir, "migrate", "--database-url", dbURL)
			if code != 0 {
				t.Fatalf("migrate: exit %d: %s", code, stderr)
			}
			// Twice is fine: migrations are idempotent.
			mustCLI(t, dir, "migrate", "--database-url", dbURL)
			t.Logf("migrate x2: %v", time.Since(began))

			keys := seedDemo(t, dbURL)

			stdout, stderr, code := runCLI(t, dir, "apikey", "create", "--account", keys.AccountID,
				"--name", "x", "--scopes", "catalog:read", "--database-url", dbURL)
			if code != 0 {
				t.Fatalf("apikey create: exit %d: %s", code, stderr)
			}
			if !regexp.MustCompile(`^bk_[a-z2-7]+\n$`).MatchString(stdout) {
				t.Fatalf("apikey create printed %q, want the key alone on one line", stdout)
			}
			catalogKey := strings.TrimSpace(stdout)
			stdout, stderr, code = runCLI(t, dir, "apikey", "create", "--account", keys.AccountID,
				"--name", "small bot", "--scopes", "context:read,holds:write", "--max-holds", "7", "--database-url", dbURL)
			if code != 0 {
				t.Fatalf("apikey create --max-holds 7: exit %d: %s", code, stderr)
			}
			cappedKey := strings.TrimSpace(stdout)
			if _, stderr, code := runCLI(t, dir, "apikey", "create", "--account", keys.AccountID, "--name", "x",
				"--max-holds", "-2", "--database-url", dbURL); code == 0 || !strings.Contains(stderr, "maxActiveHolds") {
				t.Errorf("apikey create --max-holds -2: exit %d: %s", code, stderr)
			}
			if _, _, code := runCLI(t, dir, "apikey", "create", "--account", "acc_nope", "--name", "x",
				"--scopes", "catalog:read", "--database-url", dbURL); code == 0 {
				t.Error("apikey create for an unknown account exited 0")
			}

			began = time.Now()
			s := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL)
			t.Logf("serve started in %v at %s", time.Since(began), s.URL)
			api := s.URL + "/api/integrations/v1"

			if r := call(t, "GET", s.URL+"/healthz", "", nil, 200); !bytes.Contains(r.Body, []byte("ok")) {
				t.Errorf("/healthz: %s", r.Body)
			}
			call(t, "GET", s.URL+"/readyz", "", nil, 200)
			units := call(t, "GET", api+"/units", keys.APIKey, nil, 200).JSON(t)
			if l, _ := units["data"].([]any); len(l) != 2 {
				t.Fatalf("/units: %v", units)
			}
			call(t, "GET", api+"/units", catalogKey, nil, 200)
			if r := call(t, "GET", api+"/context", catalogKey, nil, 403); r.Code() != "insufficient_scope" {
				t.Errorf("catalog-only key on /context: %s", r.Body)
			}
			limits := func(key string) map[string]any {
				l, _ := call(t, "GET", api+"/context", key, nil, 200).JSON(t)["limits"].(map[string]any)
				return l
			}
			if l := limits(cappedKey); l["active_holds_max"] != 7.0 || l["active_holds"] != 0.0 {
				t.Errorf("a key made with --max-holds 7: limits %v", l)
			}
			if l := limits(keys.APIKey); l["active_holds_max"] != float64(graph.DefaultActiveHoldsPerKey) {
				t.Errorf("a key without a cap of its own: limits %v, want the default %d", l, graph.DefaultActiveHoldsPerKey)
			}
			if r := call(t, "GET", api+"/units", "", nil, 401); r.Code() != "missing_api_key" {
				t.Errorf("no key: %s", r.Body)
			}
			doc := call(t, "GET", api+"/openapi.json", "", nil, 200).JSON(t)
			if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1") {
				t.Errorf("openapi.json: openapi %q", v)
			}

			gql := call(t, "POST", s.URL+"/graphql", keys.APIKey,
				map[string]any{"query": "{ bookableUnits { id name } }"}, 200).JSON(t)
			data, _ := gql["data"].(map[string]any)
			if l, _ := data["bookableUnits"].([]any); len(l) != 2 || gql["errors"] != nil {
				t.Fatalf("/graphql bookableUnits: %v", gql)
			}
			gqlNoKey, err := apitest.Do(nil, "POST", s.URL+"/graphql", "", map[string]any{"query": "{ bookableUnits { id } }"})
			if err != nil {
				t.Fatal(err)
			}
			if gqlNoKey.Status == 200 && !bytes.Contains(gqlNoKey.Body, []byte("errors")) {
				t.Errorf("/graphql without a key answered data: %s", gqlNoKey.Body)
			}

			pg := call(t, "GET", s.URL+"/playground", "", nil, 200)
			if ct := pg.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !bytes.Contains(bytes.ToLower(pg.Body), []byte("<html")) {
				t.Errorf("/playground: Content-Type %q, body %.100s", ct, pg.Body)
			}

			// Something to find after a restart.
			ids := lisbonIDs(t, s.URL, keys.APIKey)
			startsAt := nextWeekday(time.Tuesday) + "T10:00:00"
			apt := call(t, "POST", api+"/appointments", keys.APIKey, ids.bookingAt(startsAt, "+351912000001", "e2e-1"), 201).JSON(t)
			aptID, _ := apt["id"].(string)

			code, took := s.stop()
			t.Logf("SIGTERM: exit %d after %v", code, took)
			if code != 0 {
				t.Fatalf("serve exited %d after SIGTERM\nstderr: %s", code, s.stderr)
			}
			if took > 5*time.Second {
				t.Errorf("serve took %v to stop", took)
			}
			if !strings.Contains(s.stderr.String(), `"msg":"stopped"`) {
				t.Errorf("no \"stopped\" log line: %s", s.stderr)
			}
			if strings.Contains(s.stderr.String(), keys.APIKey) {
				t.Error("an API key appears in the server log")
			}
			if s.stdout.String() != "" {
				t.Errorf("serve wrote to stdout: %q", s.stdout)
			}

			// Again on the same database: keys, catalog and bookings survived.
			s2 := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL)
			got := call(t, "GET", s2.URL+"/api/integrations/v1/appointments/"+aptID, keys.APIKey, nil, 200).JSON(t)
			if got["status"] != "confirmed" || got["starts_at"] != startsAt {
				t.Fatalf("after restart: %v", got)
			}
			r := call(t, "POST", s2.URL+"/api/integrations/v1/appointments", keys.APIKey, ids.bookingAt(startsAt, "+351912000001", "e2e-1"), 200)
			if r.Header.Get("Idempotent-Replayed") != "true" || r.JSON(t)["id"] != aptID {
				t.Fatalf("replay after restart: %s", r.Body)
			}
			call(t, "GET", s2.URL+"/api/integrations/v1/units", catalogKey, nil, 200)
			if code, _ := s2.stop(); code != 0 {
				t.Fatalf("second serve exited %d\nstderr: %s", code, s2.stderr)
			}
		})
	}
}

var (
	demoKeyLine  = regexp.MustCompile(`(?m)^API key \(booking scopes\): (bk_[a-z2-7]+)$`)
	demoAdminKey = regexp.MustCompile(`(?m)^Admin API key \(GraphQL\): +(bk_[a-z2-7]+)$`)
	demoAccount  = regexp.MustCompile(`(?m)^barberd demo account (acc\S+)$`)
	demoCurlLine = regexp.MustCompile(`(?m)^\s*curl -H 'X-Service-Api-Key: (bk_[a-z2-7]+)' (http://\S+)$`)
)

// TestDemo runs "barberd demo" the way the README tells a newcomer to: no
// database, no flags but the address, an empty directory.
func TestDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	start := func() (s *server, account, key string) {
		t.Helper()
		s = startServer(t, dir, "demo", "--addr", "127.0.0.1:0")
		out := s.waitStdout("playground")
		k := demoKeyLine.FindStringSubmatch(out)
		a := demoAccount.FindStringSubmatch(out)
		c := demoCurlLine.FindStringSubmatch(out)
		if k == nil || a == nil || c == nil {
			t.Fatalf("demo output lacks the account, key or curl line:\n%s", out)
		}
		if c[1] != k[1] {
			t.Fatalf("curl line uses key %s, printed key is %s", c[1], k[1])
		}
		// Every start prints an admin key that works, the first and later ones.
		adm := demoAdminKey.FindStringSubmatch(out)
		if adm == nil {
			t.Fatalf("demo output lacks the admin key:\n%s", out)
		}
		keys := call(t, "POST", s.URL+"/graphql", adm[1], map[string]any{"query": "{ apiKeys { id } }"}, http.StatusOK).JSON(t)
		if keys["errors"] != nil || keys["data"] == nil {
			t.Fatalf("the printed admin key lists keys: %v", keys)
		}
		// The curl line works as printed (localhost instead of 127.0.0.1).
		u := strings.Replace(c[2], "localhost", "127.0.0.1", 1)
		if !strings.HasPrefix(u, s.URL+"/") {
			t.Fatalf("curl line URL %s, server at %s", c[2], s.URL)
		}
		units := call(t, "GET", u, k[1], nil, http.StatusOK).JSON(t)
		if l, _ := units["data"].([]any); len(l) != 2 {
			t.Fatalf("curl line's request: %v", units)
		}
		return s, a[1], k[1]
	}

	s, account, key := start()
	ids := lisbonIDs(t, s.URL, key)
	startsAt := nextWeekday(time.Wednesday) + "T11:00:00"
	apt := call(t, "POST", s.URL+"/api/integrations/v1/appointments", key, ids.bookingAt(startsAt, "+351912000002", ""), 201).JSON(t)
	if code, _ := s.stop(); code != 0 {
		t.Fatalf("demo exited %d\nstderr: %s", code, s.stderr)
	}

	s2, account2, key2 := start()
	if account2 != account {
		t.Fatalf("second demo run: account %s, want the same %s", account2, account)
	}
	if key2 == key {
		t.Fatal("second demo run printed the same key: secrets must not be stored")
	}
	for _, k := range []string{key, key2} {
		got := call(t, "GET", s2.URL+"/api/integrations/v1/appointments/"+apt["id"].(string), k, nil, 200).JSON(t)
		if got["starts_at"] != startsAt {
			t.Fatalf("appointment after restart: %v", got)
		}
	}
	var ctx struct {
		Account struct{ ID string } `json:"account"`
	}
	if err := json.Unmarshal(call(t, "GET", s2.URL+"/api/integrations/v1/context", key2, nil, 200).Body, &ctx); err != nil || ctx.Account.ID != account {
		t.Fatalf("context of the second key: %+v (%v)", ctx, err)
	}
	if code, _ := s2.stop(); code != 0 {
		t.Fatalf("second demo exited %d\nstderr: %s", code, s2.stderr)
	}
	// The default database is an SQLite file in the working directory.
	if _, err := os.Stat(filepath.Join(dir, "barberd.db")); err != nil {
		t.Fatalf("default database: %v", err)
	}
}
