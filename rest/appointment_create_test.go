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

	"barberd/demo"
	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/rest/view"
)

// Helpers of the appointment tests (appointment_*_test.go), also used by
// notification_test.go, clienthistory_test.go, holdcap_test.go and text_test.go.

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
func apView(t testing.TB, r *response) view.Appointment {
	t.Helper()
	var a view.Appointment
	r.Decode(t, &a)
	return a
}

// create books with the demo key and expects 201.
func (e *env) apCreate(body map[string]any) view.Appointment {
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
	expect(t, r, http.StatusBadRequest, domain.CodeValidationFailed)
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
	expect(t, r, http.StatusConflict, domain.CodeSlotUnavailable)
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
func (e *env) apOtherBooking(keys *demo.Keys, svc, startsAt string) map[string]any {
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

// same reports whether two appointment views are equal, field by field.
func apSame(a, b view.Appointment) bool { return reflect.DeepEqual(a, b) }

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
			want := view.Appointment{
				ID: a.ID, Status: "confirmed",
				UnitID: e.unit(lisbon), UnitName: lisbon,
				ServiceID: e.service(haircut), ServiceName: haircut,
				BarberID: e.barber(joao), BarberName: joao,
				StartsAt: "2027-03-02T10:00:00", EndsAt: "2027-03-02T10:30:00",
				StartsAtUTC: "2027-03-02T10:00:00Z", EndsAtUTC: "2027-03-02T10:30:00Z",
				Timezone: "Europe/Lisbon", DurationMinutes: 30,
				Price: view.Price{Amount: 2500, Currency: "EUR"},
			}
			got := a
			got.Client, got.ExternalReference, got.HoldID, got.CreatedAt, got.UpdatedAt = view.Client{}, nil, nil, "", ""
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
				{"unknown unit", func(b map[string]any) { b["unit_id"] = "unt_nope" }, 404, domain.CodeUnitNotFound},
				{"unknown service", func(b map[string]any) { b["service_id"] = "svc_nope" }, 404, domain.CodeServiceNotFound},
				{"unknown barber", func(b map[string]any) { b["barber_id"] = "brb_nope" }, 404, domain.CodeBarberNotFound},
				{"unknown hold", func(b map[string]any) { b["hold_id"] = "hld_nope" }, 404, domain.CodeHoldNotFound},
				{"inactive service", func(b map[string]any) { b["service_id"] = e.service(hotTowel) }, 422, domain.CodeServiceNotBookable},
				{"service not online", func(b map[string]any) { b["service_id"] = e.service(wedding) }, 422, domain.CodeServiceNotBookable},
				{"service of another unit", func(b map[string]any) { b["service_id"] = e.service(corte) }, 422, domain.CodeServiceNotBookable},
				{"barber does not perform it", func(b map[string]any) {
					b["service_id"] = e.service(cutAndBeard)
					b["barber_id"] = e.barber(miguel)
				}, 422, domain.CodeBarberNotEligible},
				{"barber of another unit", func(b map[string]any) { b["barber_id"] = e.barber(rafael) }, 422, domain.CodeBarberNotEligible},
				{"inactive barber", func(b map[string]any) { b["barber_id"] = e.barber(pedro) }, 422, domain.CodeBarberNotEligible},
				{"past", func(b map[string]any) { b["starts_at"] = "2027-02-26T10:00:00" }, 422, domain.CodeOutsideWindow},
				{"earlier today", func(b map[string]any) { b["starts_at"] = "2027-03-01T05:00:00" }, 422, domain.CodeOutsideWindow},
				{"within lead time", func(b map[string]any) { b["starts_at"] = "2027-03-01T06:45:00" }, 422, domain.CodeOutsideWindow},
				{"beyond horizon", func(b map[string]any) { b["starts_at"] = "2028-06-06T10:00:00" }, 422, domain.CodeOutsideWindow},
				{"DST gap", func(b map[string]any) { b["starts_at"] = "2027-03-28T01:30:00" }, 422, domain.CodeInvalidLocalTime},
				{"closed day", func(b map[string]any) { b["starts_at"] = "2027-03-07T10:00:00" }, 409, domain.CodeSlotUnavailable},
				{"off the slot grid", func(b map[string]any) { b["starts_at"] = "2027-03-04T15:10:00" }, 409, domain.CodeSlotUnavailable},
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
			k := e.key(domain.ScopeAppointmentsRead, domain.ScopeHoldsWrite)
			expect(t, e.do("POST", "/appointments", k, e.booking(haircut, "2027-03-05T15:00:00")), http.StatusForbidden, domain.CodeInsufficientScope)
		})
	})
}
