package openapitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

const base = "/api/integrations/v1"

func load(t *testing.T) *Validator {
	t.Helper()
	b, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := New(b)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func req(method, path string) *http.Request {
	return httptest.NewRequest(method, path, nil)
}

func jsonHeader(extra ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req-1"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func problemHeader(extra ...string) http.Header {
	h := jsonHeader(extra...)
	h.Set("Content-Type", "application/problem+json")
	return h
}

// mutate decodes body, applies f and encodes it again.
func mutate(t *testing.T, body string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const slot = `{"starts_at":"2030-03-29T10:00:00","ends_at":"2030-03-29T10:30:00","starts_at_utc":"2030-03-29T10:00:00Z","ends_at_utc":"2030-03-29T10:30:00Z","barber_id":"b1"}`

const availabilityRange = `{"unit_id":"u1","service_id":"s1","barber_id":null,"timezone":"Europe/Lisbon","from":"2030-03-29","to":"2030-03-30",` +
	`"days":[{"date":"2030-03-29","slots":[` + slot + `],"reason":null},{"date":"2030-03-30","slots":[],"reason":"closed"}]}`

const next = `{"unit_id":"u1","service_id":"s1","barber_id":null,"timezone":"Europe/Lisbon","slots":[` + slot + `],"reason":null}`

const appointment = `{
  "id": "a1", "status": "confirmed",
  "unit_id": "u1", "unit_name": "Lisboa", "service_id": "s1", "service_name": "Corte",
  "barber_id": "b1", "barber_name": "Joao",
  "starts_at": "2030-03-29T10:00:00", "ends_at": "2030-03-29T10:30:00",
  "starts_at_utc": "2030-03-29T10:00:00Z", "ends_at_utc": "2030-03-29T10:30:00Z",
  "timezone": "Europe/Lisbon", "duration_minutes": 30,
  "price": {"amount": 2500, "currency": "EUR"},
  "client": {"id": "c1", "name": "Ana", "phone": "+351912345678", "email": null},
  "external_reference": null, "hold_id": null,
  "created_at": "2030-03-01T09:00:00.123Z", "updated_at": "2030-03-01T09:00:00Z"
}`

func problem(status int, code string, extra string) string {
	s := `{"type":"https://barberd.dev/problems/` + code + `","title":"t","status":` + itoa(status) +
		`,"detail":"d","code":"` + code + `","request_id":"req-1"`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestDocument(t *testing.T) {
	v := load(t)
	doc := v.Document()
	if doc.OpenAPI != "3.1.0" || doc.Info.Title != "barberd integrations API" || doc.Info.Version != "1.0.0" {
		t.Errorf("info: %s %q %q", doc.OpenAPI, doc.Info.Title, doc.Info.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != base {
		t.Errorf("servers: %+v", doc.Servers)
	}
	wantOps := map[string]string{
		"GET /openapi.json":                  "",
		"GET /context":                       "context:read",
		"GET /units":                         "catalog:read",
		"GET /services":                      "catalog:read",
		"GET /barbers":                       "catalog:read",
		"GET /availability":                  "availability:read",
		"GET /availability/range":            "availability:read",
		"GET /availability/next":             "availability:read",
		"POST /slots/hold":                   "holds:write",
		"POST /slots/hold/{hold_id}/release": "holds:write",
		"POST /slots/hold/release-all":       "holds:write",
		"GET /appointments":                  "appointments:read",
		"POST /appointments":                 "appointments:write",
		"GET /appointments/{id}":             "appointments:read",
		"POST /appointments/{id}/cancel":     "appointments:write",
		"POST /appointments/{id}/reschedule": "appointments:write",
		"GET /waitlist":                      "appointments:read",
		"POST /waitlist":                     "appointments:write",
		"GET /waitlist/{id}":                 "appointments:read",
		"DELETE /waitlist/{id}":              "appointments:write",
		"GET /notifications/pending":         "notifications:read",
		"POST /notifications/ack":            "notifications:read",
	}
	got := map[string]bool{}
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			got[key] = true
			scope, known := wantOps[key]
			if !known {
				t.Errorf("unexpected operation %s", key)
				continue
			}
			if op.OperationID == "" || ids[op.OperationID] {
				t.Errorf("%s: missing or duplicate operationId %q", key, op.OperationID)
			}
			ids[op.OperationID] = true
			if op.Summary == "" || op.Description == "" {
				t.Errorf("%s: summary or description missing", key)
			}
			gotScope, _ := op.Extensions["x-required-scope"].(string)
			if gotScope != scope {
				t.Errorf("%s: x-required-scope %q, want %q", key, gotScope, scope)
			}
			if scope != "" && !strings.Contains(op.Description, scope) {
				t.Errorf("%s: description does not name scope %s", key, scope)
			}
			if scope == "" && (op.Security == nil || len(*op.Security) != 0) {
				t.Errorf("%s: want security: []", key)
			}
			for code, rr := range op.Responses.Map() {
				r := rr.Value
				if r.Headers["X-Request-Id"] == nil {
					t.Errorf("%s %s: no X-Request-Id header", key, code)
				}
				if (code == "429" || code == "503") && r.Headers["Retry-After"] == nil {
					t.Errorf("%s %s: no Retry-After header", key, code)
				}
				if code[0] == '4' || code[0] == '5' {
					if r.Content.Get("application/problem+json") == nil {
						t.Errorf("%s %s: not a problem response", key, code)
					}
					if r.Description == nil || *r.Description == "" {
						t.Errorf("%s %s: no description", key, code)
					}
				}
			}
		}
	}
	for key := range wantOps {
		if !got[key] {
			t.Errorf("missing operation %s", key)
		}
	}
	if r := doc.Paths.Find("/appointments").Post.Responses.Status(200).Value; r.Headers["Idempotent-Replayed"] == nil {
		t.Error("POST /appointments 200: no Idempotent-Replayed header")
	}
	if r := doc.Paths.Find("/waitlist").Post.Responses.Status(200).Value; r.Headers["Idempotent-Replayed"] == nil {
		t.Error("POST /waitlist 200: no Idempotent-Replayed header")
	}
	if s := doc.Components.SecuritySchemes["ApiKey"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-Service-Api-Key" {
		t.Errorf("security scheme ApiKey: %+v", s)
	}
}

// TestDocumentIsPrettyJSON keeps the file hand-editable: 2-space indented JSON.
func TestDocumentIsPrettyJSON(t *testing.T) {
	b, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"openapi\": \"3.1.0\"") {
		t.Error("openapi.json is not 2-space pretty-printed or does not start with openapi: 3.1.0")
	}
}

func TestCheck(t *testing.T) {
	v := load(t)
	doc, _ := os.ReadFile("../openapi.json")
	cancelled := string(mutate(t, appointment, func(m map[string]any) {
		m["status"] = "cancelled"
		m["cancelled_at"] = "2030-03-02T09:00:00Z"
		m["cancellation_reason"] = "changed plans"
	}))
	notification := `{"id":"n1","type":"appointment.created","created_at":"2030-03-01T09:00:00Z","appointment_id":"a1","source":"api","appointment":` + appointment + `}`
	rescheduled := string(mutate(t, notification, func(m map[string]any) {
		m["type"] = "appointment.rescheduled"
		m["previous_starts_at"] = "2030-03-29T09:00:00"
		m["previous_starts_at_utc"] = "2030-03-29T09:00:00Z"
	}))
	hold := `{"hold_id":"h1","status":"active","unit_id":"u1","service_id":"s1","barber_id":"b1","starts_at":"2030-03-29T10:00:00","ends_at":"2030-03-29T10:30:00","starts_at_utc":"2030-03-29T10:00:00Z","ends_at_utc":"2030-03-29T10:30:00Z","timezone":"Europe/Lisbon","expires_at":"2030-03-01T09:05:00Z","created_at":"2030-03-01T09:00:00Z"}`
	availability := `{"unit_id":"u1","service_id":"s1","barber_id":null,"date":"2030-03-29","timezone":"Europe/Lisbon","slots":[` + slot + `],"reason":null}`
	context := `{"account":{"id":"acc","name":"Demo"},"api_key":{"id":"k1","name":"bot","prefix":"bk_abc","scopes":["context:read"]},"server_time":"2030-03-01T09:00:00Z","limits":{"hold_ttl_seconds":{"default":300,"min":10,"max":1800},"notifications_limit":{"default":50,"max":200},"active_holds_max":10,"active_holds":3}}`
	unit := `{"id":"u1","name":"Lisboa","timezone":"Europe/Lisbon","address":"Rua A","phone":"+351210000000","booking_policy":{"slot_step_minutes":15,"min_lead_minutes":60,"horizon_days":365}}`
	waitlistEntry := `{"id":"wl1","status":"waiting","unit_id":"u1","service_id":"s1","barber_id":null,"from":"2030-03-25","to":"2030-03-29",` +
		`"time_from":"17:00","time_to":null,"weekdays":[5],"timezone":"Europe/Lisbon",` +
		`"client":{"id":"c1","name":"Ana","phone":"+351912345678","email":null},"external_reference":"crm-7","offer_hold_seconds":600,` +
		`"offer":null,"appointment_id":null,"created_at":"2030-03-01T09:00:00Z","updated_at":"2030-03-01T09:00:00Z"}`
	offered := strings.Replace(strings.Replace(waitlistEntry, `"offer":null`, `"offer":{"slot":`+slot+`,"hold_id":"h1","offered_at":"2030-03-02T09:00:00Z"}`, 1), `"waiting"`, `"offered"`, 1)
	slotAvailable := `{"id":"n2","type":"slot.available","created_at":"2030-03-02T09:00:00Z","appointment_id":null,"waitlist_entry":` + offered + `,"slot":` + slot + `,"hold":` + hold + `}`
	service := `{"id":"s1","name":"Corte","description":"","duration_minutes":30,"buffer_minutes":0,"price":{"amount":2500,"currency":"EUR"},"unit_ids":["u1"]}`

	cases := []struct {
		name   string
		method string
		path   string
		status int
		header http.Header
		body   string
		ok     bool
	}{
		// appointments
		{"good appointment 201", "POST", base + "/appointments", 201, jsonHeader(), appointment, true},
		{"relative path accepted", "POST", "/appointments", 201, jsonHeader(), appointment, true},
		{"content type with charset", "POST", "/appointments", 201, jsonHeader("Content-Type", "application/json; charset=utf-8"), appointment, true},
		{"extra field", "POST", "/appointments", 201, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["surprise"] = 1 })), false},
		{"missing field", "POST", "/appointments", 201, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { delete(m, "hold_id") })), false},
		{"nullable email and references set", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) {
			m["client"].(map[string]any)["email"] = "ana@example.com"
			m["external_reference"] = "crm-42"
			m["hold_id"] = "h1"
		})), true},
		{"email of wrong type", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["client"].(map[string]any)["email"] = 5 })), false},
		{"barber_id null where not nullable", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["barber_id"] = nil })), false},
		{"unknown status", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["status"] = "pending" })), false},
		{"local time with Z", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["starts_at"] = "2030-03-29T10:00:00Z" })), false},
		{"utc time with offset", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["starts_at_utc"] = "2030-03-29T10:00:00+00:00" })), false},
		{"price as float", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["price"].(map[string]any)["amount"] = 25.5 })), false},
		{"cancelled with reason", "POST", "/appointments/a1/cancel", 200, jsonHeader(), cancelled, true},
		{"cancelled without cancelled_at", "POST", "/appointments/a1/cancel", 200, jsonHeader(), string(mutate(t, cancelled, func(m map[string]any) { delete(m, "cancelled_at") })), false},
		{"confirmed with cancellation_reason", "GET", "/appointments/a1", 200, jsonHeader(), string(mutate(t, appointment, func(m map[string]any) { m["cancellation_reason"] = "x" })), false},
		{"replay with header", "POST", "/appointments", 200, jsonHeader("Idempotent-Replayed", "true"), appointment, true},
		{"replay without header", "POST", "/appointments", 200, jsonHeader(), appointment, false},
		{"missing X-Request-Id", "POST", "/appointments", 201, http.Header{"Content-Type": {"application/json"}}, appointment, false},
		{"wrong content type", "POST", "/appointments", 201, jsonHeader("Content-Type", "text/plain"), appointment, false},
		{"empty body", "POST", "/appointments", 201, jsonHeader(), "", false},
		{"undocumented status", "GET", "/appointments/a1", 201, jsonHeader(), appointment, false},
		{"undocumented 418", "GET", "/units", 418, problemHeader(), problem(418, "teapot", ""), false},
		{"reschedule 200", "POST", "/appointments/a1/reschedule", 200, jsonHeader(), appointment, true},
		{"client appointments", "GET", "/appointments?client_phone=%2B351912345678", 200, jsonHeader(), `{"data":[` + appointment + "," + cancelled + `]}`, true},
		{"client appointments none", "GET", "/appointments?external_reference=crm-42", 200, jsonHeader(), `{"data":[]}`, true},
		{"client appointments bare array", "GET", "/appointments", 200, jsonHeader(), `[` + appointment + `]`, false},
		{"client appointments 404", "GET", "/appointments", 404, problemHeader(), problem(404, "appointment_not_found", ""), false},
		{"client appointments 400", "GET", "/appointments", 400, problemHeader(), problem(400, "validation_failed", `"errors":[{"field":"client_phone","message":"m"}]`), true},

		{"replay header not true", "POST", "/appointments", 200, jsonHeader("Idempotent-Replayed", "false"), appointment, false},
		{"HEAD like GET", "HEAD", "/units", 200, jsonHeader(), "", true},
		{"HEAD undocumented status", "HEAD", "/units", 201, jsonHeader(), "", false},

		// problems
		{"slot_unavailable with alternatives", "POST", "/appointments", 409, problemHeader(), problem(409, "slot_unavailable", `"alternatives":[`+slot+`]`), true},
		{"slot_unavailable no alternatives left", "POST", "/slots/hold", 409, problemHeader(), problem(409, "slot_unavailable", `"alternatives":[]`), true},
		{"slot_unavailable without alternatives", "POST", "/appointments", 409, problemHeader(), problem(409, "slot_unavailable", ""), false},
		{"four alternatives", "POST", "/appointments", 409, problemHeader(), problem(409, "slot_unavailable", `"alternatives":[`+slot+","+slot+","+slot+","+slot+`]`), false},
		{"alternatives on another code", "POST", "/appointments", 409, problemHeader(), problem(409, "hold_mismatch", `"alternatives":[]`), false},
		{"validation_failed with errors", "POST", "/appointments", 400, problemHeader(), problem(400, "validation_failed", `"errors":[{"field":"client.phone","message":"must be E.164"}]`), true},
		{"validation_failed without errors", "POST", "/appointments", 400, problemHeader(), problem(400, "validation_failed", ""), false},
		{"invalid_json", "POST", "/appointments", 400, problemHeader(), problem(400, "invalid_json", ""), true},
		{"problem with charset", "GET", "/appointments/x", 404, problemHeader("Content-Type", "application/problem+json; charset=utf-8"), problem(404, "appointment_not_found", ""), true},
		{"problem as application/json", "GET", "/appointments/x", 404, jsonHeader(), problem(404, "appointment_not_found", ""), false},
		{"problem status mismatch", "GET", "/appointments/x", 404, problemHeader(), problem(409, "appointment_not_found", ""), false},
		{"code of another status", "GET", "/appointments/x", 404, problemHeader(), problem(404, "slot_unavailable", `"alternatives":[]`), false},
		{"problem extra field", "GET", "/context", 401, problemHeader(), problem(401, "missing_api_key", `"stack":"..."`), false},
		{"problem request_id differs", "GET", "/context", 401, problemHeader("X-Request-Id", "other"), problem(401, "missing_api_key", ""), false},
		{"403", "GET", "/units", 403, problemHeader(), problem(403, "insufficient_scope", ""), true},
		{"429 with Retry-After", "GET", "/units", 429, problemHeader("Retry-After", "3"), problem(429, "rate_limited", ""), true},
		{"429 without Retry-After", "GET", "/units", 429, problemHeader(), problem(429, "rate_limited", ""), false},
		{"Retry-After not seconds", "GET", "/units", 429, problemHeader("Retry-After", "soon"), problem(429, "rate_limited", ""), false},
		{"503", "GET", "/units", 503, problemHeader("Retry-After", "5"), problem(503, "unavailable", ""), true},
		{"500", "GET", "/units", 500, problemHeader(), problem(500, "internal_error", ""), true},
		{"notification_not_found", "POST", "/notifications/ack", 404, problemHeader(), problem(404, "notification_not_found", ""), true},
		{"422", "POST", "/slots/hold", 422, problemHeader(), problem(422, "invalid_local_time", ""), true},
		{"415", "POST", "/slots/hold", 415, problemHeader(), problem(415, "unsupported_media_type", ""), true},
		{"413", "POST", "/appointments/a1/cancel", 413, problemHeader(), problem(413, "payload_too_large", ""), true},

		// unknown routes and methods
		{"unknown path 404", "GET", base + "/nope", 404, problemHeader(), problem(404, "not_found", ""), true},
		{"unknown relative path 404", "GET", "/nope/deeper", 404, problemHeader(), problem(404, "not_found", ""), true},
		{"trailing slash is unknown", "GET", base + "/units/", 404, problemHeader(), problem(404, "not_found", ""), true},
		{"unknown path other code", "GET", base + "/nope", 404, problemHeader(), problem(404, "unit_not_found", ""), false},
		{"unknown path 200", "GET", base + "/nope", 200, jsonHeader(), `{}`, false},
		{"unknown path 404 not a problem", "GET", base + "/nope", 404, jsonHeader(), `{"error":"x"}`, false},
		{"method not allowed", "DELETE", base + "/appointments/a1", 405, problemHeader(), problem(405, "method_not_allowed", ""), true},
		{"method not allowed as 404", "DELETE", base + "/appointments/a1", 404, problemHeader(), problem(404, "not_found", ""), false},

		// other resources
		{"openapi.json", "GET", base + "/openapi.json", 200, jsonHeader(), string(doc), true},
		{"context", "GET", "/context", 200, jsonHeader(), context, true},
		{"context missing limits", "GET", "/context", 200, jsonHeader(), string(mutate(t, context, func(m map[string]any) { delete(m, "limits") })), false},
		{"units", "GET", "/units", 200, jsonHeader(), `{"data":[` + unit + `]}`, true},
		{"units bare array", "GET", "/units", 200, jsonHeader(), `[` + unit + `]`, false},
		{"services", "GET", "/services?unit_id=u1", 200, jsonHeader(), `{"data":[` + service + `]}`, true},
		{"currency lowercase", "GET", "/services", 200, jsonHeader(), `{"data":[` + strings.Replace(service, "EUR", "eur", 1) + `]}`, false},
		{"barbers", "GET", "/barbers", 200, jsonHeader(), `{"data":[{"id":"b1","name":"Joao","unit_ids":["u1"],"service_ids":["s1"]}]}`, true},
		{"availability null barber", "GET", "/availability?unit_id=u1&service_id=s1&date=2030-03-29", 200, jsonHeader(), availability, true},
		{"availability barber set", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"barber_id":null`, `"barber_id":"b1"`, 1), true},
		{"availability barber_id missing", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"barber_id":null,`, ``, 1), false},
		{"availability barber_id number", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"barber_id":null`, `"barber_id":5`, 1), false},
		{"availability slot extra field", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"barber_id":"b1"}`, `"barber_id":"b1","x":1}`, 1), false},
		{"availability empty with reason", "GET", "/availability", 200, jsonHeader(), strings.Replace(strings.Replace(availability, `"slots":[`+slot+`]`, `"slots":[]`, 1), `"reason":null`, `"reason":"closed"`, 1), true},
		{"availability unknown reason", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"reason":null`, `"reason":"on_holiday"`, 1), false},
		{"availability reason missing", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `,"reason":null`, ``, 1), false},
		{"availability date with time", "GET", "/availability", 200, jsonHeader(), strings.Replace(availability, `"date":"2030-03-29"`, `"date":"2030-03-29T00:00:00"`, 1), false},
		{"range", "GET", "/availability/range?unit_id=u1&service_id=s1&from=2030-03-29&to=2030-03-30", 200, jsonHeader(), availabilityRange, true},
		{"range day unknown reason", "GET", "/availability/range", 200, jsonHeader(), strings.Replace(availabilityRange, `"reason":"closed"`, `"reason":"none_within_horizon"`, 1), false},
		{"range day with unit_id", "GET", "/availability/range", 200, jsonHeader(), strings.Replace(availabilityRange, `{"date":"2030-03-30"`, `{"unit_id":"u1","date":"2030-03-30"`, 1), false},
		{"range without days", "GET", "/availability/range", 200, jsonHeader(), strings.Replace(availabilityRange, `"days":[`, `"dayz":[`, 1), false},
		{"next", "GET", "/availability/next?unit_id=u1&service_id=s1&weekdays=4,5&time_from=17:00", 200, jsonHeader(), next, true},
		{"next none within horizon", "GET", "/availability/next", 200, jsonHeader(), strings.Replace(strings.Replace(next, `"slots":[`+slot+`]`, `"slots":[]`, 1), `"reason":null`, `"reason":"none_within_horizon"`, 1), true},
		{"next day reason", "GET", "/availability/next", 200, jsonHeader(), strings.Replace(next, `"reason":null`, `"reason":"closed"`, 1), false},
		{"hold 201", "POST", "/slots/hold", 201, jsonHeader(), hold, true},
		{"hold 200 undocumented", "POST", "/slots/hold", 200, jsonHeader(), hold, false},
		{"hold bad status", "POST", "/slots/hold", 201, jsonHeader(), strings.Replace(hold, `"active"`, `"pending"`, 1), false},
		{"release", "POST", base + "/slots/hold/h1/release", 200, jsonHeader(), strings.Replace(hold, `"active"`, `"released"`, 1), true},
		{"notifications", "GET", "/notifications/pending?limit=10", 200, jsonHeader(), `{"data":[` + notification + "," + rescheduled + `]}`, true},
		{"notification unknown type", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(notification, "appointment.created", "appointment.paid", 1) + `]}`, true},
		{"rescheduled without previous", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(notification, "appointment.created", "appointment.rescheduled", 1) + `]}`, false},
		{"previous on created", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(rescheduled, "appointment.rescheduled", "appointment.created", 1) + `]}`, false},
		{"bad source", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(notification, `"api"`, `"web"`, 1) + `]}`, false},
		{"ack", "POST", "/notifications/ack", 200, jsonHeader(), `{"acknowledged":3}`, true},

		// the waitlist
		{"join 201", "POST", "/waitlist", 201, jsonHeader(), waitlistEntry, true},
		{"join replay", "POST", "/waitlist", 200, jsonHeader("Idempotent-Replayed", "true"), waitlistEntry, true},
		{"join replay without header", "POST", "/waitlist", 200, jsonHeader(), waitlistEntry, false},
		{"entry offered", "GET", "/waitlist/wl1", 200, jsonHeader(), offered, true},
		{"entry offer without hold", "GET", "/waitlist/wl1", 200, jsonHeader(), strings.Replace(offered, `"hold_id":"h1"`, `"hold_id":null`, 1), true},
		{"entry unknown status", "GET", "/waitlist/wl1", 200, jsonHeader(), strings.Replace(waitlistEntry, `"waiting"`, `"pending"`, 1), false},
		{"entry weekday 8", "GET", "/waitlist/wl1", 200, jsonHeader(), strings.Replace(waitlistEntry, `[5]`, `[8]`, 1), false},
		{"entry without offer", "GET", "/waitlist/wl1", 200, jsonHeader(), strings.Replace(waitlistEntry, `"offer":null,`, ``, 1), false},
		{"leave", "DELETE", "/waitlist/wl1", 200, jsonHeader(), strings.Replace(waitlistEntry, `"waiting"`, `"cancelled"`, 1), true},
		{"client waitlist", "GET", "/waitlist?client_phone=%2B351912345678&status=waiting,offered", 200, jsonHeader(), `{"data":[` + waitlistEntry + "," + offered + `]}`, true},
		{"entry not found", "GET", "/waitlist/wl1", 404, problemHeader(), problem(404, "waitlist_entry_not_found", ""), true},
		{"slot_available", "POST", "/waitlist", 409, problemHeader(), problem(409, "slot_available", `"alternatives":[`+slot+`]`), true},
		{"slot_available without alternatives", "POST", "/waitlist", 409, problemHeader(), problem(409, "slot_available", ""), false},
		{"already_waiting", "POST", "/waitlist", 409, problemHeader(), problem(409, "already_waiting", `"waitlist_entry_id":"wl1"`), true},
		{"already_waiting without id", "POST", "/waitlist", 409, problemHeader(), problem(409, "already_waiting", ""), false},
		{"entry id on another code", "POST", "/appointments", 409, problemHeader(), problem(409, "slot_unavailable", `"alternatives":[],"waitlist_entry_id":"wl1"`), false},
		{"too_many_waitlist_entries", "POST", "/waitlist", 429, problemHeader(), problem(429, "too_many_waitlist_entries", ""), true},
		{"too_many_waitlist_entries elsewhere", "POST", "/slots/hold", 429, problemHeader(), problem(429, "too_many_waitlist_entries", ""), false},
		{"slot.available", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + slotAvailable + `]}`, true},
		{"slot.available without hold", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(slotAvailable, `"hold":`+hold, `"hold":null`, 1) + `]}`, true},
		{"slot.available with appointment", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(slotAvailable, `"appointment_id":null`, `"appointment_id":"a1"`, 1) + `]}`, false},
		{"slot.available without slot", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(slotAvailable, `"slot":`+slot+`,`, ``, 1) + `]}`, false},
		{"appointment notification with null id", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(notification, `"appointment_id":"a1"`, `"appointment_id":null`, 1) + `]}`, false},
		{"appointment notification with slot", "GET", "/notifications/pending", 200, jsonHeader(), `{"data":[` + strings.Replace(notification, `"source":"api"`, `"source":"api","slot":`+slot, 1) + `]}`, false},
		{"ack negative", "POST", "/notifications/ack", 200, jsonHeader(), `{"acknowledged":-1}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := v.Check(req(c.method, c.path), c.status, c.header, []byte(c.body))
			if c.ok && err != nil {
				t.Errorf("want ok, got %v", err)
			}
			if !c.ok && err == nil {
				t.Error("want an error, got none")
			}
			if err != nil {
				t.Logf("%v", err)
			}
		})
	}
}

func TestSeen(t *testing.T) {
	v := load(t)
	_ = v.Check(req("GET", base+"/units"), 200, jsonHeader(), []byte(`{"data":[]}`))
	_ = v.Check(req("GET", "/units"), 200, jsonHeader(), []byte(`{"data":[]}`))
	_ = v.Check(req("GET", "/units"), 401, problemHeader(), []byte(problem(401, "invalid_api_key", "")))
	_ = v.Check(req("GET", "/units"), 418, problemHeader(), nil)
	_ = v.Check(req("GET", "/nope"), 404, problemHeader(), []byte(problem(404, "not_found", "")))
	seen := v.Seen()
	if got := seen["listUnits"]; !slices.Equal(got, []int{200, 401, 418}) {
		t.Errorf("Seen[listUnits] = %v", got)
	}
	if got := seen[NoRoute]; !slices.Equal(got, []int{404}) {
		t.Errorf("Seen[NoRoute] = %v", got)
	}
	if got := v.Undocumented(); len(got) != 1 || !slices.Equal(got["listUnits"], []int{418}) {
		t.Errorf("Undocumented = %v", got)
	}
	un := v.Unexercised()
	if got := un["listUnits"]; !slices.Equal(got, []int{403, 429, 500, 503}) {
		t.Errorf("Unexercised[listUnits] = %v", got)
	}
	if _, ok := un[NoRoute]; ok {
		t.Errorf("Unexercised has NoRoute: %v", un[NoRoute])
	}
	if got := un["createAppointment"]; !slices.Contains(got, 201) {
		t.Errorf("Unexercised[createAppointment] = %v", got)
	}
}

func TestNewRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"not json": `{`,
		"3.0":      `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}`,
		"no paths": `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{}}`,
	} {
		if _, err := New([]byte(doc)); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}

func TestConcurrentCheck(t *testing.T) {
	v := load(t)
	done := make(chan error, 16)
	for i := 0; i < cap(done); i++ {
		go func() {
			var err error
			for j := 0; j < 20 && err == nil; j++ {
				err = v.Check(req("GET", "/appointments/a1"), 200, jsonHeader(), []byte(appointment))
				if err == nil {
					err = v.Check(req("GET", "/units"), 200, jsonHeader(), []byte(`{"data":[]}`))
				}
			}
			done <- err
		}()
	}
	for i := 0; i < cap(done); i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
