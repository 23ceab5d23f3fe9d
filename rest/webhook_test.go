package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/webhook"
)

// Webhook delivery end to end: endpoints made over GraphQL, events made
// over REST, real receivers (httptest), the worker of package webhook with
// test-short timings, on both databases.

// hookCall is one request a receiver got.
type hookCall struct {
	header http.Header
	body   []byte
}

// receiver is an httptest server that answers with answer(n) for its n-th
// request (from 1) and keeps every request.
type receiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []hookCall
}

func newReceiver(t testing.TB, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.calls = append(rc.calls, hookCall{r.Header.Clone(), b})
		n := len(rc.calls)
		rc.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func ok200(int, http.ResponseWriter, *http.Request) {}

func (rc *receiver) got() []hookCall {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookCall(nil), rc.calls...)
}

// waitFor polls cond until it holds, or fails after 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fastHooks are worker settings for tests: short timeouts and retries.
func fastHooks(res *graph.Resolver) webhook.Settings {
	return webhook.Settings{
		Resolver: res, AllowPrivate: true, Timeout: 500 * time.Millisecond, Lease: 2 * time.Second,
		Poll: 20 * time.Millisecond, RetryBase: 20 * time.Millisecond, RetryMax: 80 * time.Millisecond,
		RetryFor: time.Hour,
	}
}

// runWorker runs a worker until the test ends.
func runWorker(t testing.TB, s webhook.Settings) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		webhook.New(s).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// hookEnv is an env whose resolver takes private webhook URLs, with a
// GraphQL client of its admin key.
func hookEnv(t *testing.T, db *store.DB) (*env, func(string, map[string]any) *gqltest.Answer) {
	e := newEnv(t, db)
	e.reconfigure(func(s *graph.Settings) { s.WebhookAllowPrivate = true })
	return e, gqltest.Client(t, e.res, e.keys.AdminAPIKey)
}

const createEndpoint = `mutation($in: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $in) { secret endpoint { id url eventTypes enabled failingSince } }
}`

// endpoint creates an endpoint for url and returns its id and secret.
func endpoint(t testing.TB, gql func(string, map[string]any) *gqltest.Answer, url string, types ...string) (id, secret string) {
	t.Helper()
	in := map[string]any{"url": url}
	if types != nil {
		in["eventTypes"] = types
	}
	d := gql(createEndpoint, map[string]any{"in": in}).OK(t)["createWebhookEndpoint"].(map[string]any)
	return d["endpoint"].(map[string]any)["id"].(string), d["secret"].(string)
}

type hookAttempt struct {
	StatusCode *int   `json:"statusCode"`
	LatencyMs  int    `json:"latencyMs"`
	Error      string `json:"error"`
}

type hookDelivery struct {
	ID             string        `json:"id"`
	Status         string        `json:"status"`
	AttemptCount   int           `json:"attemptCount"`
	NotificationID string        `json:"notificationID"`
	Attempts       []hookAttempt `json:"attempts"`
}

// deliveries reads an endpoint's delivery log, newest first.
func deliveries(t testing.TB, gql func(string, map[string]any) *gqltest.Answer, endpointID string) []hookDelivery {
	t.Helper()
	a := gql(`query($id: ID!) { webhookDeliveries(endpointId: $id) { edges { node {
  id status attemptCount notificationID attempts { statusCode latencyMs error } } } } }`, map[string]any{"id": endpointID})
	var out struct {
		Data struct {
			WebhookDeliveries struct {
				Edges []struct{ Node hookDelivery } `json:"edges"`
			} `json:"webhookDeliveries"`
		} `json:"data"`
	}
	a.OK(t)
	if err := json.Unmarshal(a.Body, &out); err != nil {
		t.Fatal(err)
	}
	var ds []hookDelivery
	for _, e := range out.Data.WebhookDeliveries.Edges {
		ds = append(ds, e.Node)
	}
	return ds
}

func TestWebhookOrderSignatureAndFeed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		reader := e.ntReader()
		rc := newReceiver(t, ok200)
		id, secret := endpoint(t, gql, rc.srv.URL+"/hooks")
		runWorker(t, fastHooks(e.res))

		a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		expect(t, e.apPost("/appointments/"+a.ID+"/reschedule", map[string]any{"starts_at": "2027-03-02T15:00:00"}), http.StatusOK, "")
		expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "Client asked"}), http.StatusOK, "")
		waitFor(t, "three deliveries", func() bool { return len(rc.got()) >= 3 })

		// The feed is the same with webhooks: the same events, and each
		// delivery's body is the feed's item byte for byte.
		r := e.do("GET", "/notifications/pending", reader, nil)
		expect(t, r, http.StatusOK, "")
		var feed struct{ Data []json.RawMessage }
		r.Decode(t, &feed)
		calls := rc.got()
		if len(calls) != 3 || len(feed.Data) != 3 {
			t.Fatalf("%d deliveries and %d feed items, want 3 of each", len(calls), len(feed.Data))
		}
		verify, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i, c := range calls {
			if err := verify.Verify(c.body, c.header); err != nil {
				t.Errorf("delivery %d: the Standard Webhooks library refuses its signature: %v", i, err)
			}
			var item struct{ ID, Type string }
			if err := json.Unmarshal(c.body, &item); err != nil {
				t.Fatal(err)
			}
			types = append(types, item.Type)
			if got := c.header.Get("webhook-id"); got != item.ID {
				t.Errorf("delivery %d: webhook-id %q, body id %q", i, got, item.ID)
			}
			if string(c.body) != string(feed.Data[i]) {
				t.Errorf("delivery %d body\n%s\nfeed item\n%s", i, c.body, feed.Data[i])
			}
			if ct, ua := c.header.Get("Content-Type"), c.header.Get("User-Agent"); ct != "application/json" || !strings.Contains(ua, "barberd") {
				t.Errorf("delivery %d: Content-Type %q, User-Agent %q", i, ct, ua)
			}
		}
		want := []string{domain.EventCreated, domain.EventRescheduled, domain.EventCancelled}
		if !reflect.DeepEqual(types, want) {
			t.Errorf("types in order %v, want %v", types, want)
		}
		waitFor(t, "the log to show three delivered", func() bool {
			ds := deliveries(t, gql, id)
			return len(ds) == 3 && ds[0].Status == "delivered" && ds[2].Status == "delivered" && ds[1].Status == "delivered"
		})
	})
}

func TestWebhookRetriesWithTheSameID(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n <= 2 {
				w.WriteHeader(http.StatusInternalServerError)
			}
		})
		id, _ := endpoint(t, gql, rc.srv.URL, domain.EventCreated)
		runWorker(t, fastHooks(e.res))
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		waitFor(t, "three requests", func() bool { return len(rc.got()) >= 3 })
		calls := rc.got()
		for _, c := range calls[1:] {
			if c.header.Get("webhook-id") != calls[0].header.Get("webhook-id") {
				t.Errorf("webhook-ids %q and %q differ", c.header.Get("webhook-id"), calls[0].header.Get("webhook-id"))
			}
		}
		var d hookDelivery
		waitFor(t, "the log to show it delivered", func() bool {
			ds := deliveries(t, gql, id)
			if len(ds) == 1 {
				d = ds[0]
			}
			return d.Status == "delivered"
		})
		var codes []int
		for _, a := range d.Attempts {
			codes = append(codes, *a.StatusCode)
		}
		if !reflect.DeepEqual(codes, []int{200, 500, 500}) || d.AttemptCount != 3 || d.Attempts[1].Error != "HTTP 500" {
			t.Errorf("attempts, newest first: %v (%+v), count %d", codes, d.Attempts, d.AttemptCount)
		}
		if len(calls) != 3 {
			t.Errorf("%d requests, want 3", len(calls))
		}
	})
}

func TestWebhookHangingReceiverIsCut(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		rc := newReceiver(t, func(n int, _ http.ResponseWriter, r *http.Request) {
			if n == 1 {
				<-r.Context().Done() // hangs until barberd gives up
			}
		})
		id, _ := endpoint(t, gql, rc.srv.URL)
		s := fastHooks(e.res)
		s.Timeout = 300 * time.Millisecond
		runWorker(t, s)
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		var d hookDelivery
		waitFor(t, "the retry to deliver", func() bool {
			ds := deliveries(t, gql, id)
			if len(ds) == 1 {
				d = ds[0]
			}
			return d.Status == "delivered"
		})
		first := d.Attempts[len(d.Attempts)-1]
		if first.StatusCode != nil || !strings.Contains(first.Error, "timed out after 300ms") || first.LatencyMs < 300 || first.LatencyMs > 2000 {
			t.Errorf("the hanging attempt: %+v", first)
		}
		if len(d.Attempts) != 2 {
			t.Errorf("attempts %+v, want the timeout then the delivery", d.Attempts)
		}
	})
}

func TestWebhookTwoWorkersSendEachOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		var mu sync.Mutex
		seen := map[string]int{}
		rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[r.Header.Get("webhook-id")]++
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // the other worker has time to try
		})
		// Several endpoints, so both workers have work at once.
		for range 3 {
			endpoint(t, gql, rc.srv.URL)
		}
		// Two replicas: two resolvers on one database, a worker each.
		other := graph.New(e.res.Settings())
		// A send that timed out is sent again (at least once), so a loaded
		// machine must not time one out here: this is about claims.
		for _, res := range []*graph.Resolver{e.res, other} {
			s := fastHooks(res)
			s.Timeout = 10 * time.Second
			runWorker(t, s)
		}
		const events = 12
		e.ntEvents(tuesday, events)
		waitFor(t, "every delivery", func() bool { return len(rc.got()) >= 3*events })
		time.Sleep(200 * time.Millisecond) // room for a duplicate to show
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != events {
			t.Errorf("%d webhook-ids, want %d", len(seen), events)
		}
		for id, n := range seen {
			if n != 3 { // one per endpoint
				t.Errorf("%s sent %d times, want 3 (once to each endpoint)", id, n)
			}
		}
	})
}

func TestWebhookPrivateAddressesRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		strict := gqltest.Client(t, e.res, e.keys.AdminAPIKey)
		for _, url := range []string{"https://127.0.0.1/h", "https://10.0.0.8/h", "https://169.254.169.254/latest", "http://crm.example.com/h", "https://localhost/h", "https://u:p@crm.example.com/h",
			"https://[::127.0.0.1]/h", "https://2130706433/h", "https://0x7f000001/h", "https://0177.0.0.1/h", "https://127.1/h", "https://10.1/h"} {
			a := strict(createEndpoint, map[string]any{"in": map[string]any{"url": url}})
			if a.Code() != domain.CodeValidationFailed || !reflect.DeepEqual(a.Fields(), []string{"url"}) {
				t.Errorf("%s: %s %v, want validation_failed naming url", url, a.Code(), a.Fields())
			}
		}
		a := strict(createEndpoint, map[string]any{"in": map[string]any{"url": "https://crm.example.com/h", "eventTypes": []string{"appointment.created", "appointment.moved"}}})
		if a.Code() != domain.CodeValidationFailed || !reflect.DeepEqual(a.Fields(), []string{"eventTypes[1]"}) {
			t.Errorf("unknown type: %s %v", a.Code(), a.Fields())
		}

		// A name that resolves to loopback, taken by a resolver that allows
		// it, is refused when the worker without the flag connects.
		e.reconfigure(func(s *graph.Settings) { s.WebhookAllowPrivate = true })
		gql := gqltest.Client(t, e.res, e.keys.AdminAPIKey)
		rc := newReceiver(t, ok200)
		id, _ := endpoint(t, gql, strings.Replace(rc.srv.URL, "127.0.0.1", "localhost", 1))
		s := fastHooks(e.res)
		s.AllowPrivate = false
		runWorker(t, s)
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		waitFor(t, "two refused attempts", func() bool {
			ds := deliveries(t, gql, id)
			return len(ds) == 1 && len(ds[0].Attempts) >= 2
		})
		for _, at := range deliveries(t, gql, id)[0].Attempts {
			if at.StatusCode != nil || !strings.Contains(at.Error, "refused: the host is a loopback, private") {
				t.Errorf("attempt %+v, want refused", at)
			}
		}
		if n := len(rc.got()); n != 0 {
			t.Errorf("the receiver was called %d times", n)
		}
	})
}

func TestWebhookRedirectNotFollowed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		target := newReceiver(t, ok200)
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.srv.URL, http.StatusTemporaryRedirect)
		})
		id, _ := endpoint(t, gql, rc.srv.URL)
		runWorker(t, fastHooks(e.res))
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		waitFor(t, "two attempts", func() bool {
			ds := deliveries(t, gql, id)
			return len(ds) == 1 && len(ds[0].Attempts) >= 2
		})
		d := deliveries(t, gql, id)[0]
		at := d.Attempts[len(d.Attempts)-1]
		if d.Status != "pending" || at.StatusCode == nil || *at.StatusCode != 307 || !strings.Contains(at.Error, "redirects are not followed") {
			t.Errorf("delivery %s, first attempt %+v", d.Status, at)
		}
		if n := len(target.got()); n != 0 {
			t.Errorf("the redirect's target was called %d times", n)
		}
	})
}

func TestWebhookRotatedSecretSigns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		rc := newReceiver(t, ok200)
		id, old := endpoint(t, gql, rc.srv.URL)
		d := gql(`mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret endpoint { id } } }`, map[string]any{"id": id}).OK(t)
		secret := d["rotateWebhookSecret"].(map[string]any)["secret"].(string)
		if secret == old || !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("rotated secret %q (old %q)", secret, old)
		}
		runWorker(t, fastHooks(e.res))
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		waitFor(t, "a delivery", func() bool { return len(rc.got()) >= 1 })
		c := rc.got()[0]
		for s, valid := range map[string]bool{secret: true, old: false} {
			wh, err := standardwebhooks.NewWebhook(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := wh.Verify(c.body, c.header); (err == nil) != valid {
				t.Errorf("verify with the %v secret: %v", map[bool]string{true: "new", false: "old"}[valid], err)
			}
		}
	})
}

func TestWebhookFailingAndRedeliver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		var up atomic.Bool
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			if !up.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		id, _ := endpoint(t, gql, rc.srv.URL)
		s := fastHooks(e.res)
		s.RetryFor = 100 * time.Millisecond
		runWorker(t, s)
		e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		var d hookDelivery
		waitFor(t, "the delivery to fail", func() bool {
			ds := deliveries(t, gql, id)
			if len(ds) == 1 {
				d = ds[0]
			}
			return d.Status == "failed"
		})
		failing := func() any {
			l := gql(`{ webhookEndpoints { id failingSince } }`, nil).OK(t)["webhookEndpoints"].([]any)
			return l[0].(map[string]any)["failingSince"]
		}
		if failing() == nil {
			t.Fatal("the endpoint is not failing after a delivery gave up")
		}
		up.Store(true)
		r := gql(`mutation($id: ID!) { redeliverWebhook(deliveryId: $id) { id status } }`, map[string]any{"id": d.ID}).OK(t)
		if st := r["redeliverWebhook"].(map[string]any)["status"]; st != "pending" {
			t.Errorf("redelivered status %v", st)
		}
		waitFor(t, "the redelivery", func() bool { return deliveries(t, gql, id)[0].Status == "delivered" })
		if f := failing(); f != nil {
			t.Errorf("failingSince %v after a delivery succeeded", f)
		}
		a := gql(`mutation { redeliverWebhook(deliveryId: "whd_nope") { id } }`, nil)
		if a.Code() != domain.CodeNotFound {
			t.Errorf("unknown delivery: %s", a.Code())
		}
	})
}

// TestWebhookHangingEndpointsLeaveOthersTheirShare reproduces the issue's
// attack: one account's 18 endpoints at receivers that accept and never
// answer, and 8 bookings to send them. Another account's deliveries still
// arrive within 2 s each, while that account's hangers hold at most their
// share of the worker's senders at once.
func TestWebhookHangingEndpointsLeaveOthersTheirShare(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		var hanging, most atomic.Int32
		quit := make(chan struct{})
		for range 18 {
			rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
				n := hanging.Add(1)
				defer hanging.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				select {
				case <-r.Context().Done():
				case <-quit:
				}
			})
			endpoint(t, gql, rc.srv.URL)
		}
		other := e.otherAccount()
		var mu sync.Mutex
		var arrivals []time.Time // of the receiver's n-th request
		rc := newReceiver(t, func(n int, _ http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			for len(arrivals) < n {
				arrivals = append(arrivals, time.Time{})
			}
			arrivals[n-1] = time.Now()
			mu.Unlock()
		})
		endpoint(t, gqltest.Client(t, e.res, other.AdminAPIKey), rc.srv.URL)
		s := fastHooks(e.res)
		s.Timeout = 10 * time.Second // the hangers hang for all of the test
		s.PerAccount = 4
		runWorker(t, s)
		t.Cleanup(func() { close(quit) })

		e.ntEvents(tuesday, 8)
		waitFor(t, "the hangers to hold senders", func() bool { return hanging.Load() > 0 })
		time.Sleep(100 * time.Millisecond) // they take what they may
		booked := map[string]time.Time{}
		for i := range 10 {
			m := 13*60 + i*30
			r := e.do("POST", "/appointments", other.APIKey, e.apOtherBooking(other, haircut, fmt.Sprintf("%sT%02d:%02d:00", tuesday, m/60, m%60)))
			expect(t, r, http.StatusCreated, "")
			booked[apView(t, r).ID] = time.Now()
		}
		waitFor(t, "the other account's deliveries", func() bool { return len(rc.got()) >= len(booked) })
		mu.Lock()
		defer mu.Unlock()
		arrived := map[string]time.Time{} // by appointment id
		for i, c := range rc.got() {
			var item struct {
				AppointmentID string `json:"appointment_id"`
			}
			if err := json.Unmarshal(c.body, &item); err != nil {
				t.Fatal(err)
			}
			arrived[item.AppointmentID] = arrivals[i]
		}
		for id, at := range booked {
			if wait := arrived[id].Sub(at); wait > 2*time.Second {
				t.Errorf("the other account's delivery of %s took %s", id, wait)
			}
		}
		if n := most.Load(); n > int32(s.PerAccount) {
			t.Errorf("the hanging account held %d senders at once", n)
		}
	})
}

// TestWebhookFailingEndpointBacksOff: an endpoint that always fails is
// never tried again at once, though it has more deliveries due, and waits
// longer after each failure.
func TestWebhookFailingEndpointBacksOff(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		var mu sync.Mutex
		var at []time.Time
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		endpoint(t, gql, rc.srv.URL)
		s := fastHooks(e.res)
		s.RetryBase, s.RetryMax = 150*time.Millisecond, time.Minute
		e.ntEvents(tuesday, 3) // three due at once
		runWorker(t, s)
		waitFor(t, "four attempts", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(at) >= 4
		})
		mu.Lock()
		defer mu.Unlock()
		// The wait after the n-th failure is RetryBase doubled n-1 times,
		// give or take a fifth: its least grows with every failure. (A
		// loaded machine may make an attempt late, so one wait is not
		// compared with the one before.)
		least := s.RetryBase * 4 / 5
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < least {
				t.Errorf("attempt %d came %s after the one before, want at least %s", i+1, gap, least)
			}
			least *= 2
		}
	})
}
