package graph

import (
	"context"
	"encoding/json"
	"time"

	"barberd/graph/admin"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/delivery"
	"barberd/ent/notification"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/rest/view"
)

// notifyLoaded records an event about an appointment, inside the
// transaction that made the change, owes it to every key of the account
// that may read notifications and to its webhooks, and returns the
// appointment as it recorded it, with its unit, service and barber, all
// read in the transaction.
func (r *Resolver) notifyLoaded(ctx context.Context, tx *ent.Tx, appointmentID, typ string, source notification.Source, previous *time.Time) (*ent.Appointment, error) {
	a, err := r.loadAppointment(ctx, tx.Client(), appointmentID)
	if err != nil {
		return nil, err
	}
	return a, r.record(ctx, tx, a, typ, source, previous)
}

// record is notifyLoaded for an appointment whose unit, service and barber
// edges the caller has already set, as they are after the change. The
// snapshot shows the client as recorded on the appointment; store.Notify
// says what the writes cost.
func (r *Resolver) record(ctx context.Context, tx *ent.Tx, a *ent.Appointment, typ string, source notification.Source, previous *time.Time) error {
	v, err := view.AppointmentOf(a)
	if err != nil {
		return err
	}
	snapshot, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return r.notify(ctx, tx, store.Note{Notification: &ent.Notification{
		ID: notification.DefaultID(), AccountID: a.AccountID, Type: typ, AppointmentID: &a.ID,
		Source: source, PreviousStartsAt: previous,
		CreatedAt: notification.DefaultCreatedAt(),
	}, Appointment: snapshot})
}

// notify writes n and owes it to the keys and webhooks it is for.
func (r *Resolver) notify(ctx context.Context, tx *ent.Tx, n store.Note) error {
	known, ok := r.cache.rooms.Get(n.AccountID)
	if !ok {
		known = store.Room{Keys: store.FedKeys, Webhooks: admin.MaxWebhookEndpoints}
	}
	room := known
	if n.APIKeyID != nil {
		room.Keys = 1 // owed to that key alone, if it may read notifications
	}
	owed, err := store.Notify(ctx, tx, r.cfg.DB.Dialect, n, domain.ScopeNotificationsRead, room)
	if err != nil {
		return err
	}
	fits := owed.Room(admin.MaxWebhookEndpoints)
	if n.APIKeyID != nil {
		fits.Keys = known.Keys // it says nothing of the account's other keys
	}
	if fits != known {
		r.cache.rooms.Put(n.AccountID, fits)
	}
	store.OnCommit(tx, func() { r.metrics().NotificationWritten(n.Type) })
	if len(owed.Endpoints) > 0 {
		store.OnCommit(tx, func() { r.webhooks.Wake(owed.Endpoints...) })
	}
	return nil
}

// pendingNotifications returns up to limit notifications still owed to the
// calling key, oldest first. With consume they are then no longer pending
// for the key: two concurrent callers never get the same one.
// Errors: validation_failed.
func (r *Resolver) pendingNotifications(ctx context.Context, limit *int, consume bool) ([]*ent.Notification, error) {
	v, err := domain.Require(ctx, domain.ScopeNotificationsRead)
	if err != nil {
		return nil, err
	}
	if err := r.CheckNotificationsLimit(limit).Err(); err != nil {
		return nil, err
	}
	n := r.cfg.Limits.NotificationsDefault
	if limit != nil {
		n = *limit
	}
	pending := func(c *ent.Client) *ent.DeliveryQuery {
		return c.Delivery.Query().
			Where(delivery.APIKeyID(v.KeyID), delivery.DeliveredAtIsNil()).
			Order(delivery.ByNotificationID()).Limit(n).WithNotification()
	}
	if !consume {
		ds, err := pending(r.cfg.DB.Client).All(ctx)
		return notificationsOf(ds), err
	}
	if store.ClaimsInOne(r.cfg.DB.Dialect) {
		return r.cfg.DB.Notification.Query().Order(notification.ByID()).
			Modify(store.ClaimPending(v.KeyID, v.AccountID, n, r.now())).All(ctx)
	}
	var ds []*ent.Delivery
	err = r.inTx(ctx, func(tx *ent.Tx) error {
		var err error
		if ds, err = store.SkipLocked(r.cfg.DB.Dialect, pending(tx.Client())).All(ctx); err != nil || len(ds) == 0 {
			return err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.ID
		}
		return tx.Delivery.Update().Where(delivery.IDIn(ids...)).SetDeliveredAt(r.now()).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return notificationsOf(ds), nil
}

func notificationsOf(ds []*ent.Delivery) []*ent.Notification {
	out := make([]*ent.Notification, len(ds))
	for i, d := range ds {
		out[i] = d.Edges.Notification
	}
	return out
}

// ackNotifications consumes every notification owed to the calling key up
// to and including the given one, and says how many that was.
// Errors: notification_not_found.
func (r *Resolver) ackNotifications(ctx context.Context, through string) (*model.AckNotificationsPayload, error) {
	v, err := domain.Require(ctx, domain.ScopeNotificationsRead)
	if err != nil {
		return nil, err
	}
	if err := CheckAck(through).Err(); err != nil {
		return nil, err
	}
	owed, err := r.cfg.DB.Delivery.Query().
		Where(delivery.APIKeyID(v.KeyID), delivery.NotificationID(through)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !owed {
		return nil, domain.Errorf(domain.CodeNotificationNotFound, "No notification %q for this API key.", through)
	}
	var count int
	err = r.inTx(ctx, func(tx *ent.Tx) error {
		var err error
		count, err = tx.Delivery.Update().
			Where(delivery.APIKeyID(v.KeyID), delivery.DeliveredAtIsNil(), delivery.NotificationIDLTE(through)).
			SetDeliveredAt(r.now()).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model.AckNotificationsPayload{Acknowledged: count}, nil
}
