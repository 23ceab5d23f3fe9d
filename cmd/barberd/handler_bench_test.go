package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/storetest"
	"barberd/rest"
)

// BenchmarkServerWork measures the work barberd's handler does for a
// request, without net/http's reading and writing of it: the request is
// handed to the handler serve gives http.Server (every middleware, the
// router, authentication, the resolver and the answer's assembly), and the
// answer goes to a writer that keeps nothing. "healthz" is the floor (the
// root middleware and the router alone); "availability" a warm day of
// every barber of the Lisbon demo unit; "availability_barber" one
// barber's; "appointments" a client's appointments, a statement every
// time. A request's share of the machine beyond /healthz's is the
// difference.
//
// Run: go test ./cmd/barberd -run '^$' -bench ServerWork -benchtime 2s
func BenchmarkServerWork(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			db := storetest.Open(b, d)
			// As a server runs (flag --freshness-window).
			res := graph.New(graph.Settings{DB: db, FreshnessWindow: graph.DefaultFreshnessWindow})
			keys, err := demo.Seed(context.Background(), res)
			if err != nil {
				b.Fatal(err)
			}
			dr := &drain{}
			h := dr.middleware(routes(res, db, serverConfig{writeTimeout: 30 * time.Second}, rest.NewMetrics(db.SQL), dr))
			ids := lisbonOf(keys)
			day := nextWeekday(time.Tuesday)
			avail := rest.BasePath + "/availability?unit_id=" + ids.unit + "&service_id=" + ids.haircut + "&date=" + day
			for _, c := range []struct{ name, path, want string }{
				{"healthz", "/healthz", "ok"},
				{"availability", avail, `"starts_at"`},
				{"availability_barber", avail + "&barber_id=" + ids.joao, `"slots":[{`},
				// One statement every time: a client's appointments.
				{"appointments", rest.BasePath + "/appointments?client_phone=%2B351912345678", `"data":[`},
			} {
				b.Run(c.name, func(b *testing.B) {
					// The request as net/http reads it, once: no handler
					// changes a request's headers.
					req := httptest.NewRequest("GET", c.path, nil)
					req.Header.Set("X-Service-Api-Key", keys.APIKey)
					req.Header.Set("User-Agent", "barberbench")
					req.Header.Set("Accept", "application/json")
					serve := func() *discardWriter {
						// A context as net/http gives its requests: one that
						// the connection's end cancels.
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						w := &discardWriter{h: http.Header{}}
						h.ServeHTTP(w, req.WithContext(ctx))
						return w
					}
					if w := serve(); w.status != http.StatusOK || !strings.Contains(w.first, c.want) {
						b.Fatalf("%s: %d %s", c.path, w.status, w.first)
					}
					b.ReportAllocs()
					b.SetParallelism(8)
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if w := serve(); w.status != http.StatusOK {
								b.Fatalf("%s: %d", c.path, w.status)
							}
						}
					})
				})
			}
		})
	}
}

// discardWriter is an http.ResponseWriter that keeps the status and the
// first 200 bytes of the answer.
type discardWriter struct {
	h      http.Header
	status int
	first  string
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.first == "" {
		w.first = string(p[:min(len(p), 200)])
	}
	return len(p), nil
}
