package rest_test

import (
	"bytes"
	"net/http"
	"testing"

	"barberd/rest/view"
)

// A phone number is not an account. A create with a phone on file updates
// the account's customer record (what dashboards search), but never what an
// earlier appointment shows, and never answers with what someone else gave
// before: every appointment shows the client as given when it was booked,
// in its reads, its changes' answers and its notifications.
func TestClientHistory(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reader := e.ntReader()
		email := func(s string) *string { return &s }
		// snapshots are the client of each notification about an
		// appointment, oldest first, as the feed shows them.
		snapshots := func(e *env, id string) (clients []view.Client) {
			e.t.Helper()
			r := e.do("GET", "/notifications/pending?peek=true&limit=200", reader, nil)
			expect(e.t, r, http.StatusOK, "")
			for _, n := range ntList(e.t, r) {
				if n.AppointmentID == id {
					clients = append(clients, n.Appointment.Client)
				}
			}
			return clients
		}
		client := func(e *env, a view.Appointment, want view.Client, what string) {
			e.t.Helper()
			if got := a.Client; got.ID != want.ID || got.Name != want.Name || got.Phone != want.Phone ||
				(got.Email == nil) != (want.Email == nil) || (got.Email != nil && *got.Email != *want.Email) {
				e.t.Errorf("%s: client %+v, want %+v", what, show(got), show(want))
			}
		}

		t.Run("an earlier appointment keeps its client", func(t *testing.T) {
			e := e.apOn(t)
			const phone = "+351955555501"
			b1 := e.apBody(haircut, "2027-03-04T10:00:00", joao)
			b1["client"] = map[string]any{"name": "Ana Costa", "phone": phone, "email": "ana@example.com"}
			first := e.apCreate(b1)
			ana := view.Client{ID: first.Client.ID, Name: "Ana Costa", Phone: phone, Email: email("ana@example.com")}
			client(e, first, ana, "first create")

			b2 := e.apBody(haircut, "2027-03-04T11:00:00", joao)
			b2["client"] = map[string]any{"name": "Bruno Dias", "phone": phone, "email": "bruno@example.com"}
			second := e.apCreate(b2)
			client(e, second, view.Client{ID: ana.ID, Name: "Bruno Dias", Phone: phone, Email: email("bruno@example.com")}, "second create")

			r := e.apGet("/appointments/" + first.ID)
			expect(t, r, http.StatusOK, "")
			client(e, apView(t, r), ana, "GET of the first after the second")
			r = e.apPost("/appointments/"+first.ID+"/reschedule", map[string]any{"starts_at": "2027-03-04T11:30:00"})
			expect(t, r, http.StatusOK, "")
			client(e, apView(t, r), ana, "reschedule of the first")
			r = e.apPost("/appointments/"+first.ID+"/cancel", map[string]any{"reason": "changed plans"})
			expect(t, r, http.StatusOK, "")
			client(e, apView(t, r), ana, "cancel of the first")

			clients := snapshots(e, first.ID)
			if len(clients) != 3 {
				t.Fatalf("%d notifications of the first, want created, rescheduled, cancelled", len(clients))
			}
			for _, c := range clients {
				client(e, view.Appointment{Client: c}, ana, "a notification of the first")
			}

			// The account's record took the newest name and e-mail.
			c := e.db.Customer.GetX(e.ctx, ana.ID)
			if c.Name != "Bruno Dias" || c.Email != "bruno@example.com" {
				t.Errorf("customer record %q %q, want the newest name and e-mail", c.Name, c.Email)
			}
		})

		t.Run("a create answers with what it sent", func(t *testing.T) {
			e := e.apOn(t)
			const phone = "+351955555502"
			b1 := e.apBody(haircut, "2027-03-04T14:00:00", joao)
			b1["client"] = map[string]any{"name": "Carla Reis", "phone": phone, "email": "carla@example.com"}
			first := e.apCreate(b1)

			// Someone else gives Carla's phone, without an e-mail.
			b2 := e.apBody(haircut, "2027-03-04T15:00:00", joao)
			b2["client"] = map[string]any{"name": "Daniel Melo", "phone": phone}
			r := e.apPost("/appointments", b2)
			expect(t, r, http.StatusCreated, "")
			second := apView(t, r)
			client(e, second, view.Client{ID: first.Client.ID, Name: "Daniel Melo", Phone: phone}, "second create")
			if bytes.Contains(r.Body, []byte("carla")) || bytes.Contains(r.Body, []byte("Carla")) {
				t.Errorf("the second create answers with Carla's data: %s", r.Body)
			}
			r = e.apGet("/appointments/" + second.ID)
			expect(t, r, http.StatusOK, "")
			client(e, apView(t, r), second.Client, "GET of the second")

			clients := snapshots(e, second.ID)
			if len(clients) != 1 {
				t.Fatalf("%d notifications of the second, want 1", len(clients))
			}
			client(e, view.Appointment{Client: clients[0]}, second.Client, "the second's notification")

			// The record keeps the e-mail the second create left out.
			if c := e.db.Customer.GetX(e.ctx, first.Client.ID); c.Name != "Daniel Melo" || c.Email != "carla@example.com" {
				t.Errorf("customer record %q %q", c.Name, c.Email)
			}
		})

		t.Run("a replay answers with its own appointment's client", func(t *testing.T) {
			e := e.apOn(t)
			const phone = "+351955555503"
			b1 := e.apBody(haircut, "2027-03-04T16:00:00", joao)
			b1["client"] = map[string]any{"name": "Eva Lopes", "phone": phone, "email": "eva@example.com"}
			b1["external_reference"] = "history-replay"
			first := e.apCreate(b1)

			b2 := e.apBody(haircut, "2027-03-04T17:00:00", joao)
			b2["client"] = map[string]any{"name": "Filipe Nunes", "phone": phone, "email": "filipe@example.com"}
			e.apCreate(b2)

			r := e.apPost("/appointments", b1)
			expect(t, r, http.StatusOK, "")
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("not a replay: %s", r.Body)
			}
			if got := apView(t, r); !apSame(got, first) {
				t.Errorf("replay\n got %+v\nwant %+v", show(got.Client), show(first.Client))
			}
		})
	})
}

// show is a client with its e-mail spelled out, for messages.
func show(c view.Client) map[string]any {
	m := map[string]any{"id": c.ID, "name": c.Name, "phone": c.Phone, "email": nil}
	if c.Email != nil {
		m["email"] = *c.Email
	}
	return m
}
