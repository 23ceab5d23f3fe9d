package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/demo"
	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/schema/tenant"
	"barberd/ent/unit"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// agendaStatements is what a dashboard's page of 100 appointments sent
// when the table was last set, authentication (the key's version read)
// included; the test fails above it.
var agendaStatements = map[string]map[string]int{
	"agenda, its unit not yet read": {dialect.SQLite: 6, dialect.Postgres: 6},
	"agenda":                        {dialect.SQLite: 5, dialect.Postgres: 5},
	"appointments":                  {dialect.SQLite: 7, dialect.Postgres: 7},
}

// TestAgendaStatements counts the SQL statements one GraphQL request for a
// page of 100 appointments of one unit and day sends, with their barber,
// service, unit and client, as the dashboard asks: a handful, not one per
// appointment and edge. The version fence reads on every request (a window
// of 0), so its read is counted too.
func TestAgendaStatements(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db0 *store.DB) {
		db, log := storetest.Counting(db0)
		e := newGQLEnv(t, db, func(s *graph.Settings) { s.FreshnessWindow, s.Metrics = 0, log })
		unitID := seedAgenda(t, db, e.keys)
		e.must(t, e.keys.AdminAPIKey, `{ context { serverTime } }`, nil) // the key's first use is recorded

		const appointments = `query($first: Int) { appointments(first: $first, orderBy: {field: STARTS_AT}) { totalCount
			pageInfo { hasNextPage endCursor } edges { node { id status startsAt barber { id name } service { name }
			unit { name } customer { name phone } } } } }`
		for _, c := range []struct{ name, field, query string }{
			{"agenda, its unit not yet read", "agenda", agendaOf},
			{"agenda", "agenda", agendaOf},
			{"appointments", "appointments", appointments},
		} {
			log.Take()
			data := e.must(t, e.keys.AdminAPIKey, c.query, map[string]any{"unit": unitID, "date": "2027-03-02", "first": 100})
			lines := log.Take()
			edges := dig(t, data, c.field+".edges").([]any)
			if len(edges) != 100 || dig(t, data, c.field+".totalCount") != float64(100) || dig(t, data, c.field+".pageInfo.hasNextPage") != false ||
				str(t, edges[99], "node.customer.name") == "" || str(t, edges[0], "node.barber.name") == "" ||
				str(t, edges[0], "node.unit.name") != "Barbearia Chiado" {
				t.Fatalf("%s: %d edges: %v", c.name, len(edges), data)
			}
			want := agendaStatements[c.name][db.Dialect]
			t.Logf("%s: a page of 100 appointments took %d statements (measured %d)", c.name, len(lines), want)
			if len(lines) > want {
				for i, l := range lines {
					lines[i] = l[:min(len(l), 160)]
				}
				t.Errorf("%s sent %d statements, want at most %d:\n\t%s", c.name, len(lines), want, strings.Join(lines, "\n\t"))
			}
		}

		// Pages smaller than the day count it; later pages are Paginate's.
		page := func(first int, after any, unitFields string) map[string]any {
			t.Helper()
			q := strings.Replace(agendaOf, "unit { name }", "unit { "+unitFields+" }", 1)
			return e.must(t, e.keys.AdminAPIKey, q, map[string]any{"unit": unitID, "date": "2027-03-02", "first": first, "after": after})
		}
		one := page(40, nil, "name")
		two := page(100, dig(t, one, "agenda.pageInfo.endCursor"), "id name services { id }")
		if dig(t, one, "agenda.totalCount") != float64(100) || dig(t, one, "agenda.pageInfo.hasNextPage") != true ||
			len(dig(t, one, "agenda.edges").([]any)) != 40 || dig(t, two, "agenda.totalCount") != float64(100) ||
			dig(t, two, "agenda.pageInfo.hasNextPage") != false || len(dig(t, two, "agenda.edges").([]any)) != 60 ||
			dig(t, two, "agenda.edges.0.node.unit.id") != unitID || len(dig(t, two, "agenda.edges.59.node.unit.services").([]any)) == 0 {
			t.Fatalf("pages:\n%v\n%v", one, two)
		}
		// The unit an agenda keeps is the unit as it is now.
		e.must(t, e.keys.AdminAPIKey, `mutation($id: ID!) { updateUnit(id: $id, input: {name: "Chiado"}) { id } }`, map[string]any{"id": unitID})
		if got := dig(t, page(1, nil, "name"), "agenda.edges.0.node.unit.name"); got != "Chiado" {
			t.Fatalf("the agenda's unit after a rename: %v", got)
		}
		e.fails(t, e.keys.AdminAPIKey, agendaOf, map[string]any{"unit": "unt_01JNOPE", "date": "2027-03-02"}, domain.CodeUnitNotFound)
	})
}

// seedAgenda books 100 appointments, each of a client of its own, at the
// demo's Lisbon unit on Tuesday 2027-03-02 with two barbers, and returns
// the unit's id.
func seedAgenda(t *testing.T, db *store.DB, keys *demo.Keys) string {
	t.Helper()
	ctx := tenant.WithAccount(context.Background(), keys.AccountID)
	unitID, serviceID := keys.IDs["Barbearia Chiado"], keys.IDs["Haircut"]
	barbers := db.Barber.Query().Where(barber.HasUnitsWith(unit.ID(unitID)), barber.Active(true)).AllX(ctx)
	key := db.APIKey.Query().FirstX(ctx)
	var rows []*ent.AppointmentCreate
	start := time.Date(2027, 3, 2, 9, 0, 0, 0, time.UTC)
	for i := range 100 {
		c := db.Customer.Create().SetAccountID(keys.AccountID).SetName(fmt.Sprintf("Client %d", i)).
			SetPhone(fmt.Sprintf("+3519100%05d", i)).SaveX(ctx)
		at := start.Add(time.Duration(i/2) * 10 * time.Minute)
		rows = append(rows, db.Appointment.Create().SetAccountID(keys.AccountID).SetUnitID(unitID).
			SetServiceID(serviceID).SetBarberID(barbers[i%2].ID).SetCustomerID(c.ID).SetAPIKeyID(key.ID).
			SetClientName(c.Name).SetClientPhone(c.Phone).SetStartsAt(at).SetEndsAt(at.Add(10*time.Minute)))
	}
	db.Appointment.CreateBulk(rows...).ExecX(ctx)
	return unitID
}
