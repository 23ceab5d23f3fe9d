package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/predicate"
	"barberd/ent/schema"
	"barberd/ent/schema/tenant"
	"barberd/ent/webhookdelivery"
	"barberd/ent/webhookendpoint"
)

// What the webhook worker (rest/webhook) reads and writes. Every replica
// runs one. A worker claims an endpoint with a lease (leased_until and a
// token of its own) before it sends anything to it; while the lease runs no
// other worker claims the endpoint, so two replicas never send the same
// attempt at once and one endpoint's deliveries go out one at a time, oldest
// first. A worker that dies mid-delivery leaves the delivery pending: once
// the lease runs out another worker sends it again. On PostgreSQL the claim
// skips endpoints another worker is claiming (FOR UPDATE SKIP LOCKED); on
// SQLite the claim's transaction holds the write lock.

// webhookWake is what this process has committed for its worker: the
// endpoints with deliveries due now, since the worker last asked.
type webhookWake struct {
	ch  chan struct{} // holds a value while due is not empty
	mu  sync.Mutex
	due map[string]struct{}
}

// wakeWebhooks tells this process's worker that endpoints have deliveries
// due now.
func (r *Resolver) wakeWebhooks(endpoints ...string) {
	w := &r.webhooks
	w.mu.Lock()
	for _, e := range endpoints {
		w.due[e] = struct{}{}
	}
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default: // already told
	}
}

// WebhookWake receives a value when this process has committed webhook
// deliveries due now, or made one due again; WokenWebhookEndpoints then
// says to which endpoints.
func (r *Resolver) WebhookWake() <-chan struct{} { return r.webhooks.ch }

// WokenWebhookEndpoints returns the endpoints wakes named since it was last
// called, and forgets them.
func (r *Resolver) WokenWebhookEndpoints() []string {
	w := &r.webhooks
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.due))
	for e := range w.due {
		out = append(out, e)
		delete(w.due, e)
	}
	return out
}

// WebhookClaim is an endpoint a worker holds the lease of.
type WebhookClaim struct {
	EndpointID, AccountID, URL, Secret string
	FailingSince                       *time.Time
	Token                              string
	LeasedUntil                        time.Time
}

// WebhookSend is a due delivery of a claimed endpoint.
type WebhookSend struct {
	DeliveryID   string
	Notification *ent.Notification
	AttemptCount int
	// RetrySince is when its retries started counting (nil: none yet).
	RetrySince *time.Time
}

// dueDelivery selects the pending deliveries due at now.
func dueDelivery(now time.Time) []predicate.WebhookDelivery {
	return []predicate.WebhookDelivery{
		webhookdelivery.StatusEQ(webhookdelivery.StatusPending),
		webhookdelivery.NextAttemptAtLTE(now),
	}
}

// OldestDueWebhook returns when the longest-waiting pending delivery of an
// enabled endpoint not backing off became due, if one is due at now: a
// read of the index on (status, next_attempt_at).
func (r *Resolver) OldestDueWebhook(ctx context.Context, now time.Time) (time.Time, bool, error) {
	ds, err := r.cfg.DB.WebhookDelivery.Query().
		Where(append(dueDelivery(now), webhookdelivery.HasEndpointWith(webhookendpoint.Enabled(true), notBackingOff(now)))...).
		Order(webhookdelivery.ByNextAttemptAt()).Limit(1).
		Select(webhookdelivery.FieldNextAttemptAt).All(tenant.System(ctx))
	if err != nil || len(ds) == 0 {
		return time.Time{}, false, err
	}
	return ds[0].NextAttemptAt, true, nil
}

// notBackingOff selects the endpoints not waiting out a failure's backoff
// at now: a backoff is a lease without a token (FinishWebhookRound).
func notBackingOff(now time.Time) predicate.WebhookEndpoint {
	return webhookendpoint.Or(webhookendpoint.LeasedUntilIsNil(), webhookendpoint.LeasedUntilLTE(now),
		webhookendpoint.LeaseTokenNEQ(""))
}

// endWebhookBackoff makes an endpoint that waits out a backoff due again
// at once: an admin asked for a redelivery, or changed the endpoint.
func endWebhookBackoff(ctx context.Context, tx *ent.Tx, endpointID string) error {
	return tx.WebhookEndpoint.Update().
		Where(webhookendpoint.ID(endpointID), webhookendpoint.LeaseToken(""), webhookendpoint.LeasedUntilNotNil()).
		ClearLeasedUntil().Exec(tenant.System(ctx))
}

// FailingWebhookEndpoints counts the enabled endpoints, of every account,
// whose last delivery to give up has not been followed by a delivered one.
func (r *Resolver) FailingWebhookEndpoints(ctx context.Context) (int, error) {
	return r.cfg.DB.WebhookEndpoint.Query().
		Where(webhookendpoint.Enabled(true), webhookendpoint.FailingSinceNotNil()).Count(tenant.System(ctx))
}

// WebhookShare is how a worker shares its senders among accounts, so that
// one account's slow or failing endpoints cannot take them all: at most
// PerAccount endpoints of one account at once (Held counts those the worker
// holds now, by account), and accounts in turn, from the one after After
// (the account the worker's last claim ended with).
type WebhookShare struct {
	PerAccount int // 0: no cap
	Held       map[string]int
	After      string
}

// claimCandidates is how many claimable endpoints a claim reads beyond
// its limit: enough for one account's every endpoint and then others.
const claimCandidates = MaxWebhookEndpoints * 2

// ClaimWebhookEndpoints leases, until now+lease, up to limit enabled
// endpoints (of any account) that have deliveries due at now and no running
// lease (nor backoff, see FinishWebhookRound), shared among accounts as
// share says. It returns the claims in the order taken.
func (r *Resolver) ClaimWebhookEndpoints(ctx context.Context, now time.Time, lease time.Duration, limit int, share WebhookShare) ([]WebhookClaim, error) {
	sys := tenant.System(ctx)
	token := make([]byte, 12)
	_, _ = rand.Read(token) // never fails (crypto/rand)
	claim := WebhookClaim{Token: hex.EncodeToString(token), LeasedUntil: now.Add(lease)}
	var out []WebhookClaim
	err := r.inTx(sys, func(tx *ent.Tx) error {
		out = out[:0]
		if err := r.asyncCommit(sys, tx); err != nil {
			return err
		}
		// Round robin by account: those after share.After first, then the
		// rest from the start.
		read := func(from predicate.WebhookEndpoint, n int) ([]*ent.WebhookEndpoint, error) {
			q := tx.WebhookEndpoint.Query().
				Where(from, webhookendpoint.Enabled(true),
					webhookendpoint.Or(webhookendpoint.LeasedUntilIsNil(), webhookendpoint.LeasedUntilLTE(now)),
					webhookendpoint.HasDeliveriesWith(dueDelivery(now)...)).
				Order(webhookendpoint.ByAccountID(), webhookendpoint.ByID()).Limit(n)
			if r.cfg.DB.Dialect == dialect.Postgres {
				q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(sys)
		}
		want := limit + claimCandidates
		es, err := read(webhookendpoint.AccountIDGT(share.After), want)
		if err == nil && len(es) < want && share.After != "" {
			var more []*ent.WebhookEndpoint
			more, err = read(webhookendpoint.AccountIDLTE(share.After), want-len(es))
			es = append(es, more...)
		}
		if err != nil || len(es) == 0 {
			return err
		}
		ids := []string{}
		for _, e := range fairPick(es, limit, share) {
			ids = append(ids, e.ID)
			c := claim
			c.EndpointID, c.AccountID, c.URL, c.Secret, c.FailingSince = e.ID, e.AccountID, e.URL, e.Secret, e.FailingSince
			out = append(out, c)
		}
		if len(ids) == 0 {
			return nil
		}
		return tx.WebhookEndpoint.Update().Where(webhookendpoint.IDIn(ids...)).
			SetLeasedUntil(claim.LeasedUntil).SetLeaseToken(claim.Token).Exec(sys)
	})
	return out, err
}

// fairPick takes up to limit of es (grouped by account, accounts in turn)
// one account at a time in turn, each up to its share.
func fairPick(es []*ent.WebhookEndpoint, limit int, share WebhookShare) []*ent.WebhookEndpoint {
	var accounts []string
	byAccount := map[string][]*ent.WebhookEndpoint{}
	for _, e := range es {
		if _, ok := byAccount[e.AccountID]; !ok {
			accounts = append(accounts, e.AccountID)
		}
		byAccount[e.AccountID] = append(byAccount[e.AccountID], e)
	}
	taken := map[string]int{}
	var out []*ent.WebhookEndpoint
	for more := true; more && len(out) < limit; {
		more = false
		for _, a := range accounts {
			left := byAccount[a]
			if len(out) == limit || len(left) == 0 ||
				(share.PerAccount > 0 && share.Held[a]+taken[a] >= share.PerAccount) {
				continue
			}
			out = append(out, left[0])
			byAccount[a] = left[1:]
			taken[a]++
			more = true
		}
	}
	return out
}

// DueWebhooks returns up to limit deliveries of a claimed endpoint due at
// now, oldest first, with their notifications.
func (r *Resolver) DueWebhooks(ctx context.Context, c WebhookClaim, now time.Time, limit int) ([]WebhookSend, error) {
	ds, err := r.cfg.DB.WebhookDelivery.Query().
		Where(append(dueDelivery(now), webhookdelivery.EndpointID(c.EndpointID))...).
		Order(webhookdelivery.ByCreatedAt(), webhookdelivery.ByID()).Limit(limit).
		WithNotification().All(tenant.System(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]WebhookSend, len(ds))
	for i, d := range ds {
		out[i] = WebhookSend{DeliveryID: d.ID, Notification: d.Edges.Notification, AttemptCount: d.AttemptCount, RetrySince: d.RetrySince}
	}
	return out, nil
}

// RenewWebhookLease extends a claim's lease to until, and reports whether
// the claim still held it.
func (r *Resolver) RenewWebhookLease(ctx context.Context, c *WebhookClaim, until time.Time) (bool, error) {
	n, err := r.cfg.DB.WebhookEndpoint.Update().
		Where(webhookendpoint.ID(c.EndpointID), webhookendpoint.LeaseToken(c.Token)).
		SetLeasedUntil(until).Save(tenant.System(ctx))
	if err == nil && n == 1 {
		c.LeasedUntil = until
	}
	return n == 1, err
}

// WebhookAttemptResult is one request a worker sent, and what came of it.
type WebhookAttemptResult struct {
	DeliveryID  string
	AttemptedAt time.Time
	StatusCode  *int
	Latency     time.Duration
	Error       string // "": delivered
}

// WebhookRound is what one claim of an endpoint did: its attempts, in
// order, and then at most one delivery that was not delivered, to be tried
// again at RetryAt or given up (Failed); either way the endpoint is not
// claimed again before RetryAt.
type WebhookRound struct {
	Attempts   []WebhookAttemptResult
	Delivered  []string
	Undone     string     // the delivery not delivered, if any
	RetryAt    time.Time  // when Undone (unless Failed) and the endpoint are due again
	RetrySince *time.Time // Undone's retries count from here
	Failed     bool       // Undone gave up
}

// FinishWebhookRound records a round and, unless keep, releases the claim,
// in one transaction of a few statements whatever the round's size: the
// attempts in one insert, the delivered in one update, the delivery not
// delivered, and the endpoint (its lease, and failing_since: set when a
// delivery gave up, cleared by a delivered one; c follows). A worker keeps
// the claim to send the next round at once, while deliveries keep coming;
// the endpoint's row is then written only if failing_since changes.
func (r *Resolver) FinishWebhookRound(ctx context.Context, c *WebhookClaim, round WebhookRound, keep bool) error {
	sys := tenant.System(ctx)
	now := schema.Now() // the wall clock, as notifications' created_at
	failingSince := c.FailingSince
	err := r.inTx(sys, func(tx *ent.Tx) error {
		failingSince = c.FailingSince
		if err := r.asyncCommit(sys, tx); err != nil {
			return err
		}
		if len(round.Attempts) > 0 {
			as := make([]*ent.WebhookAttemptCreate, len(round.Attempts))
			for i, a := range round.Attempts {
				as[i] = tx.WebhookAttempt.Create().SetAccountID(c.AccountID).SetDeliveryID(a.DeliveryID).
					SetAttemptedAt(a.AttemptedAt).SetNillableStatusCode(a.StatusCode).
					SetLatencyMs(int(a.Latency.Milliseconds())).SetError(a.Error)
			}
			if err := tx.WebhookAttempt.CreateBulk(as...).Exec(sys); err != nil {
				return err
			}
		}
		if len(round.Delivered) > 0 {
			err := tx.WebhookDelivery.Update().
				Where(webhookdelivery.IDIn(round.Delivered...), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
				SetStatus(webhookdelivery.StatusDelivered).SetDeliveredAt(now).AddAttemptCount(1).Exec(sys)
			if err != nil {
				return err
			}
		}
		e := tx.WebhookEndpoint.Update().
			Where(webhookendpoint.ID(c.EndpointID), webhookendpoint.LeaseToken(c.Token))
		endpointChanged := !keep
		switch {
		case !keep && round.Undone != "":
			// The endpoint backs off: no worker claims it before RetryAt,
			// so a failing endpoint is never picked again at once, and
			// its later deliveries wait with the one that failed.
			e.SetLeasedUntil(round.RetryAt).SetLeaseToken("")
		case !keep:
			e.ClearLeasedUntil().SetLeaseToken("")
		}
		if round.Undone != "" {
			u := tx.WebhookDelivery.Update().
				Where(webhookdelivery.ID(round.Undone), webhookdelivery.StatusEQ(webhookdelivery.StatusPending)).
				AddAttemptCount(1).SetNillableRetrySince(round.RetrySince)
			if round.Failed {
				u.SetStatus(webhookdelivery.StatusFailed)
				if c.FailingSince == nil {
					e.SetFailingSince(now)
					failingSince, endpointChanged = &now, true
				}
			} else {
				u.SetNextAttemptAt(round.RetryAt)
			}
			if err := u.Exec(sys); err != nil {
				return err
			}
		} else if len(round.Delivered) > 0 && c.FailingSince != nil {
			e.ClearFailingSince()
			failingSince, endpointChanged = nil, true
		}
		if !endpointChanged {
			// Every booking with the endpoint subscribed reads its row, and
			// its deliveries' foreign key locks it: a round that changes
			// nothing of it leaves it alone.
			return nil
		}
		return e.Exec(sys)
	})
	if err == nil {
		c.FailingSince = failingSince
	}
	return err
}

// asyncCommit makes tx commit, on PostgreSQL, without waiting for its
// write-ahead log to reach the disk (synchronous_commit off, for this
// transaction alone). The worker's claims and records of rounds are such:
// a crash of the database may lose their last fraction of a second, and a
// lost claim or record only means a delivery goes out again, which
// at-least-once delivery allows; nothing that must arrive is lost, since a
// delivery is inserted by its event's own transaction, which waits. A
// commit that waits takes its turn at the disk's flush with the commits of
// bookings, and with one flush per round, deliveries slowed bookings down.
func (r *Resolver) asyncCommit(ctx context.Context, tx *ent.Tx) error {
	if r.cfg.DB.Dialect != dialect.Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit TO OFF")
	return err
}

// ReleaseWebhookClaim gives a claim's lease up without recording anything.
func (r *Resolver) ReleaseWebhookClaim(ctx context.Context, c WebhookClaim) error {
	return r.cfg.DB.WebhookEndpoint.Update().
		Where(webhookendpoint.ID(c.EndpointID), webhookendpoint.LeaseToken(c.Token)).
		ClearLeasedUntil().SetLeaseToken("").Exec(tenant.System(ctx))
}
