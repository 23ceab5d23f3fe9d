package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: --version and version print the module version and the Go
// release barberd was built with.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "version"} {
		out := mustCLI(t, "", arg)
		if !strings.HasPrefix(out, "barberd ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("barberd %s: %q", arg, out)
		}
	}
}

// TestSubcommandHelp: every subcommand's --help describes it and names the
// environment variables it reads.
func TestSubcommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp"}, []string{"Usage: barberd mcp", "desktop LLM agents", "BARBERD_API_KEY", "DATABASE_URL"}},
		{[]string{"serve"}, []string{"Usage: barberd serve", "REST v1", "BARBERD_ADDR", "BARBERD_RATE_LIMIT", "BARBERD_REDIS_URL", "DATABASE_URL"}},
		{[]string{"demo"}, []string{"Usage: barberd demo", "demo account", "BARBERD_ADDR"}},
		{[]string{"migrate"}, []string{"Usage: barberd migrate", "schema", "DATABASE_URL"}},
		{[]string{"seed-demo"}, []string{"Usage: barberd seed-demo", "admin_api_key", "DATABASE_URL"}},
		{[]string{"account", "create"}, []string{"Usage: barberd account create", "admin_api_key", "DATABASE_URL"}},
		{[]string{"account", "list"}, []string{"Usage: barberd account list", "DATABASE_URL"}},
		{[]string{"apikey", "create"}, []string{"Usage: barberd apikey create", "shown only once", "DATABASE_URL"}},
	} {
		_, stderr, code := runCLI(t, "", append(c.args, "--help")...)
		if code != 0 {
			t.Errorf("%v --help: exit %d", c.args, code)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v --help lacks %q:\n%s", c.args, w, stderr)
			}
		}
		if !strings.Contains(stderr, "Environment variables:") {
			t.Errorf("%v --help lists no environment variables:\n%s", c.args, stderr)
		}
	}
}

// TestDatabaseErrorNamesFile: an SQLite file that cannot be opened is named
// in the error, which says "migrate" once.
func TestDatabaseErrorNamesFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing-dir", "shop.db")
	_, stderr, code := runCLI(t, "", "migrate", "--database-url", "sqlite:"+path)
	if code != 1 || !strings.Contains(stderr, path) || strings.Count(stderr, "migrate") != 1 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestStartupLogAndBrowserRoot: serve logs what it uses (the database with
// its password hidden, the metrics address) and warns when
// --webhook-allow-private is on; GET / sends browsers to the playground and
// programs get the 404 problem.
func TestStartupLogAndBrowserRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "shop.db")
	s := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL,
		"--metrics-addr", "127.0.0.1:0", "--webhook-allow-private")
	var starting, warned bool
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e["msg"] == "starting":
			starting = e["database"] == dbURL && e["metrics"] == "127.0.0.1:0" && strings.HasPrefix(e["version"].(string), "barberd ")
		case e["level"] == "WARN" && strings.Contains(e["msg"].(string), "--webhook-allow-private"):
			warned = true
		}
	}
	if !starting || !warned {
		t.Errorf("startup log (starting %v, warned %v):\n%s", starting, warned, s.stderr)
	}

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", s.URL+"/", nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/playground" {
		t.Errorf("GET / from a browser: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if r := call(t, "GET", s.URL+"/", "", nil, 404); r.Code() != "not_found" {
		t.Errorf("GET / from a program: %s", r.Body)
	}
}

// TestRedactedStartupDatabase: a PostgreSQL URL's password never reaches
// the log.
func TestRedactedStartupDatabase(t *testing.T) {
	t.Parallel()
	// An unreachable server: the error names the database, password hidden.
	_, stderr, code := runCLI(t, "", "migrate", "--database-url", "postgres://barberd:s3cret@127.0.0.1:1/barberd")
	if code != 1 || strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, "postgres://barberd:xxxxx@127.0.0.1:1/barberd") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
