package graph_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// An appointment shows its times in its unit's zone, as REST does, on
// either side of a daylight saving change, wherever GraphQL returns it.
func TestAppointmentLocalTimes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, keys := gqltest.Resolver(t, db)
		bot, admin := gqltest.Client(t, res, keys.APIKey), gqltest.Client(t, res, keys.AdminAPIKey)
		const local = `id startsAt startsAtLocal endsAtLocal timezone`
		book := func(unitName, serviceName, at string) map[string]any {
			t.Helper()
			a := bot(`mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { `+local+` } } }`,
				map[string]any{"in": map[string]any{"unitId": keys.IDs[unitName], "serviceId": keys.IDs[serviceName], "startsAt": at,
					"client": map[string]any{"name": "Ana Costa", "phone": "+351912345678"}}}).OK(t)
			return a["createAppointment"].(map[string]any)["appointment"].(map[string]any)
		}
		// Lisbon is at UTC+0 until 01:00 UTC on Sunday 2027-03-28, then at
		// UTC+1; São Paulo stays at UTC-3.
		want := []struct {
			unit, service, at string
			utc, ends, zone   string
		}{
			{"Barbearia Chiado", "Haircut", "2027-03-26T10:00:00", "2027-03-26T10:00:00Z", "2027-03-26T10:30:00", "Europe/Lisbon"},
			{"Barbearia Chiado", "Haircut", "2027-03-29T10:00:00", "2027-03-29T09:00:00Z", "2027-03-29T10:30:00", "Europe/Lisbon"},
			{"Barbearia Paulista", "Corte de cabelo", "2027-03-29T10:00:00", "2027-03-29T13:00:00Z", "2027-03-29T10:30:00", "America/Sao_Paulo"},
		}
		check := func(where string, got map[string]any, i int) {
			t.Helper()
			w := want[i]
			if got["startsAtLocal"] != w.at || got["endsAtLocal"] != w.ends || got["timezone"] != w.zone || got["startsAt"] != w.utc {
				t.Errorf("%s: %v, want %s to %s in %s (%s)", where, got, w.at, w.ends, w.zone, w.utc)
			}
		}
		ids := make([]any, len(want))
		for i, w := range want {
			a := book(w.unit, w.service, w.at)
			check("createAppointment", a, i)
			ids[i] = a["id"]
		}
		for i, id := range ids {
			check("appointment", bot(`query($id: ID!) { appointment(id: $id) { `+local+` } }`, map[string]any{"id": id}).OK(t)["appointment"].(map[string]any), i)
		}
		found := bot(`{ appointmentsByClient(clientPhone: "+351912345678") { `+local+` } }`, nil).OK(t)["appointmentsByClient"].([]any)
		if len(found) != len(want) {
			t.Fatalf("appointmentsByClient found %d, want %d", len(found), len(want))
		}
		for i, a := range found {
			check("appointmentsByClient", a.(map[string]any), i)
		}
		// The unit is loaded here with the columns the query selects, or
		// not at all.
		for _, q := range []string{
			`{ appointments(first: 10, orderBy: {field: STARTS_AT}) { edges { node { ` + local + ` } } } }`,
			`{ appointments(first: 10, orderBy: {field: STARTS_AT}) { edges { node { ` + local + ` unit { name } } } } }`,
		} {
			edges := admin(q, nil).OK(t)["appointments"].(map[string]any)["edges"].([]any)
			for i, e := range edges {
				check("appointments", e.(map[string]any)["node"].(map[string]any), i)
			}
		}
	})
}

// A page of 100 appointments in two zones shows their local times with at
// most one more statement than without them, not one per appointment.
func TestAppointmentLocalTimesStatements(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		counted, log := storetest.Counting(db)
		res, keys := gqltest.Resolver(t, counted)
		admin := gqltest.Client(t, res, keys.AdminAPIKey)
		ctx := tenant.WithAccount(context.Background(), keys.AccountID)
		key := db.APIKey.Query().FirstX(ctx)
		var rows []*ent.AppointmentCreate
		start := time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC)
		for i, u := range db.Unit.Query().Order(unit.ByName()).AllX(ctx) {
			s := db.Service.Query().Where(service.HasUnitsWith(unit.ID(u.ID)), service.Active(true)).FirstX(ctx)
			b := db.Barber.Query().Where(barber.HasUnitsWith(unit.ID(u.ID)), barber.Active(true)).FirstX(ctx)
			for j := range 50 {
				c := db.Customer.Create().SetAccountID(keys.AccountID).SetName("Client").
					SetPhone(fmt.Sprintf("+3519100%d%04d", i, j)).SaveX(ctx)
				at := start.Add(time.Duration(j) * 15 * time.Minute)
				rows = append(rows, db.Appointment.Create().SetAccountID(keys.AccountID).SetUnitID(u.ID).
					SetServiceID(s.ID).SetBarberID(b.ID).SetCustomerID(c.ID).SetAPIKeyID(key.ID).
					SetClientName(c.Name).SetClientPhone(c.Phone).SetStartsAt(at).SetEndsAt(at.Add(15*time.Minute)))
			}
		}
		db.Appointment.CreateBulk(rows...).ExecX(ctx)
		count := func(fields string) int {
			t.Helper()
			admin(`{ context { serverTime } }`, nil).OK(t) // the key's use is recorded once
			log.Take()
			edges := admin(`{ appointments(first: 100) { edges { node { `+fields+` } } } }`, nil).OK(t)["appointments"].(map[string]any)["edges"].([]any)
			if len(edges) != 100 {
				t.Fatalf("%d appointments, want 100", len(edges))
			}
			return len(log.Take())
		}
		without := count("id startsAt")
		with := count("id startsAt startsAtLocal endsAtLocal timezone")
		t.Logf("a page of 100 appointments: %d statements, %d with their local times", without, with)
		if with > without+1 {
			t.Errorf("local times cost %d statements more, want at most 1", with-without)
		}
	})
}
