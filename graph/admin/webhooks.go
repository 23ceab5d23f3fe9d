package admin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/schema"
	"barberd/ent/webhookattempt"
	"barberd/ent/webhookdelivery"
	"barberd/ent/webhookendpoint"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/netsafe"
	"barberd/graph/paging"
	"barberd/graph/store"
)

// Webhook endpoints and their delivery log, managed by admins
// (graph/schema/webhooks.graphqls). Deliveries are written with each
// notification (record), and sent by package webhook, which this process's
// commits wake (WebhookWake); the queue's reads and writes are in
// graph/store.

// MaxWebhookEndpoints is the most webhook endpoints one account has.
const MaxWebhookEndpoints = 20

// MaxWebhookAttemptsShown is how many attempts of a delivery its log shows
// (the newest).
const MaxWebhookAttemptsShown = 50

// newWebhookSecret returns a signing secret in the Standard Webhooks form:
// whsec_ and the base64 of 32 random bytes.
func newWebhookSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// checkWebhookFields records what is wrong with an endpoint's url, event
// types and description (nil: not given).
func (a *Admin) checkWebhookFields(p *domain.Problems, url *string, types []string, description *string) {
	if url != nil && domain.CheckText(p, "url", *url) {
		if why := netsafe.CheckURL(*url, a.allowPrivate); why != "" {
			p.Add("url", "%s", why)
		}
	}
	seen := map[string]bool{}
	for i, t := range types {
		field := "eventTypes[" + strconv.Itoa(i) + "]"
		switch {
		case !slices.Contains(domain.EventTypes, t):
			p.Add(field, "must be one of %s", strings.Join(domain.EventTypes, ", "))
		case seen[t]:
			p.Add(field, "is listed twice")
		}
		seen[t] = true
	}
	if description != nil && domain.CheckText(p, "description", *description) {
		domain.CheckLength(p, "description", *description, 0, 500)
	}
}

// CreateWebhookEndpoint adds an enabled endpoint to the caller's account and
// returns it with its secret, shown only this once.
// Errors: validation_failed, catalog_full.
func (a *Admin) CreateWebhookEndpoint(ctx context.Context, in model.CreateWebhookEndpointInput) (*model.WebhookEndpointSecretPayload, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	var p domain.Problems
	a.checkWebhookFields(&p, &in.URL, in.EventTypes, in.Description)
	if err := p.Err(); err != nil {
		return nil, err
	}
	secret := newWebhookSecret()
	var e *ent.WebhookEndpoint
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		err := a.db.Capped(func() error {
			_, err := tx.Account.Query().Where(account.ID(v.AccountID)).Unique(false).Select(account.FieldID).Modify(store.NoKeyUpdate).Strings(ctx)
			return err
		}, func() (int, error) { return tx.WebhookEndpoint.Query().Count(ctx) }, MaxWebhookEndpoints, func() error {
			return domain.Errorf(domain.CodeCatalogFull, "The account already has %d webhook endpoints, the most it may have: delete one first, or send more event types to one.", MaxWebhookEndpoints)
		})
		if err != nil {
			return err
		}
		c := tx.WebhookEndpoint.Create().SetAccountID(v.AccountID).SetURL(in.URL).
			SetEventTypes(orEmpty(in.EventTypes)).SetSecret(secret)
		if in.Description != nil {
			c.SetDescription(strings.TrimSpace(*in.Description))
		}
		e, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model.WebhookEndpointSecretPayload{Secret: secret, Endpoint: e}, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WebhookEndpoints lists the account's endpoints, oldest first.
func (a *Admin) WebhookEndpoints(ctx context.Context) ([]*ent.WebhookEndpoint, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	return a.db.WebhookEndpoint.Query().
		Order(webhookendpoint.ByCreatedAt(), webhookendpoint.ByID()).Limit(MaxWebhookEndpoints).All(ctx)
}

// webhookEndpoint returns one endpoint of the caller's account, read
// through c (a client, or a transaction's). Errors: not_found.
func webhookEndpoint(ctx context.Context, c *ent.Client, id string) (*ent.WebhookEndpoint, error) {
	if !domain.PlausibleID(id) {
		return nil, domain.Errorf(domain.CodeNotFound, "No webhook endpoint %q.", id)
	}
	e, err := c.WebhookEndpoint.Get(ctx, id)
	return e, domain.NotFound(err, domain.CodeNotFound, "webhook endpoint", id)
}

// UpdateWebhookEndpoint changes what the input gives of an endpoint.
// Errors: not_found, validation_failed.
func (a *Admin) UpdateWebhookEndpoint(ctx context.Context, id string, in model.UpdateWebhookEndpointInput) (*ent.WebhookEndpoint, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	var p domain.Problems
	a.checkWebhookFields(&p, in.URL, in.EventTypes, in.Description)
	if err := p.Err(); err != nil {
		return nil, err
	}
	var e *ent.WebhookEndpoint
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		if e, err = webhookEndpoint(ctx, tx.Client(), id); err != nil {
			return err
		}
		u := tx.WebhookEndpoint.UpdateOne(e)
		if in.URL != nil {
			u.SetURL(*in.URL)
		}
		if in.EventTypes != nil {
			u.SetEventTypes(in.EventTypes)
		}
		if in.Enabled != nil {
			u.SetEnabled(*in.Enabled)
		}
		if in.Description != nil {
			u.SetDescription(strings.TrimSpace(*in.Description))
		}
		if e, err = u.Save(ctx); err != nil || (in.URL == nil && in.Enabled == nil) {
			return err
		}
		return store.EndWebhookBackoff(ctx, tx, e.ID) // a new address, or enabled again: try it now
	})
	if err != nil {
		return nil, err
	}
	if in.URL != nil || (in.Enabled != nil && *in.Enabled) {
		a.webhooks.Wake(e.ID) // what waited for it is due
	}
	return e, nil
}

// RotateWebhookSecret gives an endpoint a new secret and returns it, shown
// only this once. Errors: not_found.
func (a *Admin) RotateWebhookSecret(ctx context.Context, id string) (*model.WebhookEndpointSecretPayload, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	secret := newWebhookSecret()
	var e *ent.WebhookEndpoint
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		if e, err = webhookEndpoint(ctx, tx.Client(), id); err != nil {
			return err
		}
		e, err = tx.WebhookEndpoint.UpdateOne(e).SetSecret(secret).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model.WebhookEndpointSecretPayload{Secret: secret, Endpoint: e}, nil
}

// DeleteWebhookEndpoint deletes an endpoint; its deliveries and their
// attempts go with it (ON DELETE CASCADE). Errors: not_found.
func (a *Admin) DeleteWebhookEndpoint(ctx context.Context, id string) (string, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return "", err
	}
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		e, err := webhookEndpoint(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		return tx.WebhookEndpoint.DeleteOne(e).Exec(ctx)
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// WebhookDeliveries is an endpoint's delivery log, newest first, with the
// attempts of the page's deliveries read in one more query.
// Errors: not_found, validation_failed.
func (a *Admin) WebhookDeliveries(ctx context.Context, endpointID string, after *entgql.Cursor[string], first *int) (*ent.WebhookDeliveryConnection, error) {
	first, err := paging.AdminPage(ctx, first, nil)
	if err != nil {
		return nil, err
	}
	if _, err := webhookEndpoint(ctx, a.db.Client, endpointID); err != nil {
		return nil, err
	}
	newest := &ent.WebhookDeliveryOrder{Direction: entgql.OrderDirectionDesc, Field: ent.WebhookDeliveryOrderFieldCreatedAt}
	conn, err := a.db.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpointID)).
		Paginate(ctx, after, first, nil, nil, ent.WithWebhookDeliveryOrder(newest))
	if err != nil || len(conn.Edges) == 0 {
		return conn, err
	}
	ids := make([]string, len(conn.Edges))
	byID := map[string]*ent.WebhookDelivery{}
	for i, e := range conn.Edges {
		ids[i] = e.Node.ID
		byID[e.Node.ID] = e.Node
		e.Node.Edges.Attempts = []*ent.WebhookAttempt{}
	}
	as, err := a.db.WebhookAttempt.Query().Where(webhookattempt.DeliveryIDIn(ids...)).
		Order(newestAttemptsFirst...).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		d := byID[a.DeliveryID]
		if len(d.Edges.Attempts) < MaxWebhookAttemptsShown {
			d.Edges.Attempts = append(d.Edges.Attempts, a)
		}
	}
	return conn, nil
}

// WebhookAttempts are a delivery's newest attempts, newest first: those
// WebhookDeliveries read, or read now.
func (a *Admin) WebhookAttempts(ctx context.Context, d *ent.WebhookDelivery) ([]*ent.WebhookAttempt, error) {
	if as, err := d.Edges.AttemptsOrErr(); err == nil {
		return as, nil
	}
	return a.db.WebhookAttempt.Query().Where(webhookattempt.DeliveryID(d.ID)).
		Order(newestAttemptsFirst...).Limit(MaxWebhookAttemptsShown).All(ctx)
}

// newestAttemptsFirst is the order of a delivery's attempts in its log.
var newestAttemptsFirst = []webhookattempt.OrderOption{
	webhookattempt.ByAttemptedAt(sql.OrderDesc()), webhookattempt.ByID(sql.OrderDesc()),
}

// RedeliverWebhook makes a delivery pending again and due now, whatever its
// status, with another full period of retries. Errors: not_found.
func (a *Admin) RedeliverWebhook(ctx context.Context, id string) (*ent.WebhookDelivery, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	if !domain.PlausibleID(id) {
		return nil, domain.Errorf(domain.CodeNotFound, "No webhook delivery %q.", id)
	}
	var d *ent.WebhookDelivery
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		d, err = tx.WebhookDelivery.Get(ctx, id)
		if err != nil {
			return domain.NotFound(err, domain.CodeNotFound, "webhook delivery", id)
		}
		d, err = tx.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusPending).
			SetNextAttemptAt(schema.Now()).ClearRetrySince().ClearDeliveredAt().Save(ctx)
		if err != nil {
			return err
		}
		return store.EndWebhookBackoff(ctx, tx, d.EndpointID)
	})
	if err != nil {
		return nil, err
	}
	a.webhooks.Wake(d.EndpointID)
	return d, nil
}
