package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"barberd/cmd/barberd/demo"
	"barberd/graph"
	"barberd/graph/store"
)

// gqlServer is graph.NewHandler over a real database holding the demo
// account, behind the API key check cmd/barberd puts before it: a request
// without a key is anonymous.
type gqlServer struct {
	res  *graph.Resolver
	keys *demo.Keys
	h    http.Handler
}

func newGQLServer(t testing.TB, db *store.DB) *gqlServer {
	t.Helper()
	res := graph.NewResolver(db, nil)
	res.Now = func() time.Time { return time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC) } // a Monday
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	gql := graph.NewHandler(res)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get("X-Service-Api-Key"); key != "" {
			v, err := res.Authenticate(r.Context(), key)
			if err != nil {
				w.WriteHeader(http.StatusUnauthorized)
				_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{graph.AuthError(err)}})
				return
			}
			r = r.WithContext(graph.WithViewer(r.Context(), v))
		}
		gql.ServeHTTP(w, r)
	})
	return &gqlServer{res: res, keys: keys, h: h}
}

// answer is a GraphQL response.
type answer struct {
	status int
	body   []byte
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// code is the first error's extensions.code, or "" without errors.
func (a *answer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	c, _ := a.Errors[0].Extensions["code"].(string)
	return c
}

// fields are the field names of the first error's extensions.fields.
func (a *answer) fields() []string {
	if len(a.Errors) == 0 {
		return nil
	}
	l, _ := a.Errors[0].Extensions["fields"].([]any)
	var names []string
	for _, f := range l {
		if m, ok := f.(map[string]any); ok {
			n, _ := m["field"].(string)
			names = append(names, n)
		}
	}
	return names
}

func (a *answer) messages() string {
	var m []string
	for _, e := range a.Errors {
		m = append(m, e.Message)
	}
	return strings.Join(m, " | ")
}

// post sends a raw JSON body.
func (s *gqlServer) post(t testing.TB, key string, body []byte) *answer {
	t.Helper()
	req := httptest.NewRequest("POST", "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Service-Api-Key", key)
	}
	return s.do(t, req)
}

func (s *gqlServer) do(t testing.TB, req *http.Request) *answer {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	a := &answer{status: rec.Code, body: rec.Body.Bytes()}
	if err := json.Unmarshal(a.body, a); err != nil {
		t.Fatalf("response %d is not GraphQL JSON: %v: %.300s", rec.Code, err, a.body)
	}
	return a
}

// query sends a document and its variables.
func (s *gqlServer) query(t testing.TB, key, query string, vars map[string]any) *answer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	return s.post(t, key, body)
}

// ok fails the test on any error and returns the data.
func (a *answer) ok(t testing.TB) map[string]any {
	t.Helper()
	if len(a.Errors) > 0 {
		t.Fatalf("errors: %s (%v)", a.messages(), a.Errors)
	}
	return a.Data
}
