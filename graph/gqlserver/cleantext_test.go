package gqlserver_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// Text with a NUL character or bytes that are not UTF-8 is refused before
// any resolver runs, on both databases alike (PostgreSQL would fail on NUL
// with 22021, SQLite would store it), naming the input.
func TestCleanText(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		unit, service := bookSome(t, s)
		create := func(name string) map[string]any {
			return map[string]any{"in": map[string]any{
				"unitId": unit, "serviceId": service, "startsAt": "2027-03-02T16:00:00",
				"client": map[string]any{"name": name, "phone": "+351912000000"}, "externalReference": "nul-test",
			}}
		}
		const createDoc = `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`
		refused := func(t *testing.T, a *gqltest.Answer, field string) {
			t.Helper()
			if a.Code() != domain.CodeValidationFailed || strings.Join(a.Fields(), ",") != field || a.Data != nil {
				t.Fatalf("want validation_failed naming %s; got %d %q %v: %s", field, a.Status, a.Code(), a.Fields(), a.Messages())
			}
		}

		t.Run("NUL in a variable", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.APIKey, createDoc, create("Ana\x00Maria")), "input.client.name")
			// Nothing was booked: the same request without the NUL is new.
			a := s.Query(t, s.Keys.APIKey, `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { replayed } }`, create("Ana Maria"))
			if a.OK(t)["createAppointment"].(map[string]any)["replayed"] != false {
				t.Fatal("the refused create was stored")
			}
		})
		t.Run("NUL spelled in a GraphQL string", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.AdminAPIKey, `mutation { createUnit(input: {name: "a\u0000b", timezone: "Europe/Lisbon"}) { id } }`, nil), "input.name")
		})
		t.Run("NUL byte inside a GraphQL string", func(t *testing.T) {
			a := s.Query(t, s.Keys.AdminAPIKey, "mutation { createUnit(input: {name: \"a\x00b\", timezone: \"Europe/Lisbon\"}) { id } }", nil)
			if a.Code() != domain.CodeValidationFailed || a.Data != nil {
				t.Fatalf("%q: %s", a.Code(), a.Messages())
			}
		})
		t.Run("NUL in a where filter", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.AdminAPIKey, `{ appointments(where: {or: [{status: confirmed}, {externalReference: "x\u0000"}]}) { totalCount } }`, nil), "where.or[1].externalReference")
		})
		t.Run("NUL in node(id:)", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.AdminAPIKey, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": "apt_\x00x"}), "id")
		})
		t.Run("NUL in a list of ids", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.AdminAPIKey, `{ nodes(ids: ["apt_1", "apt_\u0000"]) { id } }`, nil), "ids[1]")
		})
		t.Run("NUL in a cancel reason", func(t *testing.T) {
			refused(t, s.Query(t, s.Keys.APIKey, `mutation { cancelAppointment(id: "apt_x", reason: "no\u0000") { id } }`, nil), "reason")
		})
		t.Run("NUL in a directive's argument", func(t *testing.T) {
			refused(t, s.Query(t, "", `{ ... @defer(label: "a\u0000") { __typename } }`, nil), "label")
		})
		t.Run("bytes that are not UTF-8 in a variable", func(t *testing.T) {
			body := `{"query": "mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }",
				"variables": {"in": {"unitId": "` + unit + `", "serviceId": "` + service + `", "startsAt": "2027-03-02T16:00:00",
				"client": {"phone": "+351912000000", "name": "Jo` + "\xe3" + `o"}}}}`
			a := s.Post(t, s.Keys.APIKey, []byte(body))
			refused(t, a, "variables.in.client.name")
			if a.Status != 400 {
				t.Errorf("status %d, want 400", a.Status)
			}
		})
		t.Run("bytes that are not UTF-8 in a key and in a list", func(t *testing.T) {
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte("{\"query\": \"{ __typename }\", \"variables\": {\"a\": [1, {\"b\xff\": 2}]}}")), "variables.a[1].b\ufffd")
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte("{\"query\": \"{ __typename }\", \"variables\": {\"ids\": [\"ok\", \"\xc3(\"]}}")), "variables.ids[1]")
		})
		t.Run("bytes that are not UTF-8 in the document", func(t *testing.T) {
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte("{\"query\": \"{ __type(name: \\\"\xff\\\") { name } }\"}")), "query")
		})
		t.Run("bytes that are not UTF-8 outside a string", func(t *testing.T) {
			a := s.Post(t, s.Keys.AdminAPIKey, []byte("{\"query\": \"{ __typename }\"\xff}"))
			if a.Code() != domain.CodeValidationFailed || a.Status != 400 {
				t.Fatalf("%d %q: %s", a.Status, a.Code(), a.Messages())
			}
		})
		t.Run("a lone surrogate is refused", func(t *testing.T) {
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte(`{"query": "mutation { createUnit(input: {name: \"a\\ud800\", timezone: \"Europe/Lisbon\"}) { name } }"}`)), "query")
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte(`{"query": "mutation($n: String!) { createUnit(input: {name: $n, timezone: \"Europe/Lisbon\"}) { name } }", "variables": {"n": "Ok\ud800"}}`)), "variables.n")
			refused(t, s.Post(t, s.Keys.AdminAPIKey, []byte(`{"query": "{ __typename }", "variables": {"n": ["\udc00\ud800"]}}`)), "variables.n[0]")
			// A whole pair is text.
			a := s.Post(t, s.Keys.AdminAPIKey, []byte(`{"query": "mutation($n: String!) { createUnit(input: {name: $n, timezone: \"Europe/Lisbon\"}) { name } }", "variables": {"n": "Ok\ud83d\ude00"}}`))
			if got := a.OK(t)["createUnit"].(map[string]any)["name"]; got != "Ok\U0001F600" {
				t.Fatalf("stored %q", got)
			}
		})
		t.Run("GET", func(t *testing.T) {
			get := func(query, vars string) *gqltest.Answer {
				q := url.Values{"query": {query}}
				if vars != "" {
					q.Set("variables", vars)
				}
				req := httptest.NewRequest("GET", "/graphql?"+q.Encode(), nil)
				req.Header.Set("X-Service-Api-Key", s.Keys.AdminAPIKey)
				return s.Do(t, req)
			}
			refused(t, get(`{ __type(name: "`+"\xff"+`") { name } }`, ""), "query")
			refused(t, get(`query($n: String!) { __type(name: $n) { name } }`, "{\"n\": \"\xff\"}"), "variables.n")
			refused(t, get(`query($n: String!) { __type(name: $n) { name } }`, `{"n": "\u0000"}`), "name")
			get(`query($n: String!) { __type(name: $n) { name } }`, `{"n": "Unit"}`).OK(t)
		})
		t.Run("clean text passes", func(t *testing.T) {
			s.Query(t, s.Keys.AdminAPIKey, `mutation { createUnit(input: {name: "Barbearia São João ✂", timezone: "Europe/Lisbon"}) { id } }`, nil).OK(t)
		})
	})
}
