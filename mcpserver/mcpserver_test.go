package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/graph/domain"
	"barberd/rest"
)

// An internal failure is a tool error that says nothing of its cause.
func TestFailureHidesInternals(t *testing.T) {
	r := failure(context.Background(), errors.New(`pq: relation "appointments" does not exist`))
	b, _ := json.Marshal(r)
	var p rest.Problem
	if err := json.Unmarshal([]byte(r.Content[1].(*mcp.TextContent).Text), &p); err != nil || r.StructuredContent != nil {
		t.Fatal(err)
	}
	if !r.IsError || p.Code != domain.CodeInternal || p.Status != 500 || strings.Contains(string(b), "relation") {
		t.Fatalf("failure: %s", b)
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, domain.CodeInternal+": ") {
		t.Fatalf("text %q", text)
	}
}

// Wrongly typed and unknown arguments, and text that cannot be stored (a
// NUL, invalid UTF-8, a lone surrogate), are named as fields; arguments
// that are not an object are invalid_json.
func TestDecodeArguments(t *testing.T) {
	for raw, want := range map[string]string{
		`{"limit":"three"}`:                       "limit",
		`{"weekdays":[1,"x"]}`:                    "weekdays",
		`{"client":{"phone":5}}`:                  "client.phone",
		`{"unitId":"unt_1"}`:                      "unitId",
		`[1]`:                                     domain.CodeInvalidJSON,
		`{"client":{"phone":"+351\u0000"}}`:       "client.phone",
		`{"unit_id":"Ok\ud800"}`:                  "unit_id",
		`{"weekdays":[1],"after":"\udc00\ud800"}`: "after",
		"{\"unit_id\":\"Jo\xe3o\"}":               "unit_id",
		`{"unit_id":"\ud83d\ude00 \\ud800"}`:      "",
		`{"limit":3,"unit_id":"u","after":null}`:  "",
	} {
		var in struct {
			UnitID   string  `json:"unit_id"`
			Limit    *int    `json:"limit"`
			After    *string `json:"after"`
			Weekdays []int   `json:"weekdays"`
			Client   struct {
				Phone string `json:"phone"`
			} `json:"client"`
		}
		err := decodeArguments(json.RawMessage(raw), &in)
		e, _ := domain.AsError(err)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want == domain.CodeInvalidJSON && (e == nil || e.Code != want):
			t.Errorf("%s: %v, want %s", raw, err, want)
		case want != "" && want != domain.CodeInvalidJSON && (e == nil || len(e.Fields) != 1 || e.Fields[0].Field != want):
			t.Errorf("%s: %v, want %s named", raw, err, want)
		}
	}
}

// A tool call over streamable HTTP allocates little: the SDK is built from
// third_party/go-sdk, whose JSON decoding does not take a 32 KiB buffer for
// each of the several messages and parameters a request is decoded into
// (about 310 kB a call unpatched, about 16 kB patched). Dropping the patch
// (the replace in go.mod) fails this test.
func TestToolCallAllocations(t *testing.T) {
	type echoArgs struct {
		Word string `json:"word"`
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		handle(0, func(_ context.Context, in *echoArgs) (echoArgs, string, error) { return *in, "echoed", nil }))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"word":"hello"}}}`
	call := func() {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"word":"hello"`) {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	call()
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		call()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per tool call", perCall)
	if perCall > 64_000 {
		t.Fatalf("a tool call allocates %d bytes; is the SDK patch (go.mod's replace) gone?", perCall)
	}
}

// A tool call stops when the HTTP request it came in ends: a client that
// gave up does not leave the call running (and holding a database
// connection) for nobody.
func TestToolCallEndsWithItsRequest(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan error, 1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
		handle(0, func(ctx context.Context, _ *struct{}) (struct{}, string, error) {
			close(started)
			select {
			case <-ctx.Done():
				stopped <- ctx.Err()
			case <-time.After(10 * time.Second):
				stopped <- errors.New("still running 10s after its request ended")
			}
			return struct{}{}, "", ctx.Err()
		}))
	h := withCaller(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("the call answered %d; want it cut off", resp.StatusCode)
		}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never started")
	}
	cancel() // the client gives up
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("the tool call's context: %v", err)
	}
	<-done
}
