package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph"
)

// Helpers of the appointment and notification tests.

// on returns a copy of the env that reports to t, so a subtest's failures
// (including OpenAPI mismatches) are its own.
func (e *env) apOn(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

// post sends a JSON body with the demo booking key.
func (e *env) apPost(path string, body any) *response {
	e.t.Helper()
	return e.do("POST", path, e.keys.APIKey, body)
}

// get sends a GET with the demo booking key.
func (e *env) apGet(path string) *response {
	e.t.Helper()
	return e.do("GET", path, e.keys.APIKey, nil)
}

// appt decodes an appointment response.
func apView(t testing.TB, r *response) graph.AppointmentView {
	t.Helper()
	var a graph.AppointmentView
	r.Decode(t, &a)
	return a
}

// create books with the demo key and expects 201.
func (e *env) apCreate(body map[string]any) graph.AppointmentView {
	e.t.Helper()
	r := e.apPost("/appointments", body)
	expect(e.t, r, http.StatusCreated, "")
	return apView(e.t, r)
}

// bookWith is a Lisbon booking body with the given barber (none when "").
func (e *env) apBody(svc, startsAt, barberName string) map[string]any {
	b := e.booking(svc, startsAt)
	if barberName != "" {
		b["barber_id"] = e.barber(barberName)
	}
	return b
}

// holdFor holds a Lisbon slot with the demo key and returns the hold id.
func (e *env) apHold(svc, startsAt, barberName string, extra map[string]any) string {
	e.t.Helper()
	body := map[string]any{
		"unit_id":    e.unit(lisbon),
		"service_id": e.service(svc),
		"starts_at":  startsAt,
	}
	if barberName != "" {
		body["barber_id"] = e.barber(barberName)
	}
	for k, v := range extra {
		body[k] = v
	}
	r := e.apPost("/slots/hold", body)
	expect(e.t, r, http.StatusCreated, "")
	id, _ := r.JSON(e.t)["hold_id"].(string)
	if id == "" {
		e.t.Fatalf("hold without hold_id: %s", r.Body)
	}
	return id
}

// holdStatus reads a hold's stored status.
func (e *env) apHoldStatus(id string) hold.Status {
	e.t.Helper()
	h, err := e.db.Hold.Get(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return h.Status
}

// appointments counts the demo account's appointments.
func (e *env) apCount() int {
	e.t.Helper()
	return e.db.Appointment.Query().CountX(e.ctx)
}

// customers counts the demo account's clients.
func (e *env) apClients() int {
	e.t.Helper()
	return e.db.Customer.Query().CountX(e.ctx)
}

// setStatus sets an appointment's status directly, as the shop would.
func (e *env) apSetStatus(id string, s appointment.Status) {
	e.t.Helper()
	if err := e.db.Appointment.UpdateOneID(id).SetStatus(s).Exec(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// free reports whether availability offers the Lisbon slot with the barber.
func (e *env) apFree(svc, barberName, startsAt string) bool {
	e.t.Helper()
	q := url.Values{
		"unit_id":    {e.unit(lisbon)},
		"service_id": {e.service(svc)},
		"barber_id":  {e.barber(barberName)},
		"date":       {startsAt[:10]},
	}
	r := e.apGet("/availability?" + q.Encode())
	expect(e.t, r, http.StatusOK, "")
	var av struct {
		Slots []struct {
			StartsAt string `json:"starts_at"`
			BarberID string `json:"barber_id"`
		} `json:"slots"`
	}
	r.Decode(e.t, &av)
	id := e.barber(barberName)
	for _, s := range av.Slots {
		if s.StartsAt == startsAt && s.BarberID == id {
			return true
		}
	}
	return false
}

// fieldsOf lists the fields a validation_failed problem names.
func apFields(t testing.TB, r *response) []string {
	t.Helper()
	var p struct {
		Errors []struct{ Field string } `json:"errors"`
	}
	r.Decode(t, &p)
	out := make([]string, len(p.Errors))
	for i, f := range p.Errors {
		out[i] = f.Field
	}
	return out
}

// expectFields expects a 400 validation_failed naming at least the given fields.
func apExpectFields(t testing.TB, r *response, fields ...string) {
	t.Helper()
	expect(t, r, http.StatusBadRequest, graph.CodeValidationFailed)
	got := apFields(t, r)
	for _, f := range fields {
		if !slices.Contains(got, f) {
			t.Fatalf("errors name %v, want %q among them: %s", got, f, r.Body)
		}
	}
}

type apAlternative struct {
	StartsAt    string `json:"starts_at"`
	EndsAt      string `json:"ends_at"`
	StartsAtUTC string `json:"starts_at_utc"`
	BarberID    string `json:"barber_id"`
}

// expectUnavailable expects 409 slot_unavailable with 1..3 alternatives on
// the same day, none at the refused time with barberID (when given), all
// with barberID (when given), and returns them.
func apExpectUnavailable(t testing.TB, r *response, startsAt, barberID string) []apAlternative {
	t.Helper()
	expect(t, r, http.StatusConflict, graph.CodeSlotUnavailable)
	var p struct {
		Alternatives []apAlternative `json:"alternatives"`
	}
	r.Decode(t, &p)
	if len(p.Alternatives) == 0 || len(p.Alternatives) > 3 {
		t.Fatalf("want 1..3 alternatives: %s", r.Body)
	}
	for _, a := range p.Alternatives {
		if a.StartsAt[:10] != startsAt[:10] {
			t.Errorf("alternative %s not on the day of %s", a.StartsAt, startsAt)
		}
		if barberID != "" && a.BarberID != barberID {
			t.Errorf("alternative with barber %s, want %s", a.BarberID, barberID)
		}
		if a.StartsAt == startsAt && (barberID == "" || a.BarberID == barberID) {
			t.Errorf("refused slot %s offered as an alternative", startsAt)
		}
	}
	return p.Alternatives
}

// otherBooking is a create body for the Lisbon unit of another account.
func (e *env) apOtherBooking(keys *graph.DemoKeys, svc, startsAt string) map[string]any {
	e.t.Helper()
	ctx := tenant.WithAccount(context.Background(), keys.AccountID)
	return map[string]any{
		"unit_id":    e.db.Unit.Query().Where(unit.Name(lisbon)).OnlyIDX(ctx),
		"service_id": e.db.Service.Query().Where(service.Name(svc)).OnlyIDX(ctx),
		"starts_at":  startsAt,
		"client":     map[string]any{"name": clientName, "phone": validPhone},
	}
}

func apUTC(t testing.TB, field, s string) {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil || !strings.HasSuffix(s, "Z") || ts.Location() != time.UTC {
		t.Errorf("%s = %q, want RFC 3339 UTC", field, s)
	}
}

// Tests.

func TestAppointmentCreate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("every field, Lisbon", func(t *testing.T) {
			e := e.apOn(t)
			body := e.apBody(haircut, tuesdayAt10, joao)
			body["client"] = map[string]any{"name": clientName, "phone": validPhone, "email": "ana@example.com"}
			body["external_reference"] = "crm-fields"
			r := e.apPost("/appointments", body)
			expect(t, r, http.StatusCreated, "")
			a := apView(t, r)
			if !strings.HasPrefix(a.ID, "apt_") {
				t.Errorf("id %q, want apt_ prefix", a.ID)
			}
			want := graph.AppointmentView{
				ID: a.ID, Status: "confirmed",
				UnitID: e.unit(lisbon), UnitName: lisbon,
				ServiceID: e.service(haircut), ServiceName: haircut,
				BarberID: e.barber(joao), BarberName: joao,
				StartsAt: "2027-03-02T10:00:00", EndsAt: "2027-03-02T10:30:00",
				StartsAtUTC: "2027-03-02T10:00:00Z", EndsAtUTC: "2027-03-02T10:30:00Z",
				Timezone: "Europe/Lisbon", DurationMinutes: 30,
				Price: graph.Price{Amount: 2500, Currency: "EUR"},
			}
			got := a
			got.Client, got.ExternalReference, got.HoldID, got.CreatedAt, got.UpdatedAt = graph.ClientView{}, nil, nil, "", ""
			if !apSame(got, want) {
				t.Errorf("appointment\n got %+v\nwant %+v", got, want)
			}
			if !strings.HasPrefix(a.Client.ID, "cli_") || a.Client.Name != clientName || a.Client.Phone != validPhone ||
				a.Client.Email == nil || *a.Client.Email != "ana@example.com" {
				t.Errorf("client %+v", a.Client)
			}
			if a.ExternalReference == nil || *a.ExternalReference != "crm-fields" {
				t.Errorf("external_reference %v", a.ExternalReference)
			}
			if a.HoldID != nil {
				t.Errorf("hold_id %v, want null", *a.HoldID)
			}
			apUTC(t, "created_at", a.CreatedAt)
			apUTC(t, "updated_at", a.UpdatedAt)
			m := r.JSON(t)
			for _, k := range []string{"hold_id", "external_reference"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s missing, want it present", k)
				}
			}
			for _, k := range []string{"cancelled_at", "cancellation_reason"} {
				if _, ok := m[k]; ok {
					t.Errorf("%s present on a confirmed appointment", k)
				}
			}
			if r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("Idempotent-Replayed on a first create")
			}
			// The stored row agrees.
			row := e.appointment(a.ID)
			if row.Status != appointment.StatusConfirmed || row.BarberID != e.barber(joao) {
				t.Errorf("row %+v", row)
			}
		})

		t.Run("São Paulo times, email null", func(t *testing.T) {
			e := e.apOn(t)
			ctx := e.ctx
			sp := e.db.Unit.Query().Where(unit.Name(saoPaulo)).OnlyIDX(ctx)
			body := map[string]any{
				"unit_id":    sp,
				"service_id": e.service(corte),
				"barber_id":  e.barber(rafael),
				"starts_at":  tuesdayAt10,
				"client":     map[string]any{"name": "João Pereira", "phone": otherPhone},
			}
			r := e.apPost("/appointments", body)
			expect(t, r, http.StatusCreated, "")
			a := apView(t, r)
			if a.StartsAt != "2027-03-02T10:00:00" || a.EndsAt != "2027-03-02T10:30:00" ||
				a.StartsAtUTC != "2027-03-02T13:00:00Z" || a.EndsAtUTC != "2027-03-02T13:30:00Z" ||
				a.Timezone != "America/Sao_Paulo" || a.UnitName != saoPaulo || a.ServiceName != corte ||
				a.BarberName != rafael || a.Price.Currency != "BRL" {
				t.Errorf("appointment %+v", a)
			}
			client, _ := r.JSON(t)["client"].(map[string]any)
			if v, ok := client["email"]; !ok || v != nil {
				t.Errorf("client.email = %v (present %v), want null", v, ok)
			}
			if a.ExternalReference != nil {
				t.Errorf("external_reference %v, want null", *a.ExternalReference)
			}
		})

		t.Run("Lisbon summer time", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-04-06T10:00:00", joao))
			if a.StartsAt != "2027-04-06T10:00:00" || a.StartsAtUTC != "2027-04-06T09:00:00Z" || a.EndsAtUTC != "2027-04-06T09:30:00Z" {
				t.Errorf("times %s %s %s", a.StartsAt, a.StartsAtUTC, a.EndsAtUTC)
			}
		})

		t.Run("without barber an eligible one is assigned", func(t *testing.T) {
			e := e.apOn(t)
			// Only João performs the 60-minute service.
			a := e.apCreate(e.booking(cutAndBeard, "2027-03-03T10:00:00"))
			if a.BarberID != e.barber(joao) || a.BarberName != joao {
				t.Errorf("barber %s %s, want %s", a.BarberID, a.BarberName, joao)
			}
			// A null barber is no barber.
			nb := e.booking(cutAndBeard, "2027-03-03T11:00:00")
			nb["barber_id"] = nil
			if a := e.apCreate(nb); a.BarberID != e.barber(joao) {
				t.Errorf("barber %s, want %s", a.BarberName, joao)
			}
			// With João busy at 14:00, Miguel gets the haircut.
			e.apCreate(e.apBody(haircut, "2027-03-03T14:00:00", joao))
			b := e.apCreate(e.booking(haircut, "2027-03-03T14:00:00"))
			if b.BarberID != e.barber(miguel) {
				t.Errorf("barber %s, want %s", b.BarberName, miguel)
			}
			// Both busy: nobody left.
			r := e.apPost("/appointments", e.booking(haircut, "2027-03-03T14:00:00"))
			apExpectUnavailable(t, r, "2027-03-03T14:00:00", "")
		})

		t.Run("slot already booked", func(t *testing.T) {
			e := e.apOn(t)
			e.apCreate(e.apBody(haircut, "2027-03-03T15:00:00", joao))
			n := e.apCount()
			body := e.apBody(haircut, "2027-03-03T15:00:00", joao)
			body["client"] = map[string]any{"name": "Someone Else", "phone": otherPhone}
			apExpectUnavailable(t, e.apPost("/appointments", body), "2027-03-03T15:00:00", e.barber(joao))
			// An overlapping start is refused too.
			apExpectUnavailable(t, e.apPost("/appointments", e.apBody(haircut, "2027-03-03T15:15:00", joao)), "2027-03-03T15:15:00", e.barber(joao))
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
		})

		t.Run("slot held by someone else", func(t *testing.T) {
			e := e.apOn(t)
			e.apHold(haircut, "2027-03-03T16:00:00", joao, nil)
			r := e.apPost("/appointments", e.apBody(haircut, "2027-03-03T16:00:00", joao))
			alts := apExpectUnavailable(t, r, "2027-03-03T16:00:00", e.barber(joao))
			if alts[0].StartsAtUTC == "" || alts[0].EndsAt == "" {
				t.Errorf("alternative not in slot form: %+v", alts[0])
			}
		})

		t.Run("validation", func(t *testing.T) {
			e := e.apOn(t)
			n := e.apCount()
			with := func(change func(b map[string]any)) map[string]any {
				b := e.booking(haircut, "2027-03-04T10:00:00")
				change(b)
				return b
			}
			client := func(name, phone string, email any) func(b map[string]any) {
				return func(b map[string]any) {
					c := map[string]any{"name": name, "phone": phone}
					if email != nil {
						c["email"] = email
					}
					b["client"] = c
				}
			}
			cases := []struct {
				name   string
				body   any
				fields []string
			}{
				{"everything missing", map[string]any{}, []string{"unit_id", "service_id", "starts_at", "client.name", "client.phone"}},
				{"client missing", with(func(b map[string]any) { delete(b, "client") }), []string{"client.name", "client.phone"}},
				{"empty strings", map[string]any{"unit_id": "", "service_id": " ", "starts_at": "", "client": map[string]any{"name": "", "phone": ""}},
					[]string{"unit_id", "service_id", "starts_at", "client.name", "client.phone"}},
				{"phone without plus", with(client(clientName, "912345678", nil)), []string{"client.phone"}},
				{"phone starting with 0", with(client(clientName, "+0123456789", nil)), []string{"client.phone"}},
				{"phone too short", with(client(clientName, "+12345", nil)), []string{"client.phone"}},
				{"phone 7 digits", with(client(clientName, "+1234567", nil)), []string{"client.phone"}},
				{"phone 16 digits", with(client(clientName, "+1234567890123456", nil)), []string{"client.phone"}},
				{"phone with spaces", with(client(clientName, "+351 912 345 678", nil)), []string{"client.phone"}},
				{"bad email", with(client(clientName, validPhone, "not-an-email")), []string{"client.email"}},
				{"email with display name", with(client(clientName, validPhone, "Ana <ana@example.com>")), []string{"client.email"}},
				{"name too long", with(client(strings.Repeat("a", 201), validPhone, nil)), []string{"client.name"}},
				{"blank name", with(client("   ", validPhone, nil)), []string{"client.name"}},
				{"external_reference too long", with(func(b map[string]any) { b["external_reference"] = strings.Repeat("r", 256) }), []string{"external_reference"}},
				{"external_reference too long with spaces", with(func(b map[string]any) { b["external_reference"] = strings.Repeat("r", 255) + " " }), []string{"external_reference"}},
				{"empty ids", with(func(b map[string]any) { b["barber_id"], b["hold_id"] = "", " " }), []string{"barber_id", "hold_id"}},
				{"external_reference blank", with(func(b map[string]any) { b["external_reference"] = "  " }), []string{"external_reference"}},
				{"starts_at with Z", with(func(b map[string]any) { b["starts_at"] = "2027-03-04T10:00:00Z" }), []string{"starts_at"}},
				{"starts_at with offset", with(func(b map[string]any) { b["starts_at"] = "2027-03-04T10:00:00+00:00" }), []string{"starts_at"}},
				{"starts_at date only", with(func(b map[string]any) { b["starts_at"] = "2027-03-04" }), []string{"starts_at"}},
				{"starts_at fractional", with(func(b map[string]any) { b["starts_at"] = "2027-03-04T10:00:00.000" }), []string{"starts_at"}},
				{"wrong types", with(func(b map[string]any) { b["unit_id"] = 7; b["client"] = map[string]any{"name": true, "phone": 351} }),
					[]string{"unit_id", "client.name", "client.phone"}},
				{"several at once", with(func(b map[string]any) {
					b["client"] = map[string]any{"name": strings.Repeat("n", 201), "phone": "912345678", "email": "x@"}
					b["external_reference"] = strings.Repeat("r", 256)
				}), []string{"client.name", "client.phone", "client.email", "external_reference"}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					apExpectFields(t, e.apPost("/appointments", c.body), c.fields...)
				})
			}
			// Boundaries that are fine.
			// Lengths count characters, not bytes.
			ok := with(client(strings.Repeat("é", 200), "+12345678", "ana.costa+tag@example.co.uk"))
			ok["external_reference"] = strings.Repeat("ç", 255)
			e.apCreate(ok)
			ok = with(client(clientName, "+123456789012345", nil))
			ok["starts_at"] = "2027-03-04T11:00:00"
			e.apCreate(ok)
			if got := e.apCount(); got != n+2 {
				t.Errorf("%d appointments, want %d", got, n+2)
			}
		})

		t.Run("catalog errors", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-04T15:00:00"
			cases := []struct {
				name   string
				change func(b map[string]any)
				status int
				code   string
			}{
				{"unknown unit", func(b map[string]any) { b["unit_id"] = "unt_nope" }, 404, graph.CodeUnitNotFound},
				{"unknown service", func(b map[string]any) { b["service_id"] = "svc_nope" }, 404, graph.CodeServiceNotFound},
				{"unknown barber", func(b map[string]any) { b["barber_id"] = "brb_nope" }, 404, graph.CodeBarberNotFound},
				{"unknown hold", func(b map[string]any) { b["hold_id"] = "hld_nope" }, 404, graph.CodeHoldNotFound},
				{"inactive service", func(b map[string]any) { b["service_id"] = e.service(hotTowel) }, 422, graph.CodeServiceNotBookable},
				{"service not online", func(b map[string]any) { b["service_id"] = e.service(wedding) }, 422, graph.CodeServiceNotBookable},
				{"service of another unit", func(b map[string]any) { b["service_id"] = e.service(corte) }, 422, graph.CodeServiceNotBookable},
				{"barber does not perform it", func(b map[string]any) {
					b["service_id"] = e.service(cutAndBeard)
					b["barber_id"] = e.barber(miguel)
				}, 422, graph.CodeBarberNotEligible},
				{"barber of another unit", func(b map[string]any) { b["barber_id"] = e.barber(rafael) }, 422, graph.CodeBarberNotEligible},
				{"inactive barber", func(b map[string]any) { b["barber_id"] = e.barber(pedro) }, 422, graph.CodeBarberNotEligible},
				{"past", func(b map[string]any) { b["starts_at"] = "2027-02-26T10:00:00" }, 422, graph.CodeOutsideWindow},
				{"earlier today", func(b map[string]any) { b["starts_at"] = "2027-03-01T05:00:00" }, 422, graph.CodeOutsideWindow},
				{"within lead time", func(b map[string]any) { b["starts_at"] = "2027-03-01T06:45:00" }, 422, graph.CodeOutsideWindow},
				{"beyond horizon", func(b map[string]any) { b["starts_at"] = "2028-06-06T10:00:00" }, 422, graph.CodeOutsideWindow},
				{"DST gap", func(b map[string]any) { b["starts_at"] = "2027-03-28T01:30:00" }, 422, graph.CodeInvalidLocalTime},
				{"closed day", func(b map[string]any) { b["starts_at"] = "2027-03-07T10:00:00" }, 409, graph.CodeSlotUnavailable},
				{"off the slot grid", func(b map[string]any) { b["starts_at"] = "2027-03-04T15:10:00" }, 409, graph.CodeSlotUnavailable},
			}
			n := e.apCount()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					b := e.apBody(haircut, at, "")
					c.change(b)
					expect(t, e.apPost("/appointments", b), c.status, c.code)
				})
			}
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
		})

		t.Run("clients are one per phone", func(t *testing.T) {
			e := e.apOn(t)
			before := e.apClients()
			const phone = "+351933333333"
			b1 := e.booking(haircut, "2027-03-05T10:00:00")
			b1["client"] = map[string]any{"name": "Rui", "phone": phone}
			b2 := e.booking(haircut, "2027-03-05T11:00:00")
			b2["client"] = map[string]any{"name": "Rui", "phone": phone, "email": "rui@example.com"}
			a1, a2 := e.apCreate(b1), e.apCreate(b2)
			if a1.Client.ID != a2.Client.ID {
				t.Errorf("client ids %s and %s, want one", a1.Client.ID, a2.Client.ID)
			}
			if got := e.apClients(); got != before+1 {
				t.Errorf("%d clients, want %d", got, before+1)
			}
			// Another phone is another client.
			b3 := e.booking(haircut, "2027-03-05T13:00:00")
			b3["client"] = map[string]any{"name": "Rui", "phone": "+351944444444"}
			if a3 := e.apCreate(b3); a3.Client.ID == a1.Client.ID {
				t.Errorf("another phone shares client %s", a1.Client.ID)
			}
			// Another account with the same phone gets its own client.
			other := e.otherAccount()
			ob := e.apOtherBooking(other, haircut, "2027-03-05T10:00:00")
			ob["client"] = map[string]any{"name": "Rui", "phone": phone}
			r := e.do("POST", "/appointments", other.APIKey, ob)
			expect(t, r, http.StatusCreated, "")
			if oa := apView(t, r); oa.Client.ID == a1.Client.ID {
				t.Errorf("other account shares client %s", oa.Client.ID)
			}
			octx := tenant.WithAccount(context.Background(), other.AccountID)
			if got := e.db.Customer.Query().CountX(octx); got != 1 {
				t.Errorf("other account has %d clients, want 1", got)
			}
			if got := e.apClients(); got != before+2 {
				t.Errorf("%d clients, want %d", got, before+2)
			}
		})

		t.Run("scope", func(t *testing.T) {
			e := e.apOn(t)
			k := e.key(graph.ScopeAppointmentsRead, graph.ScopeHoldsWrite)
			expect(t, e.do("POST", "/appointments", k, e.booking(haircut, "2027-03-05T15:00:00")), http.StatusForbidden, graph.CodeInsufficientScope)
		})
	})
}

func TestAppointmentCreateWithHold(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("hold is consumed", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, tuesdayAt10, joao, nil)
			if s := e.apHoldStatus(h); s != hold.StatusActive {
				t.Fatalf("hold %s, want active", s)
			}
			// The held slot is taken by the hold, yet the same request with
			// its hold books it.
			b := e.apBody(haircut, tuesdayAt10, joao)
			b["hold_id"] = h
			a := e.apCreate(b)
			if a.HoldID == nil || *a.HoldID != h || a.BarberID != e.barber(joao) || a.StartsAt != tuesdayAt10 {
				t.Errorf("appointment %+v", a)
			}
			if s := e.apHoldStatus(h); s != hold.StatusConsumed {
				t.Errorf("hold %s, want consumed", s)
			}
			if e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("booked slot still offered")
			}
			got := apView(t, e.apGet("/appointments/"+a.ID))
			if got.HoldID == nil || *got.HoldID != h {
				t.Errorf("GET hold_id %v", got.HoldID)
			}
		})

		t.Run("hold without barber in the request", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, tuesdayAt11, "", nil)
			hb, err := e.db.Hold.Get(e.ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			b := e.booking(haircut, tuesdayAt11)
			b["hold_id"] = h
			a := e.apCreate(b)
			if a.BarberID != hb.BarberID {
				t.Errorf("barber %s, want the hold's %s", a.BarberID, hb.BarberID)
			}
		})

		t.Run("hold used twice", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, "2027-03-02T14:00:00", joao, nil)
			b := e.apBody(haircut, "2027-03-02T14:00:00", joao)
			b["hold_id"] = h
			e.apCreate(b)
			n := e.apCount()
			b["client"] = map[string]any{"name": "Other", "phone": otherPhone}
			expect(t, e.apPost("/appointments", b), http.StatusConflict, graph.CodeHoldAlreadyUsed)
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
		})

		t.Run("hold of another account", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			ctx := tenant.WithAccount(context.Background(), other.AccountID)
			r := e.do("POST", "/slots/hold", other.APIKey, map[string]any{
				"unit_id":    e.db.Unit.Query().Where(unit.Name(lisbon)).OnlyIDX(ctx),
				"service_id": e.db.Service.Query().Where(service.Name(haircut)).OnlyIDX(ctx),
				"starts_at":  "2027-03-02T15:00:00",
			})
			expect(t, r, http.StatusCreated, "")
			b := e.booking(haircut, "2027-03-02T15:00:00")
			b["hold_id"] = r.JSON(t)["hold_id"]
			expect(t, e.apPost("/appointments", b), http.StatusNotFound, graph.CodeHoldNotFound)
		})

		t.Run("unknown hold", func(t *testing.T) {
			e := e.apOn(t)
			b := e.booking(haircut, "2027-03-02T15:00:00")
			b["hold_id"] = "hld_01aaaaaaaaaaaaaaaaaaaaaaaa"
			expect(t, e.apPost("/appointments", b), http.StatusNotFound, graph.CodeHoldNotFound)
		})

		t.Run("released hold", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, "2027-03-02T16:00:00", joao, nil)
			expect(t, e.apPost("/slots/hold/"+h+"/release", nil), http.StatusOK, "")
			b := e.apBody(haircut, "2027-03-02T16:00:00", joao)
			b["hold_id"] = h
			expect(t, e.apPost("/appointments", b), http.StatusConflict, graph.CodeHoldExpired)
			// Without the hold the slot is free again.
			delete(b, "hold_id")
			e.apCreate(b)
		})

		t.Run("mismatch", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T17:00:00"
			h := e.apHold(haircut, at, joao, nil)
			cases := []struct {
				name string
				body map[string]any
			}{
				{"other time", e.apBody(haircut, "2027-03-02T17:30:00", joao)},
				{"other service", e.apBody(beardTrim, at, joao)},
				{"other barber", e.apBody(haircut, at, miguel)},
				{"other unit", func() map[string]any {
					b := e.apBody(corte, at, "")
					b["unit_id"] = e.unit(saoPaulo)
					return b
				}()},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					c.body["hold_id"] = h
					expect(t, e.apPost("/appointments", c.body), http.StatusConflict, graph.CodeHoldMismatch)
				})
			}
			if s := e.apHoldStatus(h); s != hold.StatusActive {
				t.Errorf("hold %s after mismatches, want active", s)
			}
			// The hold still books its own slot.
			b := e.apBody(haircut, at, joao)
			b["hold_id"] = h
			e.apCreate(b)
		})

		t.Run("slot held by another hold of the same key", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T18:00:00"
			e.apHold(haircut, at, joao, nil)
			// Without hold_id the held slot is not free, even for the holder.
			apExpectUnavailable(t, e.apPost("/appointments", e.apBody(haircut, at, joao)), at, e.barber(joao))
		})

		// Last: moves the clock.
		t.Run("expired hold", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T09:00:00"
			h := e.apHold(haircut, at, joao, map[string]any{"ttl_seconds": 10})
			e.clock.advance(11 * time.Second)
			b := e.apBody(haircut, at, joao)
			b["hold_id"] = h
			expect(t, e.apPost("/appointments", b), http.StatusConflict, graph.CodeHoldExpired)
			// The slot is free again without the hold.
			delete(b, "hold_id")
			e.apCreate(b)
		})
	})
}

func TestAppointmentIdempotency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reader := e.key(graph.ScopeNotificationsRead)

		t.Run("same reference replays", func(t *testing.T) {
			e := e.apOn(t)
			b := e.apBody(haircut, "2027-03-03T10:00:00", joao)
			b["external_reference"] = "crm-1"
			first := e.apCreate(b)
			n := e.apCount()
			// A different body with the same reference.
			b2 := e.apBody(beardTrim, "2027-03-03T14:00:00", miguel)
			b2["external_reference"] = "crm-1"
			b2["client"] = map[string]any{"name": "Someone", "phone": otherPhone}
			for range 2 {
				r := e.apPost("/appointments", b2)
				expect(t, r, http.StatusOK, "")
				if h := r.Header.Get("Idempotent-Replayed"); h != "true" {
					t.Errorf("Idempotent-Replayed %q, want true", h)
				}
				if got := apView(t, r); !apSame(got, first) {
					t.Errorf("replay\n got %+v\nwant %+v", got, first)
				}
			}
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
			// The other time stayed free.
			if !e.apFree(beardTrim, miguel, "2027-03-03T14:00:00") {
				t.Errorf("replay took the new body's slot")
			}
		})

		t.Run("replay after cancel", func(t *testing.T) {
			e := e.apOn(t)
			b := e.apBody(haircut, "2027-03-03T11:00:00", joao)
			b["external_reference"] = "crm-2"
			first := e.apCreate(b)
			expect(t, e.apPost("/appointments/"+first.ID+"/cancel", map[string]any{"reason": "changed plans"}), http.StatusOK, "")
			n := e.apCount()
			r := e.apPost("/appointments", b)
			expect(t, r, http.StatusOK, "")
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("no Idempotent-Replayed header")
			}
			got := apView(t, r)
			if got.ID != first.ID || got.Status != "cancelled" || got.CancelledAt == nil {
				t.Errorf("replay %+v, want the cancelled %s", got, first.ID)
			}
			if e.apCount() != n {
				t.Errorf("replay after cancel created an appointment")
			}
		})

		t.Run("replay with a hold already used by the first", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-03T15:00:00"
			h := e.apHold(haircut, at, joao, nil)
			b := e.apBody(haircut, at, joao)
			b["hold_id"], b["external_reference"] = h, "crm-hold"
			first := e.apCreate(b)
			r := e.apPost("/appointments", b)
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); got.ID != first.ID || r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay %s, want %s", got.ID, first.ID)
			}
		})

		t.Run("another key of the account makes a new one", func(t *testing.T) {
			e := e.apOn(t)
			b := e.booking(haircut, "2027-03-03T16:00:00")
			b["external_reference"] = "crm-3"
			first := e.apCreate(b)
			k := e.key(graph.ScopeAppointmentsWrite)
			r := e.do("POST", "/appointments", k, b)
			expect(t, r, http.StatusCreated, "")
			second := apView(t, r)
			if second.ID == first.ID || r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("another key replayed %s", first.ID)
			}
			if second.BarberID == first.BarberID {
				t.Errorf("both at %s with one barber", second.StartsAt)
			}
			// Each key replays its own.
			r = e.do("POST", "/appointments", k, b)
			expect(t, r, http.StatusOK, "")
			if apView(t, r).ID != second.ID {
				t.Errorf("second key replayed another appointment")
			}
		})

		t.Run("another account's reference is not a replay", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			ob := e.apOtherBooking(other, haircut, "2027-03-03T17:00:00")
			ob["external_reference"] = "crm-1"
			r := e.do("POST", "/appointments", other.APIKey, ob)
			expect(t, r, http.StatusCreated, "")
		})

		t.Run("no reference, no replay", func(t *testing.T) {
			e := e.apOn(t)
			n := e.apCount()
			a := e.apCreate(e.apBody(haircut, "2027-03-03T18:00:00", joao))
			b := e.apCreate(e.apBody(haircut, "2027-03-03T18:30:00", joao))
			if a.ID == b.ID || e.apCount() != n+2 {
				t.Errorf("two creates without reference made %d appointments", e.apCount()-n)
			}
			// The same body again is a new booking attempt, not a replay.
			apExpectUnavailable(t, e.apPost("/appointments", e.apBody(haircut, "2027-03-03T18:00:00", joao)), "2027-03-03T18:00:00", e.barber(joao))
		})

		t.Run("replays tell nobody", func(t *testing.T) {
			e := e.apOn(t)
			r := e.do("GET", "/notifications/pending?peek=true&limit=200", reader, nil)
			expect(t, r, http.StatusOK, "")
			created := 0
			for _, n := range ntList(t, r) {
				if n.Type == graph.EventCreated {
					created++
				}
			}
			// crm-1, crm-2, crm-hold, crm-3 (two keys), two without reference.
			if created != 7 {
				t.Errorf("%d appointment.created, want 7", created)
			}
		})
	})
}

func TestAppointmentGet(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		t.Run("found", func(t *testing.T) {
			e := e.apOn(t)
			r := e.apGet("/appointments/" + a.ID)
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); !apSame(got, a) {
				t.Errorf("GET\n got %+v\nwant %+v", got, a)
			}
		})
		t.Run("read scope alone suffices", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("GET", "/appointments/"+a.ID, e.key(graph.ScopeAppointmentsRead), nil), http.StatusOK, "")
		})
		t.Run("unknown", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.apGet("/appointments/apt_01aaaaaaaaaaaaaaaaaaaaaaaa"), http.StatusNotFound, graph.CodeAppointmentNotFound)
			expect(t, e.apGet("/appointments/nope"), http.StatusNotFound, graph.CodeAppointmentNotFound)
		})
		t.Run("another account's", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			expect(t, e.do("GET", "/appointments/"+a.ID, other.APIKey, nil), http.StatusNotFound, graph.CodeAppointmentNotFound)
		})
		t.Run("without appointments:read", func(t *testing.T) {
			e := e.apOn(t)
			k := e.key(graph.ScopeAppointmentsWrite, graph.ScopeCatalogRead)
			expect(t, e.do("GET", "/appointments/"+a.ID, k, nil), http.StatusForbidden, graph.CodeInsufficientScope)
		})
		t.Run("without key", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("GET", "/appointments/"+a.ID, "", nil), http.StatusUnauthorized, graph.CodeMissingAPIKey)
		})
	})
}

func TestAppointmentCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reader := e.key(graph.ScopeNotificationsRead)

		t.Run("cancels and frees the slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
			if e.apFree(haircut, joao, tuesdayAt10) {
				t.Fatalf("booked slot offered")
			}
			r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "Client asked by WhatsApp"})
			expect(t, r, http.StatusOK, "")
			c := apView(t, r)
			if c.ID != a.ID || c.Status != "cancelled" || c.CancelledAt == nil || c.CancellationReason == nil ||
				*c.CancellationReason != "Client asked by WhatsApp" || c.StartsAt != a.StartsAt || !reflect.DeepEqual(c.Client, a.Client) {
				t.Fatalf("cancelled %+v", c)
			}
			apUTC(t, "cancelled_at", *c.CancelledAt)
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, c) {
				t.Errorf("GET after cancel\n got %+v\nwant %+v", got, c)
			}
			if !e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("cancelled slot not offered again")
			}
			e.apCreate(e.apBody(haircut, tuesdayAt10, joao))

			t.Run("again is unchanged and tells nobody", func(t *testing.T) {
				e := e.apOn(t)
				r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "another reason"})
				expect(t, r, http.StatusOK, "")
				if again := apView(t, r); !apSame(again, c) {
					t.Errorf("cancel again\n got %+v\nwant %+v", again, c)
				}
				r = e.do("GET", "/notifications/pending?peek=true&limit=200", reader, nil)
				expect(t, r, http.StatusOK, "")
				cancelled := 0
				for _, n := range ntList(t, r) {
					if n.Type == graph.EventCancelled && n.AppointmentID == a.ID {
						cancelled++
					}
				}
				if cancelled != 1 {
					t.Errorf("%d appointment.cancelled for %s, want 1", cancelled, a.ID)
				}
			})
		})

		t.Run("reason", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt11, joao))
			for _, c := range []struct {
				name string
				body any
			}{
				{"missing", map[string]any{}},
				{"null", map[string]any{"reason": nil}},
				{"empty", map[string]any{"reason": ""}},
				{"blank", map[string]any{"reason": "   "}},
				{"501 characters", map[string]any{"reason": strings.Repeat("x", 501)}},
				{"not a string", map[string]any{"reason": 42}},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					apExpectFields(t, e.apPost("/appointments/"+a.ID+"/cancel", c.body), "reason")
				})
			}
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Fatalf("status %s after refused cancels", s)
			}
			r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": strings.Repeat("é", 500)})
			expect(t, r, http.StatusOK, "")
			if c := apView(t, r); c.Status != "cancelled" {
				t.Errorf("status %s", c.Status)
			}
		})

		t.Run("completed and no-show", func(t *testing.T) {
			e := e.apOn(t)
			for i, s := range []appointment.Status{appointment.StatusCompleted, appointment.StatusNoShow} {
				t.Run(string(s), func(t *testing.T) {
					e := e.apOn(t)
					a := e.apCreate(e.apBody(haircut, []string{"2027-03-02T14:00:00", "2027-03-02T15:00:00"}[i], joao))
					e.apSetStatus(a.ID, s)
					expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "x"}), http.StatusConflict, graph.CodeNotCancellable)
					if got := e.appointment(a.ID).Status; got != s {
						t.Errorf("status %s, want %s", got, s)
					}
				})
			}
		})

		t.Run("unknown", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.apPost("/appointments/apt_01aaaaaaaaaaaaaaaaaaaaaaaa/cancel", map[string]any{"reason": "x"}), http.StatusNotFound, graph.CodeAppointmentNotFound)
		})

		t.Run("another account's", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-02T16:00:00", joao))
			other := e.otherAccount()
			expect(t, e.do("POST", "/appointments/"+a.ID+"/cancel", other.APIKey, map[string]any{"reason": "x"}), http.StatusNotFound, graph.CodeAppointmentNotFound)
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Errorf("status %s", s)
			}
		})

		t.Run("without appointments:write", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-02T17:00:00", joao))
			k := e.key(graph.ScopeAppointmentsRead)
			expect(t, e.do("POST", "/appointments/"+a.ID+"/cancel", k, map[string]any{"reason": "x"}), http.StatusForbidden, graph.CodeInsufficientScope)
		})

		// Last: moves the clock.
		t.Run("started", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-01T09:00:00", joao))
			b := e.apCreate(e.apBody(haircut, "2027-03-01T09:30:00", joao))
			r := e.apPost("/appointments/"+b.ID+"/cancel", map[string]any{"reason": "early"})
			expect(t, r, http.StatusOK, "")
			cancelled := apView(t, r)
			e.clock.advance(3 * time.Hour) // 09:00 Lisbon (UTC+0)
			expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "late"}), http.StatusConflict, graph.CodeNotCancellable)
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Errorf("status %s", s)
			}
			// One cancelled before it started still answers 200, unchanged.
			e.clock.advance(time.Hour)
			r = e.apPost("/appointments/"+b.ID+"/cancel", map[string]any{"reason": "again"})
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); !apSame(got, cancelled) {
				t.Errorf("cancel again after start\n got %+v\nwant %+v", got, cancelled)
			}
		})
	})
}

func TestAppointmentReschedule(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reschedule := func(e *env, id string, body any) *response {
			e.t.Helper()
			return e.apPost("/appointments/"+id+"/reschedule", body)
		}

		t.Run("moves and frees the old slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-02T15:00:00"})
			expect(t, r, http.StatusOK, "")
			m := apView(t, r)
			if m.ID != a.ID || m.Status != "confirmed" || m.StartsAt != "2027-03-02T15:00:00" || m.EndsAt != "2027-03-02T15:30:00" ||
				m.StartsAtUTC != "2027-03-02T15:00:00Z" || m.BarberID != a.BarberID || !reflect.DeepEqual(m.Client, a.Client) || m.CreatedAt != a.CreatedAt {
				t.Errorf("moved %+v", m)
			}
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, m) {
				t.Errorf("GET after reschedule\n got %+v\nwant %+v", got, m)
			}
			if !e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("old slot not freed")
			}
			if e.apFree(haircut, joao, "2027-03-02T15:00:00") {
				t.Errorf("new slot still offered")
			}
		})

		t.Run("15 minutes later over its own time", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(cutAndBeard, "2027-03-03T10:00:00", joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-03T10:15:00"})
			expect(t, r, http.StatusOK, "")
			if m := apView(t, r); m.StartsAt != "2027-03-03T10:15:00" || m.EndsAt != "2027-03-03T11:15:00" || m.ID != a.ID {
				t.Errorf("moved %+v", m)
			}
			// And 15 minutes earlier, back over it again.
			r = reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-03T10:00:00"})
			expect(t, r, http.StatusOK, "")
			if e.apFree(haircut, joao, "2027-03-03T10:45:00") {
				t.Errorf("10:45 offered inside the moved appointment")
			}
			if !e.apFree(haircut, joao, "2027-03-03T11:00:00") {
				t.Errorf("11:00 not offered after moving back")
			}
		})

		t.Run("to a taken slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-04T10:00:00", joao))
			e.apCreate(e.apBody(haircut, "2027-03-04T15:00:00", joao))
			apExpectUnavailable(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-04T15:00:00"}), "2027-03-04T15:00:00", e.barber(joao))
			// A slot held by someone else is taken too.
			e.apHold(haircut, "2027-03-04T16:00:00", joao, nil)
			apExpectUnavailable(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-04T16:00:00"}), "2027-03-04T16:00:00", e.barber(joao))
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, a) {
				t.Errorf("refused reschedule changed the appointment: %+v", got)
			}
		})

		t.Run("to another barber", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-05T10:00:00", joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T10:00:00", "barber_id": e.barber(miguel)})
			expect(t, r, http.StatusOK, "")
			if m := apView(t, r); m.BarberID != e.barber(miguel) || m.BarberName != miguel || m.StartsAt != "2027-03-05T10:00:00" {
				t.Errorf("moved %+v", m)
			}
			if !e.apFree(haircut, joao, "2027-03-05T10:00:00") || e.apFree(haircut, miguel, "2027-03-05T10:00:00") {
				t.Errorf("availability does not follow the barber change")
			}
		})

		t.Run("to an ineligible barber", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(cutAndBeard, "2027-03-05T14:00:00", joao))
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": e.barber(miguel)}), http.StatusUnprocessableEntity, graph.CodeBarberNotEligible)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": e.barber(pedro)}), http.StatusUnprocessableEntity, graph.CodeBarberNotEligible)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": "brb_nope"}), http.StatusNotFound, graph.CodeBarberNotFound)
		})

		t.Run("with a hold", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-08T10:00:00", joao))
			h := e.apHold(haircut, "2027-03-08T15:00:00", miguel, nil)
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T15:00:00", "hold_id": h})
			expect(t, r, http.StatusOK, "")
			m := apView(t, r)
			if m.StartsAt != "2027-03-08T15:00:00" || m.BarberID != e.barber(miguel) || m.HoldID == nil || *m.HoldID != h {
				t.Errorf("moved %+v", m)
			}
			if s := e.apHoldStatus(h); s != hold.StatusConsumed {
				t.Errorf("hold %s, want consumed", s)
			}
			if !e.apFree(haircut, joao, "2027-03-08T10:00:00") {
				t.Errorf("old slot not freed")
			}
			// The hold is spent.
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T15:00:00", "hold_id": h}), http.StatusConflict, graph.CodeHoldAlreadyUsed)
			// A hold for another time than asked.
			h2 := e.apHold(haircut, "2027-03-08T16:00:00", miguel, nil)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T16:30:00", "hold_id": h2}), http.StatusConflict, graph.CodeHoldMismatch)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T16:00:00", "hold_id": "hld_nope"}), http.StatusNotFound, graph.CodeHoldNotFound)
			// Another account's hold does not exist here.
			other := e.otherAccount()
			ob := e.apOtherBooking(other, haircut, "2027-03-08T17:00:00")
			delete(ob, "client")
			r = e.do("POST", "/slots/hold", other.APIKey, ob)
			expect(t, r, http.StatusCreated, "")
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T17:00:00", "hold_id": r.JSON(t)["hold_id"]}), http.StatusNotFound, graph.CodeHoldNotFound)
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, m) {
				t.Errorf("refused reschedules changed the appointment: %+v", got)
			}
		})

		t.Run("not confirmed", func(t *testing.T) {
			e := e.apOn(t)
			for i, s := range []string{"cancelled", "completed", "no_show"} {
				t.Run(s, func(t *testing.T) {
					e := e.apOn(t)
					at := []string{"2027-03-09T10:00:00", "2027-03-09T11:00:00", "2027-03-09T14:00:00"}[i]
					a := e.apCreate(e.apBody(haircut, at, joao))
					if s == "cancelled" {
						expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "x"}), http.StatusOK, "")
					} else {
						e.apSetStatus(a.ID, appointment.Status(s))
					}
					expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-09T17:00:00"}), http.StatusConflict, graph.CodeNotReschedulable)
					if got := e.appointment(a.ID); got.Status != appointment.Status(s) || apLisbonWinter(got.StartsAt) != at {
						t.Errorf("appointment changed: %s %v", got.Status, got.StartsAt)
					}
				})
			}
		})

		t.Run("bad times", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-10T10:00:00", joao))
			for _, c := range []struct {
				name     string
				startsAt any
				status   int
				code     string
			}{
				{"missing", nil, 400, graph.CodeValidationFailed},
				{"with Z", "2027-03-10T15:00:00Z", 400, graph.CodeValidationFailed},
				{"date only", "2027-03-10", 400, graph.CodeValidationFailed},
				{"not a string", 20270310, 400, graph.CodeValidationFailed},
				{"past", "2027-02-26T10:00:00", 422, graph.CodeOutsideWindow},
				{"within lead time", "2027-03-01T06:30:00", 422, graph.CodeOutsideWindow},
				{"beyond horizon", "2028-06-06T10:00:00", 422, graph.CodeOutsideWindow},
				{"DST gap", "2027-03-28T01:30:00", 422, graph.CodeInvalidLocalTime},
				{"closed day", "2027-03-07T10:00:00", 409, graph.CodeSlotUnavailable},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					body := map[string]any{}
					if c.startsAt != nil {
						body["starts_at"] = c.startsAt
					}
					r := reschedule(e, a.ID, body)
					expect(t, r, c.status, c.code)
					if c.status == 400 {
						apExpectFields(t, r, "starts_at")
					}
				})
			}
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, a) {
				t.Errorf("refused reschedules changed the appointment: %+v", got)
			}
		})

		t.Run("unknown and another account's", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, reschedule(e, "apt_01aaaaaaaaaaaaaaaaaaaaaaaa", map[string]any{"starts_at": "2027-03-10T15:00:00"}), http.StatusNotFound, graph.CodeAppointmentNotFound)
			a := e.apCreate(e.apBody(haircut, "2027-03-10T11:00:00", joao))
			other := e.otherAccount()
			r := e.do("POST", "/appointments/"+a.ID+"/reschedule", other.APIKey, map[string]any{"starts_at": "2027-03-10T15:00:00"})
			expect(t, r, http.StatusNotFound, graph.CodeAppointmentNotFound)
		})

		// Last: moves the clock.
		t.Run("started", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-01T09:00:00", joao))
			e.clock.advance(3*time.Hour + time.Minute) // 09:01 Lisbon
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-11T15:00:00"}), http.StatusConflict, graph.CodeNotReschedulable)
		})
	})
}

// lisbonWinter formats an instant as a Lisbon local time before the
// daylight saving change (UTC+0), for comparison with a requested starts_at.
func apLisbonWinter(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

// same reports whether two appointment views are equal, field by field.
func apSame(a, b graph.AppointmentView) bool { return reflect.DeepEqual(a, b) }
