package graph_test

import (
	"testing"

	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// GraphQL serves the waitlist as REST does: a join refused while the time
// is free, an entry offered when it frees, the offer's times in the unit's
// zone, and for dashboards a unit's entries with the appointment booked
// from the offer; the dashboard query needs scope admin.
func TestWaitlistGraphQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, keys := gqltest.Resolver(t, db)
		bot, admin := gqltest.Client(t, res, keys.APIKey), gqltest.Client(t, res, keys.AdminAPIKey)
		lisbon, haircut, joao := keys.IDs["Barbearia Chiado"], keys.IDs["Haircut"], keys.IDs["João Silva"]
		const entry = `id status fromDate toDate timeFrom timezone offerStartsAt offerStartsAtLocal offerHoldID appointment { id }`
		join := func() *gqltest.Answer {
			return bot(`mutation($in: JoinWaitlistInput!) { joinWaitlist(input: $in) { replayed entry { `+entry+` } } }`,
				map[string]any{"in": map[string]any{
					"unitId": lisbon, "serviceId": haircut, "barberId": joao, "from": "2027-03-02", "to": "2027-03-02",
					"timeFrom": "10:00", "timeTo": "10:30", "client": map[string]any{"name": "Ana Costa", "phone": "+351912345678"},
				}})
		}
		if a := join(); a.Code() != domain.CodeSlotAvailable || a.Errors[0].Extensions["alternatives"] == nil {
			t.Fatalf("join with 10:00 free: %+v, want slot_available with alternatives", a)
		}
		booked := bot(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`,
			map[string]any{"in": map[string]any{"unitId": lisbon, "serviceId": haircut, "barberId": joao, "startsAt": "2027-03-02T10:00:00",
				"client": map[string]any{"name": "Bruno Dias", "phone": "+351912000000"}}}).OK(t)
		apt := booked["createAppointment"].(map[string]any)["appointment"].(map[string]any)["id"]
		joined := join().OK(t)["joinWaitlist"].(map[string]any)["entry"].(map[string]any)
		if joined["status"] != "waiting" || joined["timezone"] != "Europe/Lisbon" || joined["offerStartsAtLocal"] != nil {
			t.Fatalf("joined %v", joined)
		}
		bot(`mutation($id: ID!) { cancelAppointment(id: $id, reason: "ill") { id } }`, map[string]any{"id": apt}).OK(t)
		got := bot(`query($id: ID!) { waitlistEntry(id: $id) { `+entry+` } }`, map[string]any{"id": joined["id"]}).OK(t)["waitlistEntry"].(map[string]any)
		if got["status"] != "offered" || got["offerStartsAtLocal"] != "2027-03-02T10:00:00" || got["offerHoldID"] == nil {
			t.Fatalf("entry after the cancel: %v", got)
		}
		bot(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`,
			map[string]any{"in": map[string]any{"unitId": lisbon, "serviceId": haircut, "startsAt": "2027-03-02T10:00:00",
				"holdId": got["offerHoldID"], "client": map[string]any{"name": "Ana Costa", "phone": "+351912345678"}}}).OK(t)

		const page = `query($u: ID!) { waitlist(unitId: $u, status: booked, first: 10) { totalCount edges { node { ` + entry + ` } } } }`
		if a := bot(page, map[string]any{"u": lisbon}); a.Code() != domain.CodeInsufficientScope {
			t.Errorf("a booking key's dashboard query: %+v, want insufficient_scope", a)
		}
		conn := admin(page, map[string]any{"u": lisbon}).OK(t)["waitlist"].(map[string]any)
		edges := conn["edges"].([]any)
		if conn["totalCount"] != float64(1) || len(edges) != 1 {
			t.Fatalf("dashboard page %v", conn)
		}
		node := edges[0].(map[string]any)["node"].(map[string]any)
		if node["id"] != joined["id"] || node["appointment"] == nil {
			t.Errorf("dashboard entry %v, want %v booked with its appointment", node, joined["id"])
		}
		mine := bot(`query { clientWaitlist(clientPhone: "+351912345678") { id status } }`, nil).OK(t)["clientWaitlist"].([]any)
		if len(mine) != 1 || mine[0].(map[string]any)["status"] != "booked" {
			t.Errorf("client's entries %v", mine)
		}
	})
}
