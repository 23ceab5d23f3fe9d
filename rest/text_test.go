package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/text"
)

// Text that no database stores alike: PostgreSQL refuses a NUL and invalid
// UTF-8, SQLite stores them as given. Every text input refuses both, on
// both databases, before either sees it.

// badText is one kind of unfit text: as written inside a JSON string (json),
// and as the bytes of a query or path value (raw; "" when it has none).
type badText struct {
	name, json, raw, message string
}

var badTexts = []badText{
	{"NUL", `\u0000`, "\x00", text.NUL},
	{"invalid UTF-8", "\xff", "\xff", text.InvalidUTF8},
	// encoding/json would read a lone surrogate as U+FFFD, as it does
	// invalid UTF-8.
	{"lone surrogate", `\ud800`, "", text.InvalidUTF8},
}

// spoiled is a marker in a JSON body where a bad text goes.
const spoiled = "~spoiled~"

// spoil returns body as JSON with the string at field (a dotted path) ending
// in bad.
func spoil(t *testing.T, body map[string]any, field string, bad badText) []byte {
	t.Helper()
	b := cloneBody(body)
	m := b
	for {
		head, rest, nested := cut(field)
		if !nested {
			s, ok := m[head].(string)
			if !ok {
				t.Fatalf("body has no string %q", field)
			}
			m[head] = s + spoiled
			break
		}
		m = m[head].(map[string]any)
		field = rest
	}
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(j, []byte(spoiled), []byte(bad.json), 1)
}

func cut(field string) (head, rest string, nested bool) {
	for i := range len(field) {
		if field[i] == '.' {
			return field[:i], field[i+1:], true
		}
	}
	return field, "", false
}

func cloneBody(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = cloneBody(sub)
		}
		out[k] = v
	}
	return out
}

// expectUnfit fails t unless r is 400 validation_failed naming exactly
// field, with message.
func expectUnfit(t *testing.T, r *response, field, message string) {
	t.Helper()
	expectFields(t, r, field)
	if got := problemOf(t, r).Errors[0].Message; got != message {
		t.Fatalf("%s: message %q, want %q", field, got, message)
	}
}

// TestTextInputs sends each text input of the REST interface (body fields
// at any depth, query parameters, path ids) with a NUL, invalid UTF-8 or,
// in JSON, a lone surrogate: 400 validation_failed naming the field, or 404
// with the resource's code for a path id. Nothing is stored, and nothing
// fails with 500.
func TestTextInputs(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		lis, hc, jo, mi := e.unit(lisbon), e.service(haircut), e.barber(joao), e.barber(miguel)
		a := e.apCreate(e.apBody(haircut, tuesdayAt11, joao))
		holdID := e.apHold(haircut, tuesdayAt10, miguel, nil)
		pending := ntList(t, e.do("GET", "/notifications/pending?peek=true", k, nil))
		if len(pending) == 0 {
			t.Fatal("no pending notification")
		}
		through := pending[0].ID

		bodies := []struct {
			path   string
			body   map[string]any
			fields []string
		}{
			{"/slots/hold", map[string]any{"unit_id": lis, "service_id": hc, "barber_id": jo, "starts_at": "2027-03-02T15:00:00"},
				[]string{"unit_id", "service_id", "barber_id", "starts_at"}},
			{"/appointments", map[string]any{
				"unit_id": lis, "service_id": hc, "barber_id": mi, "hold_id": holdID, "starts_at": tuesdayAt10,
				"external_reference": "ref-1",
				"client":             map[string]any{"name": clientName, "phone": validPhone, "email": "ana@example.com"},
			}, []string{"unit_id", "service_id", "barber_id", "hold_id", "starts_at", "external_reference", "client.name", "client.phone", "client.email"}},
			{"/appointments/" + a.ID + "/cancel", map[string]any{"reason": "Client is travelling"}, []string{"reason"}},
			{"/appointments/" + a.ID + "/reschedule", map[string]any{"starts_at": tuesdayAt10, "barber_id": mi, "hold_id": holdID},
				[]string{"starts_at", "barber_id", "hold_id"}},
			{"/notifications/ack", map[string]any{"through": through}, []string{"through"}},
		}
		for _, c := range bodies {
			for _, field := range c.fields {
				for _, bad := range badTexts {
					t.Run("POST "+c.path+" "+field+" "+bad.name, func(t *testing.T) {
						expectUnfit(t, call(t, e, "POST", c.path, k, spoil(t, c.body, field, bad)), field, bad.message)
					})
				}
			}
		}

		queries := []struct {
			path   string
			params []string // key, value pairs
		}{
			{"/services", []string{"unit_id", lis}},
			{"/barbers", []string{"unit_id", lis, "service_id", hc}},
			{"/availability", []string{"unit_id", lis, "service_id", hc, "barber_id", jo, "date", tuesday}},
			{"/notifications/pending", []string{"limit", "5", "peek", "true"}},
		}
		for _, c := range queries {
			for i := 0; i < len(c.params); i += 2 {
				for _, bad := range badTexts {
					if bad.raw == "" {
						continue
					}
					field := c.params[i]
					t.Run("GET "+c.path+" "+field+" "+bad.name, func(t *testing.T) {
						kv := append([]string(nil), c.params...)
						kv[i+1] += bad.raw + "x"
						expectUnfit(t, call(t, e, "GET", query(c.path, kv...), k, nil), field, bad.message)
					})
				}
			}
		}

		paths := []struct {
			method, path, code string
			body               any
		}{
			{"GET", "/appointments/%s", domain.CodeAppointmentNotFound, nil},
			{"POST", "/appointments/%s/cancel", domain.CodeAppointmentNotFound, map[string]any{"reason": "Client is travelling"}},
			{"POST", "/appointments/%s/reschedule", domain.CodeAppointmentNotFound, map[string]any{"starts_at": "2027-03-02T16:00:00"}},
			{"POST", "/slots/hold/%s/release", domain.CodeHoldNotFound, nil},
		}
		for _, c := range paths {
			id := a.ID
			if c.code == domain.CodeHoldNotFound {
				id = holdID
			}
			for _, bad := range badTexts {
				if bad.raw == "" {
					continue
				}
				t.Run(c.method+" "+strings.ReplaceAll(c.path, "%s", "{id}")+" "+bad.name, func(t *testing.T) {
					path := fmt.Sprintf(c.path, url.PathEscape(id+bad.raw+"x"))
					expect(t, call(t, e, c.method, path, k, c.body), http.StatusNotFound, c.code)
				})
			}
		}

		// Nothing was written: the appointment, its hold and the pending
		// notifications are as they were.
		if n := e.apCount(); n != 1 {
			t.Errorf("%d appointments, want 1", n)
		}
		if got := e.appointment(a.ID); got.Status != "confirmed" || !got.StartsAt.Equal(time.Date(2027, 3, 2, 11, 0, 0, 0, time.UTC)) {
			t.Errorf("appointment changed: %s at %s", got.Status, got.StartsAt)
		}
		if s := e.apHoldStatus(holdID); s != "active" {
			t.Errorf("hold %s, want active", s)
		}
		if got := ntList(t, e.do("GET", "/notifications/pending?peek=true", k, nil)); len(got) != len(pending) {
			t.Errorf("%d pending notifications, want %d", len(got), len(pending))
		}
	})
}

// TestTextResolvers calls the resolvers as another adapter would, without
// REST's decoding: they refuse unfit text themselves, so none reaches the
// database.
func TestTextResolvers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		v, err := e.res.Authenticate(context.Background(), e.keys.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		ctx := domain.WithViewer(context.Background(), v)
		q, m := e.res.Query(), e.res.Mutation()
		lis, hc := e.unit(lisbon), e.service(haircut)
		a := e.apCreate(e.apBody(haircut, tuesdayAt11, joao))
		nul, invalid := lis+"\x00", lis+"\xff"
		name := clientName + "\x00"

		tests := []struct {
			name, code, field string
			call              func() error
		}{
			{"services of a unit", domain.CodeValidationFailed, "unit_id", func() error {
				_, err := q.BookableServices(ctx, &nul, nil)
				return err
			}},
			{"barbers of a service", domain.CodeValidationFailed, "service_id", func() error {
				bad := hc + "\xff"
				_, err := q.BookableBarbers(ctx, &lis, &bad, nil)
				return err
			}},
			{"availability", domain.CodeValidationFailed, "unit_id", func() error {
				_, err := q.Availability(ctx, invalid, hc, nil, tuesday)
				return err
			}},
			{"hold", domain.CodeValidationFailed, "unit_id", func() error {
				_, err := m.HoldSlot(ctx, model.HoldSlotInput{UnitID: nul, ServiceID: hc, StartsAt: tuesdayAt10})
				return err
			}},
			{"create", domain.CodeValidationFailed, "client.name", func() error {
				_, err := m.CreateAppointment(ctx, model.CreateAppointmentInput{
					UnitID: lis, ServiceID: hc, StartsAt: tuesdayAt10,
					Client: &model.ClientInput{Name: name, Phone: validPhone},
				})
				return err
			}},
			{"cancel", domain.CodeValidationFailed, "reason", func() error {
				_, err := m.CancelAppointment(ctx, a.ID, "sick\x00")
				return err
			}},
			{"ack", domain.CodeValidationFailed, "through", func() error {
				_, err := m.AckNotifications(ctx, "ntf_\x00")
				return err
			}},
			{"release", domain.CodeHoldNotFound, "", func() error {
				_, err := m.ReleaseHold(ctx, "hld_\x00")
				return err
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.call()
				ge, ok := domain.AsError(err)
				if !ok || ge.Code != tt.code {
					t.Fatalf("error %v, want %s", err, tt.code)
				}
				if tt.field != "" && (len(ge.Fields) != 1 || ge.Fields[0].Field != tt.field) {
					t.Fatalf("fields %+v, want %s", ge.Fields, tt.field)
				}
			})
		}
	})
}
