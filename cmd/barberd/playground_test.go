package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"barberd/cmd/barberd/playground"
	"barberd/graph/storetest"
)

const chromiumPath = "/usr/bin/chromium"

// TestPlaygroundInBrowser loads the embedded GraphiQL playground in headless
// Chromium, pastes an API key into its headers editor and a query into its
// query editor, clicks run and reads the result pane. Every request the page
// makes must go to the test server: the page works offline.
func TestPlaygroundInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("BARBERD_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is required (CI=true or BARBERD_REQUIRE_BROWSER=1): %v", chromiumPath, err)
		}
		t.Skipf("%s not installed (apt-get install chromium); set BARBERD_REQUIRE_BROWSER=1 to fail instead", chromiumPath)
	}
	e := newGQLEnv(t, storetest.Open(t, "sqlite3"))

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	defer cancelBrowser()
	start := time.Now()
	// Start the browser on a context without a deadline (a deadline on the
	// first call would bound the browser's life), then bound the steps.
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	t.Logf("chromium started in %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()

	// What the page asks for, and what goes wrong in it.
	var (
		mu       sync.Mutex
		requests []*network.Request
		urls     = map[network.RequestID]string{}
		problems []string
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request)
			urls[ev.RequestID] = ev.Request.URL
		case *network.EventLoadingFailed:
			problems = append(problems, fmt.Sprintf("loading %s failed: %s %s", urls[ev.RequestID], ev.ErrorText, ev.BlockedReason))
		}
	}); err != nil {
		t.Fatal(err)
	}
	consoleCtx, stopConsole := context.WithCancel(ctx)
	console := chromedp.Console(consoleCtx)
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleWarning {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("console %s: %s (%s)", m.Type, m.Text, m.URL))
				mu.Unlock()
			}
		}
	}()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}

	const (
		headersEditor = `.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror`
		queryEditor   = `.graphiql-query-editor .CodeMirror`
		resultPane    = `.graphiql-response`
	)
	// editorValue reads a CodeMirror 5 editor's content (GraphiQL 3 uses
	// CodeMirror 5; the editor's DOM node carries its instance).
	editorValue := func(sel string) (string, error) {
		return chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(sel)+`).CodeMirror.getValue()`))
	}
	// paste clicks into an editor, selects all of it and inserts text the
	// way a paste does: through the editor's own input handling.
	paste := func(sel, text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.Click(chromedp.CSS(sel)),
			chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).CodeMirror.execCommand("selectAll")`),
			chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
				return err
			}),
		)
	}

	headers, _ := json.Marshal(map[string]string{"X-Service-Api-Key": e.keys.APIKey})
	const query = `{ bookableUnits { name } }`
	step := func(what string, a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, a); err != nil {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: %v\nproblems in the page: %q", what, err, problems)
		}
	}
	step("load the page", chromedp.Steps(
		chromedp.Navigate(e.srv.URL+"/playground"),
		chromedp.WaitVisible(chromedp.CSS(`.graphiql-execute-button`)),
		chromedp.WaitVisible(chromedp.CSS(headersEditor)),
	))
	t.Logf("page loaded after %v", time.Since(start).Round(time.Millisecond))
	prefilled, err := editorValue(headersEditor)
	if err != nil {
		t.Fatal(err)
	}
	if prefilled != playground.DefaultHeaders {
		t.Errorf("headers editor starts with %q, want %q", prefilled, playground.DefaultHeaders)
	}
	step("paste the key and the query", chromedp.Steps(
		paste(headersEditor, string(headers)),
		paste(queryEditor, query),
	))
	if got, _ := editorValue(headersEditor); got != string(headers) {
		t.Errorf("headers editor holds %q after pasting %q", got, headers)
	}
	if got, _ := editorValue(queryEditor); got != query {
		t.Errorf("query editor holds %q after pasting %q", got, query)
	}
	step("run the query", chromedp.Click(chromedp.CSS(`.graphiql-execute-button`)))
	result, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const r = document.querySelector(`+jsString(resultPane)+`);
		return r && r.innerText.includes("Barbearia Chiado") ? r.innerText : false;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for the result: %v\npage text:\n%s", err, text)
	}
	t.Logf("result shown after %v", time.Since(start).Round(time.Millisecond))
	if !strings.Contains(result, `"bookableUnits"`) || strings.Contains(result, `"errors"`) {
		t.Errorf("result pane:\n%s", result)
	}

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("BARBERD_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, "playground.png"), shot, 0o644); err != nil {
		t.Error(err)
	}

	stopConsole()
	<-consoleDone
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("in the page: %s", p)
	}
	// Offline: every request went to the test server (data: URLs are inline).
	var sentKey bool
	for _, r := range requests {
		switch {
		case strings.HasPrefix(r.URL, "data:"):
		case !strings.HasPrefix(r.URL, e.srv.URL+"/"):
			t.Errorf("the page requested %s %s, not on the test server", r.Method, r.URL)
		case r.Method == "POST" && r.URL == e.srv.URL+"/graphql":
			sentKey = sentKey || r.Headers["X-Service-Api-Key"] == e.keys.APIKey
		}
	}
	if !sentKey {
		t.Errorf("no POST /graphql carried the pasted key; requests: %d", len(requests))
	}
	if n := len(requests); n < 7 {
		t.Errorf("only %d requests seen; want the page, its 5 assets and the query", n)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
