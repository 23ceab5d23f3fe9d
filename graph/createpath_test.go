package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"barberd/ent"
	entHold "barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// appointmentFields is every field of an appointment, with edges that
// GraphQL loads lazily, after the mutation's transaction has ended.
const appointmentFields = `
	id createdAt updatedAt unitID serviceID barberID customerID clientName clientPhone clientEmail holdID externalReference
	status startsAt endsAt source cancelledAt cancellationReason remindedAt version
	unit { id createdAt updatedAt name timezone address phone active slotStepMinutes minLeadMinutes horizonDays
		services { id name } barbers { id name } }
	service { id createdAt updatedAt name description durationMinutes bufferMinutes priceAmount priceCurrency
		active bookableOnline units { id } barbers { id } }
	barber { id createdAt updatedAt name active units { id } services { id } workingHours { id weekday } timeOff { id } }
	customer { id createdAt updatedAt name phone email }
	hold { id status expiresAt unit { id } service { id } barber { id } }`

// TestMutationsAnswerAsTheyRead checks that createAppointment,
// cancelAppointment and rescheduleAppointment answer with the appointment
// exactly as a later read of it shows it, edges loaded after the write
// included, on every path a create takes (a barber named or not, a hold, a
// known customer keeping the e-mail a new request leaves out).
func TestMutationsAnswerAsTheyRead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		bg := context.Background()
		res, keys := gqltest.Resolver(t, db)
		// The dashboard's key, which may read the customer record too.
		gql := gqltest.Client(t, res, keys.AdminAPIKey)
		do := func(query string, vars map[string]any) map[string]any {
			t.Helper()
			return gql(query, vars).OK(t)
		}
		actx := tenant.WithAccount(bg, keys.AccountID)
		lisbon, haircut, joao := keys.IDs["Barbearia Chiado"], keys.IDs["Haircut"], keys.IDs["João Silva"]

		read := func(id string) map[string]any {
			t.Helper()
			return do(`query($id: ID!) { appointment(id: $id) {`+appointmentFields+`} }`, map[string]any{"id": id})["appointment"].(map[string]any)
		}
		same := func(name string, got map[string]any) string {
			t.Helper()
			id := got["id"].(string)
			if want := read(id); !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("%s answered\n%s\nbut reads\n%s", name, g, w)
			}
			return id
		}
		create := func(name string, in map[string]any) string {
			t.Helper()
			in["unitId"], in["serviceId"] = lisbon, haircut
			data := do(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { replayed appointment {`+appointmentFields+`} } }`,
				map[string]any{"in": in})
			p := data["createAppointment"].(map[string]any)
			if p["replayed"].(bool) {
				t.Errorf("%s: replayed", name)
			}
			return same(name, p["appointment"].(map[string]any))
		}

		withEmail := map[string]any{"name": " Ana Costa ", "phone": "+351912345678", "email": "ana@example.com"}
		first := create("a named barber, a new customer", map[string]any{
			"barberId": joao, "startsAt": "2027-03-02T10:00:00", "client": withEmail, "externalReference": "crm-1",
		})
		create("any barber, a known customer without e-mail", map[string]any{
			"startsAt": "2027-03-02T10:00:00", "client": map[string]any{"name": "Ana C.", "phone": "+351912345678"},
		})
		held := do(`mutation($in: HoldSlotInput!) { holdSlot(input: $in) {
			id createdAt updatedAt apiKeyID unitID serviceID barberID startsAt endsAt status expiresAt
			unit { id name } service { id name } barber { id name units { id } } } }`, map[string]any{"in": map[string]any{
			"unitId": lisbon, "serviceId": haircut, "startsAt": "2027-03-02T11:00:00",
		}})["holdSlot"].(map[string]any)
		hold := held["id"].(string)
		// As the hold reads back.
		hd := db.Hold.Query().Where(entHold.ID(hold)).WithUnit().WithService().WithBarber(func(q *ent.BarberQuery) { q.WithUnits() }).OnlyX(actx)
		at := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
		named := func(id, name string) map[string]any { return map[string]any{"id": id, "name": name} }
		var units []any
		for _, u := range hd.Edges.Barber.Edges.Units {
			units = append(units, map[string]any{"id": u.ID})
		}
		want := map[string]any{
			"id": hd.ID, "createdAt": at(hd.CreatedAt), "updatedAt": at(hd.UpdatedAt), "apiKeyID": hd.APIKeyID,
			"unitID": hd.UnitID, "serviceID": hd.ServiceID, "barberID": hd.BarberID,
			"startsAt": at(hd.StartsAt), "endsAt": at(hd.EndsAt), "status": "active", "expiresAt": at(hd.ExpiresAt),
			"unit": named(hd.Edges.Unit.ID, hd.Edges.Unit.Name), "service": named(hd.Edges.Service.ID, hd.Edges.Service.Name),
			"barber": map[string]any{"id": hd.Edges.Barber.ID, "name": hd.Edges.Barber.Name, "units": units},
		}
		if g, w := fmt.Sprint(held), fmt.Sprint(want); g != w {
			t.Errorf("holdSlot answered\n%s\nbut the hold reads\n%s", g, w)
		}
		create("a hold", map[string]any{
			"holdId": hold, "startsAt": "2027-03-02T11:00:00", "client": map[string]any{"name": "Rui", "phone": "+351912000000"},
		})

		// A replay answers as a read does, too: of a valid request, found in
		// the transaction, and of one refused before it.
		data := do(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { replayed appointment {`+appointmentFields+`} } }`,
			map[string]any{"in": map[string]any{"unitId": lisbon, "serviceId": haircut, "startsAt": "2027-03-02T16:00:00", "client": withEmail, "externalReference": "crm-1"}})
		if p := data["createAppointment"].(map[string]any); !p["replayed"].(bool) || same("a replay", p["appointment"].(map[string]any)) != first {
			t.Errorf("a request with a used reference did not replay %s: %v", first, p)
		}
		data = do(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { replayed appointment {`+appointmentFields+`} } }`,
			map[string]any{"in": map[string]any{"unitId": "nope", "serviceId": "nope", "startsAt": "bad", "client": withEmail, "externalReference": "crm-1"}})
		if p := data["createAppointment"].(map[string]any); !p["replayed"].(bool) || same("a refused replay", p["appointment"].(map[string]any)) != first {
			t.Errorf("an invalid request with a used reference did not replay %s: %v", first, p)
		}

		moved := do(`mutation($id: ID!, $in: RescheduleAppointmentInput!) { rescheduleAppointment(id: $id, input: $in) {`+appointmentFields+`} }`,
			map[string]any{"id": first, "in": map[string]any{"startsAt": "2027-03-02T15:00:00"}})
		same("reschedule", moved["rescheduleAppointment"].(map[string]any))
		cancelled := do(`mutation($id: ID!) { cancelAppointment(id: $id, reason: "changed plans") {`+appointmentFields+`} }`,
			map[string]any{"id": first})
		same("cancel", cancelled["cancelAppointment"].(map[string]any))
		again := do(`mutation($id: ID!) { cancelAppointment(id: $id, reason: "again") {`+appointmentFields+`} }`,
			map[string]any{"id": first})
		same("cancel again", again["cancelAppointment"].(map[string]any))

		// The known customer kept the e-mail the second create left out.
		c := db.Customer.Query().AllX(actx)
		if len(c) != 2 {
			t.Fatalf("%d customers, want 2", len(c))
		}
		for _, c := range c {
			if c.Phone == "+351912345678" && (c.Email != "ana@example.com" || c.Name != "Ana C.") {
				t.Errorf("customer %+v, want e-mail ana@example.com and name Ana C.", c)
			}
		}
	})
}
