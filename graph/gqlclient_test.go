package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"barberd/cmd/barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
)

// demoResolver is a resolver over the database with the demo account,
// whose clock stands at Monday 2027-03-01 06:00 UTC.
func demoResolver(t testing.TB, db *store.DB) (*graph.Resolver, *demo.Keys) {
	t.Helper()
	res := graph.NewResolver(db, nil)
	res.Now = func() time.Time { return time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC) }
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	return res, keys
}

// gqlResult is a GraphQL answer.
type gqlResult struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// ok returns the data of an answer without errors.
func (r gqlResult) ok(t testing.TB) map[string]any {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("graphql errors: %+v", r.Errors)
	}
	return r.Data
}

// gqlClient serves the resolver's GraphQL handler to the given API key and
// returns what sends it a query with variables.
func gqlClient(t testing.TB, res *graph.Resolver, key string) func(query string, vars map[string]any) gqlResult {
	t.Helper()
	viewer, err := res.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	h := graph.NewHandler(res)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(graph.WithViewer(r.Context(), viewer)))
	}))
	t.Cleanup(srv.Close)
	return func(query string, vars map[string]any) gqlResult {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out gqlResult
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
}
