package graph_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// GraphQL shows the client of an appointment as booked, as REST does:
// clientName, clientPhone and clientEmail keep what the create gave, in the
// create's answer, reads and the agenda. The account's customer record,
// which later bookings with the same phone update, is the dashboards' alone:
// a booking key reading it through an appointment is refused, so a create's
// answer cannot carry what someone else gave before.
func TestClientAsBooked(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, keys := gqltest.Resolver(t, db)
		bot, admin := gqltest.Client(t, res, keys.APIKey), gqltest.Client(t, res, keys.AdminAPIKey)
		ok := func(r *gqltest.Answer) map[string]any {
			t.Helper()
			return r.OK(t)
		}
		lisbon, haircut := keys.IDs["Barbearia Chiado"], keys.IDs["Haircut"]
		const client = `customerID clientName clientPhone clientEmail`
		create := func(at string, c map[string]any) map[string]any {
			t.Helper()
			data := ok(bot(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id `+client+` } } }`,
				map[string]any{"in": map[string]any{"unitId": lisbon, "serviceId": haircut, "startsAt": at, "client": c}}))
			return data["createAppointment"].(map[string]any)["appointment"].(map[string]any)
		}
		same := func(what string, got map[string]any, name string, email any) {
			t.Helper()
			if got["clientName"] != name || got["clientPhone"] != "+351912345678" || got["clientEmail"] != email {
				t.Errorf("%s: client %v, want %s %v", what, got, name, email)
			}
		}

		first := create("2027-03-02T10:00:00", map[string]any{"name": "Ana Costa", "phone": "+351912345678", "email": "ana@example.com"})
		same("first create", first, "Ana Costa", "ana@example.com")
		second := create("2027-03-02T11:00:00", map[string]any{"name": "Bruno Dias", "phone": "+351912345678"})
		same("second create", second, "Bruno Dias", nil)
		if first["customerID"] != second["customerID"] {
			t.Errorf("one phone, customers %v and %v", first["customerID"], second["customerID"])
		}

		read := ok(bot(`query($id: ID!) { appointment(id: $id) { `+client+` } }`, map[string]any{"id": first["id"]}))
		same("the first, read after the second", read["appointment"].(map[string]any), "Ana Costa", "ana@example.com")

		// The customer record holds Ana's e-mail and Bruno's name: a booking
		// key cannot read it, in a create's answer nor in a read.
		for what, q := range map[string]string{
			"a create's answer": `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id customer { name email } } } }`,
			"a read":            `query($id: ID!) { appointment(id: $id) { id customer { name email } } }`,
		} {
			r := bot(q, map[string]any{"id": first["id"], "in": map[string]any{
				"unitId": lisbon, "serviceId": haircut, "startsAt": "2027-03-02T14:00:00",
				"client": map[string]any{"name": "Carla Reis", "phone": "+351912345678"}}})
			if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != domain.CodeInsufficientScope {
				t.Errorf("%s with the customer record: %+v, want insufficient_scope", what, r)
			}
			if b, _ := json.Marshal(r); bytes.Contains(b, []byte("ana@example.com")) {
				t.Errorf("%s carries Ana's e-mail: %s", what, b)
			}
		}

		// The dashboard sees both: each appointment's client as booked, and
		// the record with the newest name.
		agenda := ok(admin(`query($u: ID!) { agenda(unitId: $u, date: "2027-03-02", first: 10) { edges { node { id `+client+` customer { name email } } } } }`,
			map[string]any{"u": lisbon}))
		names := map[any]any{}
		for _, e := range agenda["agenda"].(map[string]any)["edges"].([]any) {
			n := e.(map[string]any)["node"].(map[string]any)
			names[n["id"]] = n["clientName"]
			if c := n["customer"].(map[string]any); c["name"] != "Carla Reis" || c["email"] != "ana@example.com" {
				t.Errorf("customer record %v, want the newest name and the e-mail last given", c)
			}
		}
		if names[first["id"]] != "Ana Costa" || names[second["id"]] != "Bruno Dias" {
			t.Errorf("agenda clients %v, want Ana Costa and Bruno Dias", names)
		}
	})
}
