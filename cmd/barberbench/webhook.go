package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// With --webhook, the scenario phase runs with one webhook endpoint
// subscribed to every event: a receiver in this process, on loopback, that
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

// webhookReceiver records the deliveries it gets.
type webhookReceiver struct {
	srv *http.Server
	url string

	sent sync.Map // external_reference → when its create was sent

	mu       sync.Mutex
	first    map[string]time.Duration // webhook-id → latency of its create's first arrival
	attempts int
}

// sending notes that the create with external reference ref is sent now.
func (r *webhookReceiver) sending(ref string) {
	if r != nil {
		r.sent.Store(ref, time.Now())
	}
}

func startReceiver() (*webhookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &webhookReceiver{url: "http://" + ln.Addr().String() + "/hook", first: map[string]time.Duration{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
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
	id := req.Header.Get("webhook-id")
	sent, ok := r.sent.Load(n.Appointment.ExternalReference)
	r.mu.Lock()
	r.attempts++
	if _, seen := r.first[id]; !seen && ok && n.Type == "appointment.created" {
		r.first[id] = at.Sub(sent.(time.Time))
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// delivered is how many appointment.created events have arrived.
func (r *webhookReceiver) delivered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.first)
}

// stats are the receiver's figures for a phase that created created
// appointments, after waiting at most drain for their deliveries.
func (r *webhookReceiver) stats(created int, drain time.Duration) *WebhookStats {
	start := time.Now()
	for r.delivered() < created && time.Since(start) < drain {
		time.Sleep(50 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	lat := make([]time.Duration, 0, len(r.first))
	for _, d := range r.first {
		lat = append(lat, d)
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }
	s := &WebhookStats{Created: created, Delivered: len(r.first), Attempts: r.attempts, DrainSeconds: round2(time.Since(start).Seconds())}
	if len(lat) > 0 {
		s.P50Ms, s.P99Ms, s.MaxMs = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(lat[len(lat)-1])
	}
	return s
}

func (r *webhookReceiver) close() { _ = r.srv.Close() }

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
