package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// The webhook queue's reads and writes, for the worker every replica runs
// (package webhook, whose doc states how replicas share the work). A worker
// claims an endpoint with a lease (leased_until and a token of its own)
// before it sends anything to it; a backoff is a lease without a token
// (FinishWebhookRound). On PostgreSQL the claim skips endpoints another
// worker is claiming (FOR UPDATE SKIP LOCKED); on SQLite the claim's
// transaction holds the write lock.

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
func (db *DB) OldestDueWebhook(ctx context.Context, now time.Time) (time.Time, bool, error) {
	ds, err := db.WebhookDelivery.Query().
		Where(append(dueDelivery(now), webhookdelivery.HasEndpointWith(webhookendpoint.Enabled(true), notBackingOff(now)))...).
		Order(webhookdelivery.ByNextAttemptAt()).Limit(1).
		Select(webhookdelivery.FieldNextAttemptAt).All(tenant.System(ctx))
	if err != nil || len(ds) == 0 {
		return time.Time{}, false, err
	}
	return ds[0].NextAttemptAt, true, nil
}

// notBackingOff selects the endpoints not waiting out a failure's backoff
// at now.
func notBackingOff(now time.Time) predicate.WebhookEndpoint {
	return webhookendpoint.Or(webhookendpoint.LeasedUntilIsNil(), webhookendpoint.LeasedUntilLTE(now),
		webhookendpoint.LeaseTokenNEQ(""))
}

// EndWebhookBackoff makes an endpoint that waits out a backoff due again
// at once, in tx: an admin asked for a redelivery, or changed the endpoint.
func EndWebhookBackoff(ctx context.Context, tx *ent.Tx, endpointID string) error {
	return tx.WebhookEndpoint.Update().
		Where(webhookendpoint.ID(endpointID), webhookendpoint.LeaseToken(""), webhookendpoint.LeasedUntilNotNil()).
		ClearLeasedUntil().Exec(tenant.System(ctx))
}

// FailingWebhookEndpoints counts the enabled endpoints, of every account,
// whose last delivery to give up has not been followed by a delivered one.
func (db *DB) FailingWebhookEndpoints(ctx context.Context) (int, error) {
	return db.WebhookEndpoint.Query().
		Where(webhookendpoint.Enabled(true), webhookendpoint.FailingSinceNotNil()).Count(tenant.System(ctx))
}

// ClaimWebhookEndpoints leases, until now+lease, the endpoints pick chooses
// among up to candidates enabled endpoints (of any account) that have
// deliveries due at now and no running lease (nor backoff), read ordered by
// account from the account after the one named after, then from the first.
// It returns the claims in the order pick gave.
func (db *DB) ClaimWebhookEndpoints(ctx context.Context, now time.Time, lease time.Duration, after string, candidates int,
	pick func([]*ent.WebhookEndpoint) []*ent.WebhookEndpoint) ([]WebhookClaim, error) {
	sys := tenant.System(ctx)
	token := make([]byte, 12)
	_, _ = rand.Read(token) // never fails (crypto/rand)
	claim := WebhookClaim{Token: hex.EncodeToString(token), LeasedUntil: now.Add(lease)}
	var out []WebhookClaim
	err := db.InTx(sys, func(tx *ent.Tx) error {
		out = out[:0]
		if err := db.asyncCommit(sys, tx); err != nil {
			return err
		}
		read := func(from predicate.WebhookEndpoint, n int) ([]*ent.WebhookEndpoint, error) {
			q := tx.WebhookEndpoint.Query().
				Where(from, webhookendpoint.Enabled(true),
					webhookendpoint.Or(webhookendpoint.LeasedUntilIsNil(), webhookendpoint.LeasedUntilLTE(now)),
					webhookendpoint.HasDeliveriesWith(dueDelivery(now)...)).
				Order(webhookendpoint.ByAccountID(), webhookendpoint.ByID()).Limit(n)
			if db.Dialect == dialect.Postgres {
				q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(sys)
		}
		es, err := read(webhookendpoint.AccountIDGT(after), candidates)
		if err == nil && len(es) < candidates && after != "" {
			var more []*ent.WebhookEndpoint
			more, err = read(webhookendpoint.AccountIDLTE(after), candidates-len(es))
			es = append(es, more...)
		}
		if err != nil || len(es) == 0 {
			return err
		}
		ids := []string{}
		for _, e := range pick(es) {
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

// DueWebhooks returns up to limit deliveries of a claimed endpoint due at
// now, oldest first, with their notifications.
func (db *DB) DueWebhooks(ctx context.Context, c WebhookClaim, now time.Time, limit int) ([]WebhookSend, error) {
	ds, err := db.WebhookDelivery.Query().
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
func (db *DB) RenewWebhookLease(ctx context.Context, c *WebhookClaim, until time.Time) (bool, error) {
	n, err := db.WebhookEndpoint.Update().
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
func (db *DB) FinishWebhookRound(ctx context.Context, c *WebhookClaim, round WebhookRound, keep bool) error {
	sys := tenant.System(ctx)
	now := schema.Now() // the wall clock, as notifications' created_at
	failingSince := c.FailingSince
	err := db.InTx(sys, func(tx *ent.Tx) error {
		failingSince = c.FailingSince
		if err := db.asyncCommit(sys, tx); err != nil {
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
// transaction alone). A crash of the database may then lose the worker's
// last fraction of a second of claims and records, which only means a
// delivery goes out again (at least once); a delivery itself is inserted
// by its event's own transaction, which waits. Waiting commits here took
// turns at the disk's flush with the bookings' and slowed them down.
func (db *DB) asyncCommit(ctx context.Context, tx *ent.Tx) error {
	if db.Dialect != dialect.Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit TO OFF")
	return err
}
