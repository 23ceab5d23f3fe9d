// Package gqltest is test support: a GraphQL handler over a demo account,
// on a real database (package storetest), and what reads its answers.
package gqltest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/gqlserver"
	"barberd/graph/store"
	"barberd/rest/apitest"
)

// Resolver is a resolver over db with the demo account seeded, whose clock
// stands at Monday 2027-03-01 06:00 UTC.
func Resolver(t testing.TB, db *store.DB) (*graph.Resolver, *demo.Keys) {
	t.Helper()
	res := graph.New(graph.Settings{DB: db, Now: func() time.Time { return time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC) }})
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	return res, keys
}

// Server is gqlserver.NewHandler over a Resolver, behind the API key check
// cmd/barberd puts before it: a request without a key is anonymous.
type Server struct {
	Res  *graph.Resolver
	Keys *demo.Keys
	h    http.Handler
}

// NewServer seeds the demo account in db and serves it.
func NewServer(t testing.TB, db *store.DB) *Server {
	t.Helper()
	res, keys := Resolver(t, db)
	gql := gqlserver.NewHandler(res)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get("X-Service-Api-Key"); key != "" {
			v, err := res.Authenticate(r.Context(), key)
			if err != nil {
				gqlserver.WriteError(w, r, err)
				return
			}
			r = r.WithContext(domain.WithViewer(r.Context(), v))
		}
		gql.ServeHTTP(w, r)
	})
	return &Server{Res: res, Keys: keys, h: h}
}

// Post sends a raw JSON body with the API key key ("" for none).
func (s *Server) Post(t testing.TB, key string, body []byte) *Answer {
	t.Helper()
	req := httptest.NewRequest("POST", "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Service-Api-Key", key)
	}
	return s.Do(t, req)
}

// Do sends a request as it is.
func (s *Server) Do(t testing.TB, req *http.Request) *Answer {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return decode(t, rec.Code, rec.Body.Bytes())
}

// Query sends a document and its variables with the API key key ("" for
// none).
func (s *Server) Query(t testing.TB, key, query string, vars map[string]any) *Answer {
	t.Helper()
	return s.Post(t, key, body(t, query, vars))
}

// Client serves the resolver's GraphQL handler over HTTP to the viewer of
// the API key key, and returns what sends it a document with variables.
func Client(t testing.TB, res *graph.Resolver, key string) func(query string, vars map[string]any) *Answer {
	t.Helper()
	viewer, err := res.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	h := gqlserver.NewHandler(res)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(domain.WithViewer(r.Context(), viewer)))
	}))
	t.Cleanup(srv.Close)
	return func(query string, vars map[string]any) *Answer {
		t.Helper()
		a, err := apitest.Do(nil, "POST", srv.URL, "", body(t, query, vars))
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, a.Status, a.Body)
	}
}

func body(t testing.TB, query string, vars map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Answer is a GraphQL response.
type Answer struct {
	Status int            `json:"-"`
	Body   []byte         `json:"-"`
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func decode(t testing.TB, status int, body []byte) *Answer {
	t.Helper()
	a := &Answer{Status: status, Body: body}
	if err := json.Unmarshal(body, a); err != nil {
		t.Fatalf("response %d is not GraphQL JSON: %v: %.300s", status, err, body)
	}
	return a
}

// Code is the first error's extensions.code, or "" without errors.
func (a *Answer) Code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	c, _ := a.Errors[0].Extensions["code"].(string)
	return c
}

// Fields are the field names of the first error's extensions.fields.
func (a *Answer) Fields() []string {
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

// Messages are the errors' messages, joined.
func (a *Answer) Messages() string {
	var m []string
	for _, e := range a.Errors {
		m = append(m, e.Message)
	}
	return strings.Join(m, " | ")
}

// OK fails the test on any error and returns the data.
func (a *Answer) OK(t testing.TB) map[string]any {
	t.Helper()
	if len(a.Errors) > 0 {
		t.Fatalf("errors: %s (%v)", a.Messages(), a.Errors)
	}
	return a.Data
}
