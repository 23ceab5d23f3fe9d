package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// The official MCP clients: the TypeScript SDK 1.x and 2.x and the
// conformance suite, pinned in testdata/mcpclients (package-lock.json)
// and run with the Node 22 that project pins too. .ci/run installs them
// with npm ci.

const mcpClients = "testdata/mcpclients"

// nodeClients returns the Node binary of testdata/mcpclients, skipping the
// test when npm ci has not run there, or failing it under CI.
func nodeClients(t *testing.T) string {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(mcpClients, "node_modules", ".bin", "node"))
	if err == nil {
		_, err = os.Stat(filepath.Join(mcpClients, "node_modules", "@modelcontextprotocol", "conformance", "package.json"))
	}
	if err == nil {
		err = exec.Command(node, "--version").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("BARBERD_REQUIRE_MCP_CLIENTS") == "1" {
			t.Fatalf("the official MCP clients are required (CI=true or BARBERD_REQUIRE_MCP_CLIENTS=1): %v; run npm ci in cmd/barberd/%s", err, mcpClients)
		}
		t.Skipf("the official MCP clients are not installed (npm ci in cmd/barberd/%s); set BARBERD_REQUIRE_MCP_CLIENTS=1 to fail instead", mcpClients)
	}
	return node
}

// runNode runs a script of testdata/mcpclients with env added to ours,
// and returns its standard output; a failure fails the test with its
// standard error.
func runNode(t *testing.T, node string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = mcpClients
	cmd.Env = append(childEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestMCPOfficialClients walks a booking through the official TypeScript
// SDK 1.x and 2.x, over streamable HTTP and over stdio ("barberd mcp" as
// docs/operations.md's client config starts it), on both databases: every
// refusal on the way (the taken slot, an unknown id, a malformed time, a
// NUL in external_reference, a lone surrogate in the client's name, a
// limit out of range, a waitlist join while the time is free or while the
// client already waits) must reach the agent as a readable tool error, and
// each walk stores one appointment, no more.
func TestMCPOfficialClients(t *testing.T) {
	node := nodeClients(t)
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			db := storetest.OpenURL(t, dbURL)
			e := newMCPEnv(t, db, serverConfig{})
			cfg := desktopConfig(t)
			args, _ := json.Marshal(cfg.Args)
			count := countAppointments(t, db)
			day := nextWeekday(time.Tuesday)
			for i, c := range []struct{ sdk, transport string }{{"1", "http"}, {"2", "http"}, {"1", "stdio"}, {"2", "stdio"}} {
				t.Run("sdk "+c.sdk+" "+c.transport, func(t *testing.T) {
					env := []string{"BARBERD_URL=" + e.srv.URL, "BARBERD_API_KEY=" + e.keys.APIKey,
						"BARBERD_COMMAND=" + barberd(t), "BARBERD_ARGS=" + string(args), "DATABASE_URL=" + dbURL}
					before := count()
					out := runNode(t, node, env, "walk.mjs", c.sdk, c.transport, day, fmt.Sprintf("+35196%07d", i))
					var done struct{ Steps []string }
					if err := json.Unmarshal(out, &done); err != nil || len(done.Steps) != 23 {
						t.Fatalf("walk: %v: %s", err, out)
					}
					if after := count(); after != before+1 {
						t.Fatalf("the walk stored %d appointments, want 1 (refused calls store nothing)", after-before)
					}
				})
			}
		})
	}
}

// conformanceBaseline lists the conformance suite's server scenarios that
// do not apply to barberd, with why (docs/operations.md lists them too).
const conformanceBaseline = "conformance-baseline.yml"

// TestMCPConformance runs the official conformance suite's server
// scenarios against /mcp, on both databases: every scenario passes but
// those conformance-baseline.yml names, which need the suite's own test
// tools, prompts or resources. The suite sends no key, so a proxy in
// front of /mcp adds the demo key, as a configured host would.
func TestMCPConformance(t *testing.T) {
	node := nodeClients(t)
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{})
		target := e.srv.Config.Handler
		keyed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+e.keys.APIKey)
			target.ServeHTTP(w, r)
		}))
		t.Cleanup(keyed.Close)
		out := runNode(t, node, nil, "node_modules/@modelcontextprotocol/conformance/dist/index.js", "server",
			"--url", keyed.URL+"/mcp", "--expected-failures", conformanceBaseline, "-o", t.TempDir())
		t.Logf("%s", out)
	})
}
