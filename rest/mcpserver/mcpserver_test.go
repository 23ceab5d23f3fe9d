package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/graph"
	"barberd/rest"
)

// An internal failure is a tool error that says nothing of its cause.
func TestFailureHidesInternals(t *testing.T) {
	r := failure(context.Background(), errors.New(`pq: relation "appointments" does not exist`))
	b, _ := json.Marshal(r)
	var p rest.Problem
	if err := json.Unmarshal(r.StructuredContent.(json.RawMessage), &p); err != nil {
		t.Fatal(err)
	}
	if !r.IsError || p.Code != graph.CodeInternal || p.Status != 500 || strings.Contains(string(b), "relation") {
		t.Fatalf("failure: %s", b)
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, graph.CodeInternal+": ") {
		t.Fatalf("text %q", text)
	}
}

// Wrongly typed and unknown arguments are named as fields; arguments that
// are not an object are invalid_json.
func TestDecodeArguments(t *testing.T) {
	for raw, want := range map[string]string{
		`{"limit":"three"}`:                      "limit",
		`{"weekdays":[1,"x"]}`:                   "weekdays",
		`{"client":{"phone":5}}`:                 "client.phone",
		`{"unitId":"unt_1"}`:                     "unitId",
		`[1]`:                                    graph.CodeInvalidJSON,
		`{"limit":3,"unit_id":"u","after":null}`: "",
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
		e, _ := graph.AsError(err)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", raw, err)
		case want == graph.CodeInvalidJSON && (e == nil || e.Code != want):
			t.Errorf("%s: %v, want %s", raw, err, want)
		case want != "" && want != graph.CodeInvalidJSON && (e == nil || len(e.Fields) != 1 || e.Fields[0].Field != want):
			t.Errorf("%s: %v, want %s named", raw, err, want)
		}
	}
}
