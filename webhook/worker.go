package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"barberd/ent"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/rest/view"
)

// Metrics receives what operators watch of deliveries; rest.Metrics is one.
type Metrics interface {
	// WebhookAttempted: one request's outcome: delivered, retry (it will be
	// sent again) or failed (its retries gave up).
	WebhookAttempted(outcome string)
	// WebhookDelivered: a delivery was taken, this long after its
	// notification was committed.
	WebhookDelivered(sinceCommit time.Duration)
	// WebhookBacklog: the oldest due delivery has waited this long (0: none
	// due).
	WebhookBacklog(oldestDue time.Duration)
	// WebhookFailingEndpoints: this many enabled endpoints are failing.
	WebhookFailingEndpoints(n int)
}

// Settings are what New makes a Worker of. Zero durations and counts take
// the defaults below, which servers use.
type Settings struct {
	Resolver *graph.Resolver // required
	Log      *slog.Logger
	Metrics  Metrics
	// AllowPrivate lets requests reach loopback, private and link-local
	// addresses (--webhook-allow-private).
	AllowPrivate bool
	// Timeout bounds one request, from dialing to the last byte read: 10s.
	Timeout time.Duration
	// Lease is how long a claim on an endpoint lasts unless renewed (a
	// worker renews it every third of it while it sends): 30s. A worker that
	// dies mid-delivery delays that endpoint by up to this long.
	Lease time.Duration
	// Poll is how often the worker looks for due deliveries: 500ms. A
	// commit in this process wakes it at once.
	Poll time.Duration
	// RetryBase is the wait before the first retry, doubled for each one
	// after up to RetryMax, each give or take a fifth: 5s and 1h.
	RetryBase, RetryMax time.Duration
	// RetryFor is how long after its first attempt (or its redelivery) a
	// delivery is retried before it fails: 24h.
	RetryFor time.Duration
	// Endpoints is how many endpoints one worker sends to at once: 16.
	Endpoints int
	// PerAccount is how many of them may be one account's: a quarter of
	// Endpoints (4), so that an account's slow or failing endpoints leave
	// the others' deliveries senders.
	PerAccount int
	// Batch is how many deliveries of one endpoint a round sends at most: 100.
	Batch int
	// Gather is how long a claim waits, after a round that delivered all it
	// had but fewer than Batch, before the next: 50ms. Under a stream of
	// events the rounds then carry many deliveries each, so the worker's
	// reads and records cost the bookings' database little per event.
	Gather time.Duration
}

// Worker sends due deliveries until its context ends. Every replica runs
// one.
type Worker struct {
	s      Settings
	db     *store.DB
	client *http.Client

	mu   sync.Mutex
	held map[string]string // the endpoints this worker's send loops hold claims on, and their accounts
	// after is the account of the last endpoint claimed: the next claim
	// starts with the accounts after it.
	after string
	// again is signalled when a send loop gave its claim up: what was
	// committed for the endpoint while its wake was skipped is due.
	again chan struct{}
}

// New returns a worker made of s, with defaults for what s leaves out.
func New(s Settings) *Worker {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.Timeout, 10*time.Second)
	def(&s.Lease, 30*time.Second)
	def(&s.Poll, 500*time.Millisecond)
	def(&s.RetryBase, 5*time.Second)
	def(&s.RetryMax, time.Hour)
	def(&s.RetryFor, 24*time.Hour)
	def(&s.Gather, 50*time.Millisecond)
	if s.Endpoints <= 0 {
		s.Endpoints = 16
	}
	if s.PerAccount <= 0 || s.PerAccount > s.Endpoints {
		s.PerAccount = max(1, s.Endpoints/4)
	}
	if s.Batch <= 0 {
		s.Batch = 100
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.Metrics == nil {
		s.Metrics = noMetrics{}
	}
	return &Worker{s: s, db: s.Resolver.Settings().DB, client: newClient(s.Timeout, s.AllowPrivate), held: map[string]string{}, again: make(chan struct{}, 1)}
}

type noMetrics struct{}

func (noMetrics) WebhookAttempted(string)        {}
func (noMetrics) WebhookDelivered(time.Duration) {}
func (noMetrics) WebhookBacklog(time.Duration)   {}
func (noMetrics) WebhookFailingEndpoints(int)    {}

// failingEvery is how often the worker counts failing endpoints.
const failingEvery = 30 * time.Second

// Run sends due deliveries until ctx ends, then waits for the requests in
// flight (each bounded by Timeout) and records them.
func (w *Worker) Run(ctx context.Context) {
	var busy sync.WaitGroup
	defer busy.Wait()
	slots := make(chan struct{}, w.s.Endpoints)
	tick := time.NewTicker(w.s.Poll)
	defer tick.Stop()
	var counted time.Time
	for {
		if time.Since(counted) >= failingEvery {
			counted = time.Now()
			if n, err := w.db.FailingWebhookEndpoints(ctx); err == nil {
				w.s.Metrics.WebhookFailingEndpoints(n)
			} else if ctx.Err() == nil {
				w.s.Log.Warn("webhooks: counting failing endpoints", "error", err.Error())
			}
		}
		w.claim(ctx, slots, &busy)
		if !w.next(ctx, tick.C) {
			return
		}
	}
}

// next waits until there may be due work to look for: a tick, a send loop
// that let its claim go, or a commit of this process for an endpoint no
// send loop of this worker holds (a held one's loop reads what is due
// before each round, and lets go only through release). It reports false
// when ctx ends.
func (w *Worker) next(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-w.again:
			return true
		case <-w.s.Resolver.WebhookWake():
			if !w.holdsAll(w.s.Resolver.WokenWebhookEndpoints()) {
				return true
			}
		}
	}
}

// holdsAll reports whether this worker's send loops hold every endpoint of
// es.
func (w *Worker) holdsAll(es []string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range es {
		if _, ok := w.held[e]; !ok {
			return false
		}
	}
	return true
}

// hold records that a send loop holds a claim.
func (w *Worker) hold(c store.WebhookClaim) {
	w.mu.Lock()
	w.held[c.EndpointID] = c.AccountID
	w.after = c.AccountID
	w.mu.Unlock()
}

// share is how the next claim shares the free senders among accounts.
func (w *Worker) share() share {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := map[string]int{}
	for _, a := range w.held {
		held[a]++
	}
	return share{perAccount: w.s.PerAccount, held: held, after: w.after}
}

// release records that the send loop of endpoint e let its claim go, and
// wakes the worker to look again.
func (w *Worker) release(e string) {
	w.mu.Lock()
	delete(w.held, e)
	w.mu.Unlock()
	select {
	case w.again <- struct{}{}:
	default: // already told
	}
}

// claim claims as many endpoints with due deliveries as there are free
// slots, at most PerAccount of one account, accounts in turn, and sends to
// each in a goroutine of its own.
func (w *Worker) claim(ctx context.Context, slots chan struct{}, busy *sync.WaitGroup) {
	now := time.Now()
	oldest, due, err := w.db.OldestDueWebhook(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			w.s.Log.Warn("webhooks: looking for due deliveries", "error", err.Error())
		}
		return
	}
	if !due {
		w.s.Metrics.WebhookBacklog(0)
		return
	}
	w.s.Metrics.WebhookBacklog(now.Sub(oldest))
	free := cap(slots) - len(slots)
	if free == 0 {
		return
	}
	sh := w.share()
	claims, err := w.db.ClaimWebhookEndpoints(ctx, now, w.s.Lease, sh.after, free+claimCandidates,
		func(es []*ent.WebhookEndpoint) []*ent.WebhookEndpoint { return sh.pick(es, free) })
	if err != nil {
		if ctx.Err() == nil {
			w.s.Log.Warn("webhooks: claiming endpoints", "error", err.Error())
		}
		return
	}
	for _, c := range claims {
		slots <- struct{}{}
		w.hold(c)
		busy.Go(func() {
			defer func() { <-slots }()
			defer w.release(c.EndpointID)
			w.send(ctx, c)
		})
	}
}

// send sends a claimed endpoint's due deliveries, oldest first, one at a
// time, in rounds of at most Batch, and stops a round at the first that is
// not delivered (so later ones do not overtake it more than retries must).
// It records each round; while a round delivered everything it had, it
// keeps the claim and sends the next round after Gather (at once after a
// full one), so under a steady stream of events the claim, and the look
// for due work, are paid once, and rounds carry what came in meanwhile.
// The last round, which found nothing due, releases the claim.
func (w *Worker) send(ctx context.Context, c store.WebhookClaim) {
	defer func() {
		if v := recover(); v != nil {
			w.s.Log.Error("webhooks: delivery panicked", "endpoint", c.EndpointID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	// The claim is renewed while the rounds last; if it is lost (this
	// process stalled past the lease), they stop.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	renewed := make(chan struct{})
	lease := c // renew's own copy: the rounds below update c's failing_since
	go func() {
		defer close(renewed)
		w.renew(rctx, &lease, stop)
	}()
	for last := false; !last; {
		round, err := w.deliver(rctx, c)
		if err != nil && ctx.Err() == nil {
			w.s.Log.Warn("webhooks: reading due deliveries", "endpoint", c.EndpointID, "error", err.Error())
		}
		last = err != nil || rctx.Err() != nil || round.Undone != "" || len(round.Delivered) == 0
		if last {
			stop()
			<-renewed
		}
		// Recorded even when stopping: the requests were sent.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = w.db.FinishWebhookRound(fctx, &c, round, !last)
		cancel()
		if err != nil {
			w.s.Log.Warn("webhooks: recording deliveries", "endpoint", c.EndpointID, "error", err.Error())
			if !last {
				stop()
				<-renewed
			}
			return
		}
		if !last && len(round.Delivered) < w.s.Batch {
			// What comes meanwhile goes in the next round.
			select {
			case <-rctx.Done():
			case <-time.After(w.s.Gather):
			}
		}
	}
}

// renew extends the claim every third of the lease until ctx ends, and
// calls lost when the claim is no longer this worker's.
func (w *Worker) renew(ctx context.Context, c *store.WebhookClaim, lost func()) {
	t := time.NewTicker(w.s.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := w.db.RenewWebhookLease(ctx, c, time.Now().Add(w.s.Lease))
		if err != nil && ctx.Err() == nil {
			w.s.Log.Warn("webhooks: renewing a claim", "endpoint", c.EndpointID, "error", err.Error())
		}
		if err == nil && !held {
			w.s.Log.Warn("webhooks: claim lost; another replica sends to the endpoint now", "endpoint", c.EndpointID)
			lost()
			return
		}
	}
}

// deliver sends the due deliveries of one claim; see send.
func (w *Worker) deliver(ctx context.Context, c store.WebhookClaim) (store.WebhookRound, error) {
	var round store.WebhookRound
	due, err := w.db.DueWebhooks(ctx, c, time.Now(), w.s.Batch)
	if err != nil {
		return round, err
	}
	for _, d := range due {
		if ctx.Err() != nil {
			break // stopping, or the claim was lost: the rest stay pending
		}
		at := time.Now()
		o := post(ctx, w.client, w.s.Timeout, c.URL, c.Secret, d.Notification.ID, view.NotificationBody(d.Notification))
		if o.err != "" && ctx.Err() != nil && !o.timedOut(w.s.Timeout) {
			break // cut short by the stop, not the endpoint's doing: sent again later
		}
		round.Attempts = append(round.Attempts, store.WebhookAttemptResult{
			DeliveryID: d.DeliveryID, AttemptedAt: at.UTC(), StatusCode: o.status, Latency: o.latency, Error: o.err,
		})
		if o.err == "" {
			round.Delivered = append(round.Delivered, d.DeliveryID)
			w.s.Metrics.WebhookAttempted("delivered")
			w.s.Metrics.WebhookDelivered(time.Since(d.Notification.CreatedAt))
			continue
		}
		since := at.UTC()
		if d.RetrySince != nil {
			since = *d.RetrySince
		}
		round.Undone, round.RetrySince = d.DeliveryID, &since
		round.RetryAt = at.Add(w.backoff(d.AttemptCount + 1)).UTC()
		if at.Sub(since) >= w.s.RetryFor {
			round.Failed = true
			w.s.Metrics.WebhookAttempted("failed")
			w.s.Log.Info("webhooks: delivery failed, retries exhausted", "endpoint", c.EndpointID, "delivery", d.DeliveryID, "error", o.err)
		} else {
			w.s.Metrics.WebhookAttempted("retry")
		}
		break
	}
	return round, nil
}

// timedOut reports whether the outcome was the request's own timeout.
func (o outcome) timedOut(timeout time.Duration) bool {
	return o.latency >= timeout
}

// backoff is the wait after a delivery's n-th failed attempt: RetryBase
// doubled n-1 times, at most RetryMax, give or take a fifth.
func (w *Worker) backoff(n int) time.Duration {
	d := w.s.RetryBase
	for i := 1; i < n && d < w.s.RetryMax; i++ {
		d *= 2
	}
	d = min(d, w.s.RetryMax)
	spread := d / 5
	if spread <= 0 {
		return d
	}
	return d - spread + rand.N(2*spread)
}
