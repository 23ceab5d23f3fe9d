package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/mcpserver"
	"barberd/rest"
)

// The findings of a probe of /mcp (issue 22), each answered with a clear
// refusal, nothing stored and no 5xx, on both databases.

// mcpPost sends body to base/mcp with headers (name, value pairs) and
// returns the answer, its body read.
func mcpPost(t *testing.T, base, method, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 {
		t.Fatalf("%d: %s", resp.StatusCode, b)
	}
	if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%d answer with Cache-Control %q, X-Content-Type-Options %q; want no-store and nosniff",
			resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("X-Content-Type-Options"))
	}
	return resp, b
}

// wantProblem checks a problem+json answer of status and code.
func wantProblem(t *testing.T, resp *http.Response, b []byte, status int, code string) problem {
	t.Helper()
	var p problem
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" ||
		json.Unmarshal(b, &p) != nil || p.Code != code || p.Detail == "" {
		t.Fatalf("%d %s: %s, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), b, status, code)
	}
	return p
}

// toolCall is a JSON-RPC tools/call message.
func toolCall(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// batch is a JSON-RPC batch of n list_units calls.
func batch(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = toolCall(i+1, "list_units", "{}")
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// TestMCPBatches: one request carries at most MaxBatch messages, none in
// protocol revisions without batches, and each call of a batch costs one
// unit of the key's rate limit and, with a bad key, of the address's
// failure budget.
func TestMCPBatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{rateLimit: 0.01, rateBurst: 5, failRate: 0.01, failBurst: 10, maxBody: 128 << 10})
		key := []string{"X-Service-Api-Key", e.keys.APIKey}

		// The probe's 820 calls in one body run none.
		resp, b := mcpPost(t, e.srv.URL, "POST", batch(820), key...)
		wantProblem(t, resp, b, 400, rest.CodeBadRequest)
		resp, b = mcpPost(t, e.srv.URL, "POST", batch(mcpserver.MaxBatch+1), key...)
		wantProblem(t, resp, b, 400, rest.CodeBadRequest)
		resp, b = mcpPost(t, e.srv.URL, "POST", batch(2), append(key, "Mcp-Protocol-Version", "2025-06-18")...)
		if p := wantProblem(t, resp, b, 400, rest.CodeBadRequest); !strings.Contains(p.Detail, "removed") {
			t.Errorf("batch in 2025-06-18: %q", p.Detail)
		}

		// A batch of 3 in 2025-03-26 runs and costs 3 of the 5 the key has
		// at once; another batch of 3 is refused.
		resp, b = mcpPost(t, e.srv.URL, "POST", batch(3), key...)
		var answers []struct {
			ID     int
			Result struct{ IsError bool }
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &answers) != nil || len(answers) != 3 || answers[0].Result.IsError {
			t.Fatalf("batch of 3: %d %s", resp.StatusCode, b)
		}
		if got := resp.Header.Get("RateLimit-Remaining"); got != "2" {
			t.Errorf("after a batch of 3 of 5: RateLimit-Remaining %q, want 2", got)
		}
		resp, b = mcpPost(t, e.srv.URL, "POST", batch(3), key...)
		wantProblem(t, resp, b, 429, rest.CodeRateLimited)
		if resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}

		// With a wrong key each call of a batch spends the address's
		// failure budget: two batches of 5 use all 10.
		bad := []string{"Authorization", "Bearer bk_wrong"}
		for range 2 {
			resp, b = mcpPost(t, e.srv.URL, "POST", "["+toolCall(1, "list_units", "{}")+strings.Repeat(","+toolCall(1, "list_units", "{}"), 4)+"]", bad...)
			wantProblem(t, resp, b, 401, domain.CodeInvalidAPIKey)
		}
		resp, b = mcpPost(t, e.srv.URL, "POST", toolCall(1, "list_units", "{}"), bad...)
		wantProblem(t, resp, b, 429, rest.CodeRateLimited)
	})
}

// TestMCPTransportHygiene: Origin checked, WWW-Authenticate on 401, every
// answer no-store and nosniff (mcpPost checks), transport errors as
// problem+json.
func TestMCPTransportHygiene(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{mcpOrigins: "https://agents.example.com"})
		key := []string{"Authorization", "Bearer " + e.keys.APIKey}
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

		if resp, b := mcpPost(t, e.srv.URL, "POST", list, key...); resp.StatusCode != 200 || !strings.Contains(string(b), "book_appointment") {
			t.Fatalf("tools/list: %d %s", resp.StatusCode, b)
		}
		for _, origin := range []string{"https://evil.example", "null", "https://agents.example.com.evil.example"} {
			resp, b := mcpPost(t, e.srv.URL, "POST", list, append(key, "Origin", origin)...)
			wantProblem(t, resp, b, 403, rest.CodeOriginNotAllowed)
		}
		for _, origin := range []string{"https://agents.example.com", "http://localhost:6274", "http://127.0.0.1:6274"} {
			if resp, b := mcpPost(t, e.srv.URL, "POST", list, append(key, "Origin", origin)...); resp.StatusCode != 200 {
				t.Fatalf("Origin %s: %d %s", origin, resp.StatusCode, b)
			}
		}

		resp, b := mcpPost(t, e.srv.URL, "POST", list)
		wantProblem(t, resp, b, 401, domain.CodeMissingAPIKey)
		if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="barberd"` {
			t.Errorf("401 without a key: WWW-Authenticate %q", got)
		}
		resp, b = mcpPost(t, e.srv.URL, "POST", list, "Authorization", "Bearer bk_wrong")
		wantProblem(t, resp, b, 401, domain.CodeInvalidAPIKey)
		if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
			t.Errorf("401 with a wrong key: WWW-Authenticate %q", got)
		}

		resp, b = mcpPost(t, e.srv.URL, "PUT", list, key...)
		wantProblem(t, resp, b, 405, rest.CodeMethodNotAllowed)
		resp, b = mcpPost(t, e.srv.URL, "POST", list, append(key, "Content-Type", "text/plain")...)
		wantProblem(t, resp, b, 415, rest.CodeUnsupportedMediaType)
		resp, b = mcpPost(t, e.srv.URL, "POST", list, append(key, "Accept", "text/html")...)
		wantProblem(t, resp, b, 400, rest.CodeBadRequest)
		resp, b = mcpPost(t, e.srv.URL, "POST", `{"jsonrpc":`, key...)
		wantProblem(t, resp, b, 400, rest.CodeBadRequest)
		resp, b = mcpPost(t, e.srv.URL, "POST", `{"pad":"`+strings.Repeat("x", rest.DefaultMaxBody)+`"}`, key...)
		wantProblem(t, resp, b, 413, rest.CodePayloadTooLarge)
	})
}

// TestMCPUncleanText: a NUL, bytes that are not UTF-8 and lone surrogates
// in tool arguments are validation_failed naming the argument, before any
// database work (a NUL in external_reference was internal_error on
// PostgreSQL), and nothing is stored.
func TestMCPUncleanText(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{})
		key := []string{"Authorization", "Bearer " + e.keys.APIKey}
		s := lisbonOf(e.keys)
		count := countAppointments(t, db)
		before := count()
		at := nextWeekday(time.Tuesday) + "T10:00:00"
		book := func(name, ref string) string {
			return fmt.Sprintf(`{"unit_id":%q,"service_id":%q,"barber_id":%q,"starts_at":%q,"client":{"name":"%s","phone":"+351911111111"},"external_reference":"%s"}`,
				s.unit, s.haircut, s.joao, at, name, ref)
		}
		for _, c := range []struct{ what, args, field string }{
			{"NUL in external_reference", book("Ana", `x\u0000`), "external_reference"},
			{"lone surrogate in client.name", book(`Ok\ud800`, "ref-1"), "client.name"},
			{"reversed pair in external_reference", book("Ana", `\udc00\ud800`), "external_reference"},
			{"byte that is not UTF-8 in client.name", book("Jo\xe3o", "ref-2"), "client.name"},
			{"NUL in a lookup", `{"external_reference":"a\u0000"}`, "external_reference"},
		} {
			t.Run(c.what, func(t *testing.T) {
				tool := "book_appointment"
				if !strings.Contains(c.args, "unit_id") {
					tool = "find_client_appointments"
				}
				resp, b := mcpPost(t, e.srv.URL, "POST", toolCall(1, tool, c.args), key...)
				var answer struct {
					Result struct {
						IsError bool
						Content []struct{ Text string }
					}
				}
				if resp.StatusCode != 200 || json.Unmarshal(b, &answer) != nil || !answer.Result.IsError || len(answer.Result.Content) != 2 {
					t.Fatalf("%d %s", resp.StatusCode, b)
				}
				var p problem
				if err := json.Unmarshal([]byte(answer.Result.Content[1].Text), &p); err != nil || p.Code != domain.CodeValidationFailed ||
					len(p.Errors) == 0 || p.Errors[0].Field != c.field {
					t.Fatalf("want validation_failed naming %s: %s", c.field, b)
				}
			})
		}
		if after := count(); after != before {
			t.Fatalf("refused calls stored %d appointments", after-before)
		}
	})
}
