package store_test

import (
	"context"
	"slices"
	"testing"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/notification"
	"barberd/ent/schema/tenant"
	"barberd/ent/webhookdelivery"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// A notification's statement finds the enabled endpoints whose types match
// and, on PostgreSQL, inserts their deliveries, due at once, with the ids it
// is given, as many as it has ids for; the others (all of them on SQLite)
// are left to the caller, named by Endpoints and not Queued.
func TestInsertNotificationWebhookDeliveries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, keys := gqltest.Resolver(t, db)
		sys := tenant.System(context.Background())
		booked := gqltest.Client(t, res, keys.APIKey)(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`,
			map[string]any{"in": map[string]any{"unitId": keys.IDs["Barbearia Chiado"], "serviceId": keys.IDs["Haircut"], "startsAt": "2027-03-02T10:00:00",
				"client": map[string]any{"name": "Ana Costa", "phone": "+351912345678"}}}).OK(t)
		aptID := booked["createAppointment"].(map[string]any)["appointment"].(map[string]any)["id"].(string)
		endpoint := func(enabled bool, types ...string) string {
			return db.WebhookEndpoint.Create().SetAccountID(keys.AccountID).SetURL("https://crm.example/hook").
				SetEventTypes(append([]string{}, types...)).SetSecret("whsec_x").SetEnabled(enabled).SaveX(sys).ID
		}
		want := []string{endpoint(true), endpoint(true, "appointment.cancelled", "appointment.created"), endpoint(true)}
		endpoint(false)                         // disabled
		endpoint(true, "appointment.cancelled") // another type
		slices.Sort(want)

		n := store.Note{Notification: &ent.Notification{ID: notification.DefaultID(), AccountID: keys.AccountID, Type: "appointment.created",
			AppointmentID: &aptID, Source: notification.SourceAPI,
			CreatedAt: notification.DefaultCreatedAt()}, Appointment: []byte(`{}`)}
		ids := []string{webhookdelivery.DefaultID(), webhookdelivery.DefaultID()} // one fewer than endpoints
		var owed store.Owed
		tx, err := db.Tx(sys)
		if err != nil {
			t.Fatal(err)
		}
		if owed, err = store.InsertNotification(sys, tx, db.Dialect, n, "notifications:read", store.DeliveryIDs{Webhooks: ids}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(owed.Endpoints, want) {
			t.Fatalf("endpoints %v, want %v", owed.Endpoints, want)
		}
		ds := db.WebhookDelivery.Query().Where(webhookdelivery.NotificationID(n.ID)).AllX(sys)
		wantQueued := 0
		if db.Dialect == dialect.Postgres {
			wantQueued = len(ids)
		}
		if len(owed.Queued) != wantQueued || len(ds) != wantQueued {
			t.Fatalf("queued %v and %d deliveries, want %d", owed.Queued, len(ds), wantQueued)
		}
		for _, d := range ds {
			if !slices.Contains(ids, d.ID) || !slices.Contains(owed.Queued, d.EndpointID) || !slices.Contains(want, d.EndpointID) ||
				d.Status != webhookdelivery.StatusPending || d.AttemptCount != 0 || d.AccountID != keys.AccountID ||
				!d.NextAttemptAt.Equal(n.CreatedAt) || !d.CreatedAt.Equal(n.CreatedAt) {
				t.Errorf("delivery %+v", d)
			}
		}
	})
}
