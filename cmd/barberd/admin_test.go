package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// GraphQL administration (issue 4), over the full router on both databases.

// dig follows a dotted path ("a.b.0.c") through decoded JSON.
func dig(t *testing.T, v any, path string) any {
	t.Helper()
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				t.Fatalf("path %s: no element %s in %v", path, p, x)
			}
			v = x[i]
		default:
			t.Fatalf("path %s: cannot enter %q of %v", path, p, v)
		}
	}
	return v
}

func str(t *testing.T, v any, path string) string {
	t.Helper()
	s, ok := dig(t, v, path).(string)
	if !ok {
		t.Fatalf("path %s: not a string: %v", path, dig(t, v, path))
	}
	return s
}

// must runs an operation that must succeed and returns its data.
func (e *gqlEnv) must(t *testing.T, key, q string, vars map[string]any) map[string]any {
	t.Helper()
	return e.query(t, key, q, vars).ok(t)
}

// fails runs an operation that must fail with code, and returns the
// fields a validation_failed error names.
func (e *gqlEnv) fails(t *testing.T, key, q string, vars map[string]any, code string) []string {
	t.Helper()
	r := e.query(t, key, q, vars)
	if got := r.code(t); got != code {
		t.Fatalf("code %q, want %q: %+v", got, code, r.Errors)
	}
	var fields []string
	list, _ := r.Errors[0].Extensions["fields"].([]any)
	for _, f := range list {
		fields = append(fields, f.(map[string]any)["field"].(string))
	}
	return fields
}

func sameFields(t *testing.T, got []string, want ...string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
}

func (e *gqlEnv) rest(t *testing.T, method, path, key string, body any, want int) map[string]any {
	t.Helper()
	return call(t, method, e.srv.URL+"/api/integrations/v1"+path, key, body, want).JSON(t)
}

const (
	createUnit = `mutation($in: CreateUnitInput!) { createUnit(input: $in) { id name timezone active slotStepMinutes minLeadMinutes horizonDays } }`
	createSvc  = `mutation($in: CreateServiceInput!) { createService(input: $in) { id name durationMinutes bufferMinutes units { id } } }`
	createBrb  = `mutation($in: CreateBarberInput!) { createBarber(input: $in) { id name active units { id } services { id } } }`
	setHours   = `mutation($in: SetWorkingHoursInput!) { setWorkingHours(input: $in) { id weekday opensAt closesAt breaks } }`
	markNoShow = `mutation($id: ID!) { markAppointmentNoShow(id: $id) { id status } }`
	markDone   = `mutation($id: ID!) { markAppointmentCompleted(id: $id) { id status } }`
	agendaOf   = `query($unit: ID!, $date: String!, $first: Int, $after: Cursor, $where: AppointmentWhereInput) {
		agenda(unitId: $unit, date: $date, first: $first, after: $after, where: $where) {
			totalCount pageInfo { hasNextPage endCursor }
			edges { node { id status startsAt barber { id name } service { name } unit { name } customer { name phone } } } } }`
)

// shop is a unit set up through GraphQL: one barber, one service, hours.
type shop struct{ unit, service, barber string }

// newShop creates, with the admin key, a Lisbon unit with one barber doing
// a 45-minute service (plus a 15-minute buffer) on Mondays 09:00-13:00 with
// a break 11:00-11:30.
func (e *gqlEnv) newShop(t *testing.T, name string) shop {
	t.Helper()
	admin := e.keys.AdminAPIKey
	u := e.must(t, admin, createUnit, map[string]any{"in": map[string]any{
		"name": name, "timezone": "Europe/Lisbon", "phone": "+351220000000",
		"slotStepMinutes": 30, "minLeadMinutes": 60, "horizonDays": 60}})
	if got := dig(t, u, "createUnit.slotStepMinutes"); got != float64(30) {
		t.Fatalf("slot step %v", got)
	}
	var s shop
	s.unit = str(t, u, "createUnit.id")
	svc := e.must(t, admin, createSvc, map[string]any{"in": map[string]any{
		"name": "Fade", "durationMinutes": 45, "bufferMinutes": 15, "priceAmount": 2000, "priceCurrency": "EUR",
		"unitIds": []string{s.unit}}})
	s.service = str(t, svc, "createService.id")
	b := e.must(t, admin, createBrb, map[string]any{"in": map[string]any{
		"name": "Rui Alves", "unitIds": []string{s.unit}, "serviceIds": []string{s.service}}})
	s.barber = str(t, b, "createBarber.id")
	h := e.must(t, admin, setHours, map[string]any{"in": map[string]any{
		"barberId": s.barber, "unitId": s.unit, "days": []any{map[string]any{
			"weekday": 1, "opensAt": "09:00", "closesAt": "13:00",
			"breaks": []any{map[string]any{"from": "11:00", "to": "11:30"}}}}}})
	if got := dig(t, h, "setWorkingHours.0.breaks.0"); got != "11:00-11:30" {
		t.Fatalf("stored break %v", got)
	}
	return s
}

// book makes an appointment over REST with the booking key.
func (e *gqlEnv) book(t *testing.T, s shop, startsAt, phone string) string {
	t.Helper()
	a := e.rest(t, "POST", "/appointments", e.keys.APIKey, map[string]any{
		"unit_id": s.unit, "service_id": s.service, "barber_id": s.barber, "starts_at": startsAt,
		"client": map[string]any{"name": "Ana Pereira", "phone": phone}}, http.StatusCreated)
	return a["id"].(string)
}

// The shop's actions on an appointment over GraphQL (marks, cancel,
// reschedule), told to the chatbot with source admin.
func TestGraphQLAdminAppointmentActions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("a new unit is bookable at once and its no-show reaches the chatbot", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Porto")
			// 2027-03-01 is a Monday; the clock is at 06:00 in Lisbon.
			av := e.rest(t, "GET", "/availability?unit_id="+s.unit+"&service_id="+s.service+"&date=2027-03-01", e.keys.APIKey, nil, 200)
			if got := str(t, av, "slots.0.starts_at"); got != "2027-03-01T09:00:00" {
				t.Fatalf("first slot %s", got)
			}
			for _, sl := range av["slots"].([]any) {
				if at := sl.(map[string]any)["starts_at"].(string); at == "2027-03-01T10:30:00" || at == "2027-03-01T11:00:00" {
					t.Fatalf("slot %s runs into the break", at)
				}
			}
			id := e.book(t, s, "2027-03-01T09:00:00", "+351911111111")

			day := e.must(t, e.keys.AdminAPIKey, agendaOf, map[string]any{"unit": s.unit, "date": "2027-03-01"})
			if n := dig(t, day, "agenda.totalCount"); n != float64(1) {
				t.Fatalf("agenda of the day: %v appointments", n)
			}
			if str(t, day, "agenda.edges.0.node.id") != id || str(t, day, "agenda.edges.0.node.barber.name") != "Rui Alves" {
				t.Fatalf("agenda %v", day)
			}
			if c := e.fails(t, e.keys.AdminAPIKey, markNoShow, map[string]any{"id": id}, domain.CodeNotMarkable); c != nil {
				t.Fatalf("fields %v", c)
			}
			e.setNow(time.Date(2027, 3, 1, 9, 20, 0, 0, time.UTC))
			got := e.must(t, e.keys.AdminAPIKey, markNoShow, map[string]any{"id": id})
			if str(t, got, "markAppointmentNoShow.status") != "no_show" {
				t.Fatalf("%v", got)
			}
			// Marking again changes nothing and tells nobody again.
			e.must(t, e.keys.AdminAPIKey, markNoShow, map[string]any{"id": id})

			pending := e.rest(t, "GET", "/notifications/pending", e.keys.APIKey, nil, 200)
			var types []string
			for _, n := range pending["data"].([]any) {
				n := n.(map[string]any)
				types = append(types, n["type"].(string))
				if n["type"] == domain.EventNoShow && (n["source"] != "admin" || n["appointment_id"] != id || dig(t, n, "appointment.status") != "no_show") {
					t.Fatalf("no-show notification %v", n)
				}
			}
			if !slices.Equal(types, []string{domain.EventCreated, domain.EventNoShow}) {
				t.Fatalf("notifications %v", types)
			}
		})

		t.Run("completed, cancelled and rescheduled by the shop, with source admin", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Braga")
			first := e.book(t, s, "2027-03-08T09:00:00", "+351911111112")
			second := e.book(t, s, "2027-03-08T10:00:00", "+351911111113")
			third := e.book(t, s, "2027-03-08T12:00:00", "+351911111114")
			admin := e.keys.AdminAPIKey
			moved := e.must(t, admin, `mutation($id: ID!) { adminRescheduleAppointment(id: $id, input: {startsAt: "2027-03-15T09:30:00"}) { status startsAt } }`, map[string]any{"id": second})
			if str(t, moved, "adminRescheduleAppointment.status") != "confirmed" {
				t.Fatalf("%v", moved)
			}
			e.must(t, admin, `mutation($id: ID!) { adminCancelAppointment(id: $id, reason: "Barber ill") { status } }`, map[string]any{"id": third})
			e.setNow(time.Date(2027, 3, 8, 9, 50, 0, 0, time.UTC))
			done := e.must(t, admin, markDone, map[string]any{"id": first})
			if str(t, done, "markAppointmentCompleted.status") != "completed" {
				t.Fatalf("%v", done)
			}
			e.fails(t, admin, markNoShow, map[string]any{"id": first}, domain.CodeNotMarkable)
			e.fails(t, admin, markDone, map[string]any{"id": third}, domain.CodeNotMarkable)
			e.fails(t, admin, `mutation($id: ID!) { adminCancelAppointment(id: $id, reason: "x") { status } }`, map[string]any{"id": first}, domain.CodeNotCancellable)
			e.fails(t, admin, markDone, map[string]any{"id": "apt_01JNOPE"}, domain.CodeAppointmentNotFound)

			pending := e.rest(t, "GET", "/notifications/pending", e.keys.APIKey, nil, 200)
			var got []string
			for _, n := range pending["data"].([]any) {
				n := n.(map[string]any)
				got = append(got, fmt.Sprintf("%s/%s", n["type"], n["source"]))
			}
			want := []string{"appointment.created/api", "appointment.created/api", "appointment.created/api",
				"appointment.rescheduled/admin", "appointment.cancelled/admin", "appointment.completed/admin"}
			if !slices.Equal(got, want) {
				t.Fatalf("notifications\n got %v\nwant %v", got, want)
			}
		})
	})
}

// The agenda of a day, the entgql appointment and customer connections,
// and the holds that block.
func TestGraphQLAdminAgenda(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("agenda filters, pagination, customers and holds", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Faro")
			admin := e.keys.AdminAPIKey
			ids := []string{
				e.book(t, s, "2027-03-08T09:00:00", "+351911000001"),
				e.book(t, s, "2027-03-08T10:00:00", "+351911000002"),
				e.book(t, s, "2027-03-08T12:00:00", "+351911000003"),
				e.book(t, s, "2027-03-15T09:00:00", "+351911000001"),
			}
			page := e.must(t, admin, agendaOf, map[string]any{"unit": s.unit, "date": "2027-03-08", "first": 2})
			if dig(t, page, "agenda.totalCount") != float64(3) || dig(t, page, "agenda.pageInfo.hasNextPage") != true ||
				str(t, page, "agenda.edges.0.node.id") != ids[0] || str(t, page, "agenda.edges.1.node.id") != ids[1] {
				t.Fatalf("first page %v", page)
			}
			next := e.must(t, admin, agendaOf, map[string]any{"unit": s.unit, "date": "2027-03-08", "first": 2,
				"after": dig(t, page, "agenda.pageInfo.endCursor")})
			if n := len(dig(t, next, "agenda.edges").([]any)); n != 1 || str(t, next, "agenda.edges.0.node.id") != ids[2] {
				t.Fatalf("second page %v", next)
			}
			e.fails(t, admin, agendaOf, map[string]any{"unit": s.unit, "date": "08/03/2027"}, domain.CodeValidationFailed)
			e.fails(t, admin, agendaOf, map[string]any{"unit": "unt_01JNOPE", "date": "2027-03-08"}, domain.CodeUnitNotFound)

			// The entgql connection: by unit, barber, status, customer and range.
			e.must(t, admin, `mutation($id: ID!) { adminCancelAppointment(id: $id, reason: "Closed") { id } }`, map[string]any{"id": ids[1]})
			customer := e.must(t, admin, `{ customers(where: {phone: "+351911000001"}) { edges { node { id name } } } }`, nil)
			cust := str(t, customer, "customers.edges.0.node.id")
			for _, c := range []struct {
				where map[string]any
				want  []string
			}{
				{map[string]any{"unitID": s.unit}, ids},
				{map[string]any{"unitID": s.unit, "barberID": s.barber, "status": "confirmed"}, []string{ids[0], ids[2], ids[3]}},
				{map[string]any{"unitID": s.unit, "statusIn": []string{"cancelled"}}, []string{ids[1]}},
				{map[string]any{"customerID": cust}, []string{ids[0], ids[3]}},
				{map[string]any{"unitID": s.unit, "startsAtGTE": "2027-03-08T09:30:00Z", "startsAtLT": "2027-03-09T00:00:00Z"}, []string{ids[1], ids[2]}},
			} {
				d := e.must(t, admin, `query($w: AppointmentWhereInput) { appointments(first: 10, where: $w, orderBy: {field: STARTS_AT}) { edges { node { id } } } }`, map[string]any{"w": c.where})
				var got []string
				for _, ed := range dig(t, d, "appointments.edges").([]any) {
					got = append(got, str(t, ed, "node.id"))
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("where %v: %v, want %v", c.where, got, c.want)
				}
			}
			byName := e.must(t, admin, `{ customers(where: {nameContainsFold: "ana PER"}) { totalCount } }`, nil)
			if dig(t, byName, "customers.totalCount") != float64(3) {
				t.Fatalf("customers by name: %v", byName)
			}

			// Holds are visible while they block.
			e.rest(t, "POST", "/slots/hold", e.keys.APIKey, map[string]any{"unit_id": s.unit, "service_id": s.service,
				"starts_at": "2027-03-15T10:00:00", "ttl_seconds": 60}, http.StatusCreated)
			const holds = `query($u: ID) { activeHolds(unitId: $u) { id status startsAt barber { name } unit { name } } }`
			h := e.must(t, admin, holds, map[string]any{"u": s.unit})
			if len(h["activeHolds"].([]any)) != 1 || str(t, h, "activeHolds.0.status") != "active" || str(t, h, "activeHolds.0.barber.name") != "Rui Alves" {
				t.Fatalf("active holds %v", h)
			}
			if other := e.must(t, admin, holds, map[string]any{"u": "unt_01JOTHER"}); len(other["activeHolds"].([]any)) != 0 {
				t.Fatalf("holds of another unit: %v", other)
			}
			e.setNow(time.Date(2027, 3, 1, 6, 1, 1, 0, time.UTC))
			if h := e.must(t, admin, holds, nil); len(h["activeHolds"].([]any)) != 0 {
				t.Fatalf("expired hold still listed: %v", h)
			}
		})
	})
}

// Units, services and barbers: updates, deactivation, reactivation and
// the fields and ids they refuse.
func TestGraphQLAdminCatalog(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("catalog updates and deactivation", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Aveiro")
			admin := e.keys.AdminAPIKey
			u := e.must(t, admin, `mutation($id: ID!) { updateUnit(id: $id, input: {slotStepMinutes: 20, address: "Rua Direita 1"}) { slotStepMinutes address timezone name } }`, map[string]any{"id": s.unit})
			if dig(t, u, "updateUnit.slotStepMinutes") != float64(20) || str(t, u, "updateUnit.name") != "Barbearia Aveiro" {
				t.Fatalf("%v", u)
			}
			svc := e.must(t, admin, `mutation($id: ID!) { updateService(id: $id, input: {unitIds: [], bufferMinutes: 5}) { bufferMinutes units { id } } }`, map[string]any{"id": s.service})
			if dig(t, svc, "updateService.bufferMinutes") != float64(5) || len(dig(t, svc, "updateService.units").([]any)) != 0 {
				t.Fatalf("%v", svc)
			}
			e.rest(t, "GET", "/availability?unit_id="+s.unit+"&service_id="+s.service+"&date=2027-03-08", e.keys.APIKey, nil, http.StatusUnprocessableEntity)
			e.must(t, admin, `mutation($id: ID!, $u: ID!) { updateService(id: $id, input: {unitIds: [$u, $u]}) { id } }`, map[string]any{"id": s.service, "u": s.unit})
			b := e.must(t, admin, `mutation($id: ID!) { deactivateBarber(id: $id) { active } }`, map[string]any{"id": s.barber})
			if dig(t, b, "deactivateBarber.active") != false {
				t.Fatalf("%v", b)
			}
			e.must(t, admin, `mutation($id: ID!) { updateBarber(id: $id, input: {active: true}) { id } }`, map[string]any{"id": s.barber})
			e.must(t, admin, `mutation($id: ID!) { deactivateService(id: $id) { active } }`, map[string]any{"id": s.service})
			e.rest(t, "GET", "/services?unit_id="+s.unit, e.keys.APIKey, nil, 200)
			d := e.must(t, admin, `mutation($id: ID!) { deactivateUnit(id: $id) { active } }`, map[string]any{"id": s.unit})
			if dig(t, d, "deactivateUnit.active") != false {
				t.Fatalf("%v", d)
			}
			if r := call(t, "GET", e.srv.URL+"/api/integrations/v1/services?unit_id="+s.unit, e.keys.APIKey, nil, 404); r.Code() != domain.CodeUnitNotFound {
				t.Fatalf("code %s", r.Code())
			}

			// Reactivated, the shop is bookable again.
			e.must(t, admin, `mutation($id: ID!) { updateUnit(id: $id, input: {active: true}) { id } }`, map[string]any{"id": s.unit})
			e.must(t, admin, `mutation($id: ID!) { updateService(id: $id, input: {active: true}) { id } }`, map[string]any{"id": s.service})
			av := e.rest(t, "GET", "/availability?unit_id="+s.unit+"&service_id="+s.service+"&date=2027-03-08", e.keys.APIKey, nil, 200)
			if n := len(av["slots"].([]any)); n == 0 {
				t.Fatal("no slots after the unit and service were reactivated")
			}
		})

		t.Run("validation errors name every bad field", func(t *testing.T) {
			e := newGQLEnv(t, db)
			admin := e.keys.AdminAPIKey
			sameFields(t, e.fails(t, admin, createUnit, map[string]any{"in": map[string]any{
				"name": " ", "timezone": "Mars/Olympus", "phone": "123", "slotStepMinutes": 7, "minLeadMinutes": -1, "horizonDays": 731}},
				domain.CodeValidationFailed), "name", "timezone", "phone", "slotStepMinutes", "minLeadMinutes", "horizonDays")
			sameFields(t, e.fails(t, admin, createSvc, map[string]any{"in": map[string]any{
				"name": "Shave", "durationMinutes": 0, "bufferMinutes": -5, "priceAmount": -1, "priceCurrency": "eur"}},
				domain.CodeValidationFailed), "durationMinutes", "bufferMinutes", "priceAmount", "priceCurrency")
			sameFields(t, e.fails(t, admin, createBrb, map[string]any{"in": map[string]any{"name": ""}}, domain.CodeValidationFailed), "name")

			// Unknown ids: the REST codes.
			e.fails(t, admin, `mutation { updateUnit(id: "unt_01JNOPE", input: {name: "x"}) { id } }`, nil, domain.CodeUnitNotFound)
			e.fails(t, admin, `mutation { deactivateService(id: "svc_01JNOPE") { id } }`, nil, domain.CodeServiceNotFound)
			e.fails(t, admin, `mutation { updateBarber(id: "brb_01JNOPE", input: {name: "x"}) { id } }`, nil, domain.CodeBarberNotFound)
			e.fails(t, admin, createBrb, map[string]any{"in": map[string]any{"name": "X", "unitIds": []string{"unt_01JNOPE"}}}, domain.CodeUnitNotFound)
			e.fails(t, admin, createBrb, map[string]any{"in": map[string]any{"name": "X", "serviceIds": []string{"svc_01JNOPE"}}}, domain.CodeServiceNotFound)
		})
	})
}

// A barber's working hours and time off: what they close, the fields and
// ids they refuse, and hours at two units.
func TestGraphQLAdminSchedule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("time off closes the barber's day", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Aveiro")
			admin := e.keys.AdminAPIKey
			off := e.must(t, admin, `mutation($b: ID!) { addTimeOff(input: {barberId: $b, startsAt: "2027-03-08T00:00:00Z", endsAt: "2027-03-09T00:00:00Z", reason: "Holiday"}) { id reason barber { id } } }`, map[string]any{"b": s.barber})
			av := e.rest(t, "GET", "/availability?unit_id="+s.unit+"&service_id="+s.service+"&date=2027-03-08", e.keys.APIKey, nil, 200)
			if n := len(av["slots"].([]any)); n != 0 {
				t.Fatalf("%d slots during time off", n)
			}
			e.must(t, admin, `mutation($id: ID!) { removeTimeOff(id: $id) }`, map[string]any{"id": str(t, off, "addTimeOff.id")})
			av = e.rest(t, "GET", "/availability?unit_id="+s.unit+"&service_id="+s.service+"&date=2027-03-08", e.keys.APIKey, nil, 200)
			if n := len(av["slots"].([]any)); n == 0 {
				t.Fatal("no slots after the time off was removed")
			}
			e.fails(t, admin, `mutation($id: ID!) { removeTimeOff(id: $id) }`, map[string]any{"id": str(t, off, "addTimeOff.id")}, domain.CodeNotFound)
		})

		t.Run("working hours and time off name every bad field, hours at two units do not overlap", func(t *testing.T) {
			e := newGQLEnv(t, db)
			admin := e.keys.AdminAPIKey
			s := e.newShop(t, "Barbearia Coimbra")
			day := func(wd int, opens, closes string, breaks ...string) map[string]any {
				var bs []any
				for _, b := range breaks {
					from, to, _ := strings.Cut(b, "-")
					bs = append(bs, map[string]any{"from": from, "to": to})
				}
				return map[string]any{"weekday": wd, "opensAt": opens, "closesAt": closes, "breaks": bs}
			}
			week := func(b, u string, days ...map[string]any) map[string]any {
				return map[string]any{"in": map[string]any{"barberId": b, "unitId": u, "days": append([]map[string]any{}, days...)}}
			}
			sameFields(t, e.fails(t, admin, setHours, week(s.barber, s.unit,
				day(7, "09:00", "18:00"),
				day(2, "9:00", "18:00"),
				day(3, "18:00", "09:00"),
				day(4, "09:00", "18:00", "12:00-13:00", "12:30-13:30", "17:30-18:30", "15:00-14:00"),
				day(4, "09:00", "24:00"),
			), domain.CodeValidationFailed),
				"days[0].weekday", "days[1].opensAt", "days[2].closesAt",
				"days[3].breaks[1]", "days[3].breaks[2]", "days[3].breaks[3].to", "days[4].weekday")

			// A barber's hours at two units must not overlap on a weekday.
			other := e.must(t, admin, createUnit, map[string]any{"in": map[string]any{"name": "Barbearia Coimbra II", "timezone": "Europe/Lisbon"}})
			second := str(t, other, "createUnit.id")
			sameFields(t, e.fails(t, admin, setHours, week(s.barber, second, day(1, "12:00", "18:00")), domain.CodeValidationFailed), "unitId")
			e.must(t, admin, `mutation($id: ID!, $u: [ID!]) { updateBarber(id: $id, input: {unitIds: $u}) { id } }`,
				map[string]any{"id": s.barber, "u": []string{s.unit, second}})
			sameFields(t, e.fails(t, admin, setHours, week(s.barber, second, day(2, "08:00", "20:00"), day(1, "12:00", "18:00")), domain.CodeValidationFailed), "days[1]")
			h := e.must(t, admin, setHours, week(s.barber, second, day(1, "13:00", "18:00"), day(0, "10:00", "14:00")))
			if n := len(h["setWorkingHours"].([]any)); n != 2 || dig(t, h, "setWorkingHours.0.weekday") != float64(0) {
				t.Fatalf("week %v", h)
			}
			// An empty week clears the unit's hours only.
			e.must(t, admin, setHours, week(s.barber, second))
			b := e.must(t, admin, `query($id: ID!) { node(id: $id) { ... on Barber { workingHours { unit { id } } } } }`, map[string]any{"id": s.barber})
			if hs := dig(t, b, "node.workingHours").([]any); len(hs) != 1 || str(t, hs[0], "unit.id") != s.unit {
				t.Fatalf("hours after clearing the second unit: %v", hs)
			}

			sameFields(t, e.fails(t, admin, `mutation($b: ID!) { addTimeOff(input: {barberId: $b, startsAt: "2027-03-09T00:00:00Z", endsAt: "2027-03-08T00:00:00Z"}) { id } }`,
				map[string]any{"b": s.barber}, domain.CodeValidationFailed), "endsAt")

			// Unknown ids: the REST codes.
			e.fails(t, admin, setHours, week("brb_01JNOPE", s.unit), domain.CodeBarberNotFound)
			e.fails(t, admin, setHours, week(s.barber, "unt_01JNOPE"), domain.CodeUnitNotFound)
			e.fails(t, admin, `mutation { addTimeOff(input: {barberId: "brb_01JNOPE", startsAt: "2027-03-08T00:00:00Z", endsAt: "2027-03-09T00:00:00Z"}) { id } }`, nil, domain.CodeBarberNotFound)
		})
	})
}

// API keys: their creation, listing and revocation, and the scopes that
// admin and booking operations need.
func TestGraphQLAdminKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("API keys: created once, listed without secrets, revoked at once", func(t *testing.T) {
			e := newGQLEnv(t, db)
			admin := e.keys.AdminAPIKey
			k := e.must(t, admin, `mutation { createApiKey(input: {name: " CRM ", scopes: ["notifications:read", "context:read", "context:read"]}) { secret apiKey { id name prefix scopes lastUsedAt revokedAt } } }`, nil)
			secret := str(t, k, "createApiKey.secret")
			if !strings.HasPrefix(secret, "bk_") || str(t, k, "createApiKey.apiKey.prefix") != secret[:11] ||
				str(t, k, "createApiKey.apiKey.name") != "CRM" || len(dig(t, k, "createApiKey.apiKey.scopes").([]any)) != 2 {
				t.Fatalf("%v", k)
			}
			id := str(t, k, "createApiKey.apiKey.id")
			ctx := e.rest(t, "GET", "/context", secret, nil, 200)
			if str(t, ctx, "api_key.id") != id {
				t.Fatalf("%v", ctx)
			}
			r := e.query(t, admin, `{ apiKeys { id name prefix scopes lastUsedAt revokedAt } }`, nil)
			raw, _ := json.Marshal(r.Data)
			if strings.Contains(string(raw), secret) || strings.Contains(string(raw), secret[11:]) {
				t.Fatal("the key list shows a secret")
			}
			list := r.ok(t)["apiKeys"].([]any)
			if len(list) != 3 || str(t, list, "0.id") != id || dig(t, list, "0.lastUsedAt") == nil || dig(t, list, "0.revokedAt") != nil {
				t.Fatalf("keys %v", list)
			}
			fields := e.must(t, "", `{ __type(name: "APIKey") { fields { name } } }`, nil)
			if raw, _ := json.Marshal(fields); strings.Contains(strings.ToLower(string(raw)), "secret") || strings.Contains(strings.ToLower(string(raw)), "hash") {
				t.Fatalf("APIKey exposes %s", raw)
			}
			rv := e.must(t, admin, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, map[string]any{"id": id})
			at := dig(t, rv, "revokeApiKey.revokedAt")
			if at == nil {
				t.Fatalf("%v", rv)
			}
			if c := call(t, "GET", e.srv.URL+"/api/integrations/v1/context", secret, nil, http.StatusUnauthorized).Code(); c != domain.CodeInvalidAPIKey {
				t.Fatalf("revoked key: %s", c)
			}
			if r := e.query(t, secret, `{ context { serverTime } }`, nil); r.status != http.StatusUnauthorized || r.code(t) != domain.CodeInvalidAPIKey {
				t.Fatalf("revoked key over GraphQL: %d %v", r.status, r.Errors)
			}
			again := e.must(t, admin, `mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }`, map[string]any{"id": id})
			if dig(t, again, "revokeApiKey.revokedAt") != at {
				t.Fatalf("revoking twice moved revokedAt: %v", again)
			}
		})

		t.Run("admin operations need scope admin, booking ones their own", func(t *testing.T) {
			e := newGQLEnv(t, db)
			booking := e.keys.APIKey
			for _, q := range []string{
				`mutation { createUnit(input: {name: "x", timezone: "UTC"}) { id } }`,
				`mutation { deactivateBarber(id: "brb_x") { id } }`,
				`mutation { setWorkingHours(input: {barberId: "brb_x", unitId: "unt_x", days: []}) { id } }`,
				`mutation { createApiKey(input: {name: "x", scopes: ["admin"]}) { secret } }`,
				`mutation { markAppointmentNoShow(id: "apt_x") { id } }`,
				`mutation { adminCancelAppointment(id: "apt_x", reason: "x") { id } }`,
				`{ apiKeys { id } }`,
				`{ agenda(unitId: "unt_x", date: "2027-03-01") { totalCount } }`,
				`{ activeHolds { id } }`,
				`{ customers(first: 1) { totalCount } }`,
			} {
				if c := e.query(t, booking, q, nil).code(t); c != domain.CodeInsufficientScope {
					t.Errorf("%s with a booking key: code %q", q, c)
				}
			}
			k := e.must(t, e.keys.AdminAPIKey, `mutation { createApiKey(input: {name: "Dashboard", scopes: ["admin"]}) { secret } }`, nil)
			adminOnly := str(t, k, "createApiKey.secret")
			for _, q := range []string{
				`{ bookableUnits { id } }`,
				`mutation { cancelAppointment(id: "apt_x", reason: "x") { id } }`,
				`{ pendingNotifications { id } }`,
				`{ appointmentsByClient(clientPhone: "+351912345678") { id } }`,
			} {
				if c := e.query(t, adminOnly, q, nil).code(t); c != domain.CodeInsufficientScope {
					t.Errorf("%s with an admin-only key: code %q", q, c)
				}
			}
			// The admin actions need admin alone.
			e.fails(t, adminOnly, `mutation { adminCancelAppointment(id: "apt_01JNOPE", reason: "x") { id } }`, nil, domain.CodeAppointmentNotFound)
		})

		t.Run("the account: read and renamed by admins alone, shown in GET /context", func(t *testing.T) {
			e := newGQLEnv(t, db)
			admin, booking := e.keys.AdminAPIKey, e.keys.APIKey
			acc := e.must(t, admin, `mutation { updateAccount(input: {name: "  Barbearia Nova  "}) { id name } }`, nil)
			if str(t, acc, "updateAccount.id") != e.keys.AccountID || str(t, acc, "updateAccount.name") != "Barbearia Nova" {
				t.Fatalf("%v", acc)
			}
			if got := e.must(t, admin, `{ account { id name } }`, nil); str(t, got, "account.name") != "Barbearia Nova" {
				t.Fatalf("%v", got)
			}
			if ctx := e.rest(t, "GET", "/context", booking, nil, 200); str(t, ctx, "account.name") != "Barbearia Nova" {
				t.Fatalf("GET /context after the rename: %v", ctx)
			}
			sameFields(t, e.fails(t, admin, `mutation { updateAccount(input: {name: " "}) { id } }`, nil, domain.CodeValidationFailed), "name")
			for _, q := range []string{`{ account { id } }`, `mutation { updateAccount(input: {name: "x"}) { id } }`} {
				if c := e.query(t, booking, q, nil).code(t); c != domain.CodeInsufficientScope {
					t.Errorf("%s with a booking key: code %q", q, c)
				}
			}
		})

		t.Run("a key with an unknown scope is refused", func(t *testing.T) {
			e := newGQLEnv(t, db)
			admin := e.keys.AdminAPIKey
			sameFields(t, e.fails(t, admin, `mutation { createApiKey(input: {name: "x", scopes: ["root"]}) { secret } }`, nil, domain.CodeValidationFailed), "scopes")
		})
	})
}

// An admin key of one account finds none of another account's ids.
func TestGraphQLAdminTenancy(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("another account's ids are not found", func(t *testing.T) {
			e := newGQLEnv(t, db)
			s := e.newShop(t, "Barbearia Viseu")
			apt := e.book(t, s, "2027-03-08T09:00:00", "+351911000009")
			admin := e.keys.AdminAPIKey
			off := e.must(t, admin, `mutation($b: ID!) { addTimeOff(input: {barberId: $b, startsAt: "2027-04-01T00:00:00Z", endsAt: "2027-04-02T00:00:00Z"}) { id } }`, map[string]any{"b": s.barber})
			keys := e.must(t, admin, `{ apiKeys { id name } }`, nil)
			keyID := str(t, keys, "apiKeys.0.id")

			x := newGQLEnv(t, db) // a second account on the same database
			other := x.keys.AdminAPIKey
			xs := x.newShop(t, "Intruder")
			x.fails(t, other, `mutation($id: ID!) { updateUnit(id: $id, input: {name: "Mine"}) { id } }`, map[string]any{"id": s.unit}, domain.CodeUnitNotFound)
			x.fails(t, other, `mutation($id: ID!) { deactivateService(id: $id) { id } }`, map[string]any{"id": s.service}, domain.CodeServiceNotFound)
			x.fails(t, other, `mutation($id: ID!) { deactivateBarber(id: $id) { id } }`, map[string]any{"id": s.barber}, domain.CodeBarberNotFound)
			x.fails(t, other, setHours, map[string]any{"in": map[string]any{"barberId": s.barber, "unitId": xs.unit, "days": []any{}}}, domain.CodeBarberNotFound)
			x.fails(t, other, setHours, map[string]any{"in": map[string]any{"barberId": xs.barber, "unitId": s.unit, "days": []any{}}}, domain.CodeUnitNotFound)
			x.fails(t, other, createBrb, map[string]any{"in": map[string]any{"name": "Spy", "unitIds": []string{s.unit}}}, domain.CodeUnitNotFound)
			x.fails(t, other, `mutation($id: ID!, $s: [ID!]) { updateBarber(id: $id, input: {serviceIds: $s}) { id } }`, map[string]any{"id": xs.barber, "s": []string{s.service}}, domain.CodeServiceNotFound)
			x.fails(t, other, `mutation($b: ID!) { addTimeOff(input: {barberId: $b, startsAt: "2027-04-01T00:00:00Z", endsAt: "2027-04-02T00:00:00Z"}) { id } }`, map[string]any{"b": s.barber}, domain.CodeBarberNotFound)
			x.fails(t, other, `mutation($id: ID!) { removeTimeOff(id: $id) }`, map[string]any{"id": str(t, off, "addTimeOff.id")}, domain.CodeNotFound)
			x.fails(t, other, markNoShow, map[string]any{"id": apt}, domain.CodeAppointmentNotFound)
			x.fails(t, other, `mutation($id: ID!) { adminCancelAppointment(id: $id, reason: "x") { id } }`, map[string]any{"id": apt}, domain.CodeAppointmentNotFound)
			x.fails(t, other, `mutation($id: ID!) { adminRescheduleAppointment(id: $id, input: {startsAt: "2027-03-15T09:00:00"}) { id } }`, map[string]any{"id": apt}, domain.CodeAppointmentNotFound)
			x.fails(t, other, `mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, map[string]any{"id": keyID}, domain.CodeNotFound)
			x.fails(t, other, agendaOf, map[string]any{"unit": s.unit, "date": "2027-03-08"}, domain.CodeUnitNotFound)
			for _, id := range []string{s.unit, s.barber, apt, keyID} {
				if n := x.must(t, other, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}); n["node"] != nil {
					t.Errorf("node %s of another account: %v", id, n)
				}
			}
			mine := x.must(t, other, `{ apiKeys { id } appointments { totalCount } customers { totalCount } activeHolds { id } }`, nil)
			if n := len(mine["apiKeys"].([]any)); n != 2 || dig(t, mine, "appointments.totalCount") != float64(0) || dig(t, mine, "customers.totalCount") != float64(0) {
				t.Fatalf("second account sees %v", mine)
			}
			// Nothing of the first account changed.
			still := e.must(t, admin, `query($id: ID!) { node(id: $id) { ... on Unit { name active } } }`, map[string]any{"id": s.unit})
			if str(t, still, "node.name") != "Barbearia Viseu" || dig(t, still, "node.active") != true {
				t.Fatalf("%v", still)
			}
			e.rest(t, "GET", "/context", e.keys.APIKey, nil, 200)
		})
	})
}

// A query deeper than twelve levels is refused; introspection is not counted.
func TestGraphQLAdminDepthLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Run("depth limit", func(t *testing.T) {
			e := newGQLEnv(t, db)
			// Twelve levels through three lists, which the cost admits;
			// one more level is refused for its depth.
			const twelve = `{ appointments(first: 1) { edges { node { hold { barber { workingHours { barber { timeOff { barber { workingHours { unit { %s } } } } } } } } } } } }`
			e.must(t, e.keys.AdminAPIKey, fmt.Sprintf(twelve, "name"), nil)
			r := e.query(t, e.keys.AdminAPIKey, fmt.Sprintf(twelve, "services { name }"), nil)
			if c := r.code(t); c != domain.CodeValidationFailed || !strings.Contains(r.Errors[0].Message, "13") {
				t.Fatalf("code %q: %v", c, r.Errors)
			}
			// Introspection is bounded by the schema and does not count.
			e.must(t, "", `{ __type(name: "Unit") { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } }`, nil)
		})
	})
}
