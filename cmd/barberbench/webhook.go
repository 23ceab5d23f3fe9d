package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// With --webhook, the scenario phase runs with one webhook endpoint
// subscribed to every event: a receiver on loopback (in this process, or
// with --webhook-receiver in barberbench receive's), that
// answers 204 at once and measures each create's delivery latency: from
// when its request was sent (the commit comes later, so this bounds the
// latency from commit from above; the events' created_at has whole seconds
// only) to the arrival of its appointment.created event. The server
// must take loopback URLs (serve --webhook-allow-private), and the seed's
// admin key registers the endpoint over GraphQL, and deletes it afterwards.

// WebhookStats are the deliveries of the scenario phase's events.
type WebhookStats struct {
	// Created is how many appointments the phase created (201 answers),
	// Delivered how many of their appointment.created events the receiver
	// got by the end of the drain, and Attempts how many requests it got in
	// all (retries and other events included).
	Created, Delivered, Attempts int
	// Latency from the create's request to the first arrival of its event.
	P50Ms, P99Ms, MaxMs float64
	// DrainSeconds is how long after the phase the receiver still waited.
	DrainSeconds float64
}

// webhookReceiver records the deliveries it gets: in this process, or in
// another (barberbench receive, with run --webhook-receiver), whose
// arrivals it reads at the end over HTTP. Arrival and send times come from
// the same machine's clock either way.
type webhookReceiver struct {
	srv    *http.Server
	url    string // the endpoint's URL
	remote string // the other process's base URL; "": this process

	sent sync.Map // external_reference → when its create was sent

	mu       sync.Mutex
	arrived  map[string]time.Time // external_reference → its appointment.created event's first arrival
	attempts int
	before   int // a remote receiver's attempts before this run: -1 until read
}

// sending notes that the create with external reference ref is sent now.
func (r *webhookReceiver) sending(ref string) {
	if r != nil {
		r.sent.Store(ref, time.Now())
	}
}

// startReceiver serves a receiver on addr (127.0.0.1:0: any free port).
func startReceiver(addr string) (*webhookReceiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &webhookReceiver{url: "http://" + ln.Addr().String() + "/hook", arrived: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", r.serve)
	mux.HandleFunc("GET /arrivals", r.serveArrivals)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// remoteReceiver is a receiver that barberbench receive serves at base.
func remoteReceiver(base string) *webhookReceiver {
	base = strings.TrimSuffix(base, "/")
	return &webhookReceiver{url: base + "/hook", remote: base, arrived: map[string]time.Time{}, before: -1}
}

func (r *webhookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var n struct {
		Type        string `json:"type"`
		Appointment struct {
			ExternalReference string `json:"external_reference"`
		} `json:"appointment"`
	}
	_ = json.Unmarshal(body, &n)
	ref := n.Appointment.ExternalReference
	r.mu.Lock()
	r.attempts++
	if _, seen := r.arrived[ref]; !seen && ref != "" && n.Type == "appointment.created" {
		r.arrived[ref] = at
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// arrivals is what GET /arrivals answers.
type arrivals struct {
	Attempts int              `json:"attempts"`
	Arrived  map[string]int64 `json:"arrived"` // external_reference → Unix nanoseconds
}

func (r *webhookReceiver) serveArrivals(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	a := arrivals{Attempts: r.attempts, Arrived: make(map[string]int64, len(r.arrived))}
	for ref, at := range r.arrived {
		a.Arrived[ref] = at.UnixNano()
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a)
}

// refresh reads a remote receiver's arrivals.
func (r *webhookReceiver) refresh() error {
	if r.remote == "" {
		return nil
	}
	resp, err := http.Get(r.remote + "/arrivals")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var a arrivals
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.before < 0 {
		r.before = a.Attempts
	}
	r.attempts = a.Attempts - r.before
	for ref, ns := range a.Arrived {
		r.arrived[ref] = time.Unix(0, ns)
	}
	return nil
}

// latencies are, for this run's creates whose event arrived, the time
// from the create's request to the arrival, and the receiver's attempts.
func (r *webhookReceiver) latencies() ([]time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lat []time.Duration
	for ref, at := range r.arrived {
		if sent, ok := r.sent.Load(ref); ok {
			lat = append(lat, at.Sub(sent.(time.Time)))
		}
	}
	return lat, r.attempts
}

// stats are the receiver's figures for a phase that created created
// appointments, after waiting at most drain for their deliveries.
func (r *webhookReceiver) stats(created int, drain time.Duration) (*WebhookStats, error) {
	start := time.Now()
	var lat []time.Duration
	var attempts int
	for {
		if err := r.refresh(); err != nil {
			return nil, fmt.Errorf("reading the receiver's arrivals: %w", err)
		}
		lat, attempts = r.latencies()
		if len(lat) >= created || time.Since(start) >= drain {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }
	s := &WebhookStats{Created: created, Delivered: len(lat), Attempts: attempts, DrainSeconds: round2(time.Since(start).Seconds())}
	if len(lat) > 0 {
		s.P50Ms, s.P99Ms, s.MaxMs = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(lat[len(lat)-1])
	}
	return s, nil
}

func (r *webhookReceiver) close() {
	if r.srv != nil {
		_ = r.srv.Close()
	}
}

// receiveCmd serves a webhook receiver for run --webhook-receiver, in a
// process of its own, until interrupted.
func receiveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r, err := startReceiver(*addr)
	if err != nil {
		return err
	}
	defer r.close()
	fmt.Fprintln(stdout, strings.TrimSuffix(r.url, "/hook"))
	<-ctx.Done()
	return nil
}

// graphql posts one GraphQL document with the admin key and decodes its data.
func (b *bench) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cl.root+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Api-Key", b.c.adminKey)
	resp, err := b.cl.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("graphql: status %d: %w", resp.StatusCode, err)
	}
	if len(answer.Errors) > 0 {
		return errors.New("graphql: " + answer.Errors[0].Message)
	}
	return json.Unmarshal(answer.Data, out)
}

// subscribe registers url as an endpoint for every event and returns a
// function that deletes it.
func (b *bench) subscribe(ctx context.Context, url string) (func(), error) {
	var created struct {
		CreateWebhookEndpoint struct {
			Endpoint struct{ ID string } `json:"endpoint"`
		} `json:"createWebhookEndpoint"`
	}
	err := b.graphql(ctx, `mutation($url: String!) { createWebhookEndpoint(input: {url: $url, description: "barberbench receiver"}) { endpoint { id } } }`,
		map[string]any{"url": url}, &created)
	if err != nil {
		return nil, fmt.Errorf("subscribing the receiver (does serve run with --webhook-allow-private?): %w", err)
	}
	id := created.CreateWebhookEndpoint.Endpoint.ID
	return func() {
		var gone any
		_ = b.graphql(context.Background(), `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) }`, map[string]any{"id": id}, &gone)
	}, nil
}

// pacer spaces requests rate per second apart across every worker (0: no
// pacing).
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
}

func newPacer(rate int) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{interval: time.Second / time.Duration(rate)}
}

// wait blocks until the caller's turn, or until deadline; false then.
func (p *pacer) wait(deadline time.Time) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(p.interval)
	p.mu.Unlock()
	if at.After(deadline) {
		return false
	}
	time.Sleep(time.Until(at))
	return true
}
