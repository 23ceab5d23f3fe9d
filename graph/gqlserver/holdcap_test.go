package gqlserver_test

import (
	"strings"
	"testing"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestKeyHoldCap: an admin gives a key a hold cap of its own
// (createApiKey) and takes it back (updateApiKey); the key's context shows
// its cap and count, a hold past it is refused naming the oldest hold, and
// releaseAllHolds frees the key's holds. activeHoldsConnection pages them.
func TestKeyHoldCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		admin := s.Keys.AdminAPIKey
		made := s.Query(t, admin, `mutation { createApiKey(input: {name: "small bot", scopes: ["context:read", "catalog:read", "holds:write"], maxActiveHolds: 2}) {
			secret apiKey { id maxActiveHolds } } }`, nil).OK(t)["createApiKey"].(map[string]any)
		key, k := made["secret"].(string), made["apiKey"].(map[string]any)
		if k["maxActiveHolds"] != 2.0 {
			t.Fatalf("createApiKey: maxActiveHolds %v, want 2", k["maxActiveHolds"])
		}
		limits := func() map[string]any {
			return s.Query(t, key, `{ context { limits { activeHoldsMax activeHolds } } }`, nil).OK(t)["context"].(map[string]any)["limits"].(map[string]any)
		}
		unit, haircut := s.Keys.IDs["Barbearia Chiado"], s.Keys.IDs["Haircut"]
		hold := func(at string) *gqltest.Answer {
			return s.Query(t, key, `mutation($in: HoldSlotInput!) { holdSlot(input: $in) { id expiresAt } }`, map[string]any{"in": map[string]any{
				"unitId": unit, "serviceId": haircut, "startsAt": "2027-03-02T" + at + ":00"}})
		}
		first := hold("10:00").OK(t)["holdSlot"].(map[string]any)
		hold("10:30").OK(t)
		if l := limits(); l["activeHoldsMax"] != 2.0 || l["activeHolds"] != 2.0 {
			t.Fatalf("context limits %v, want 2 of 2", l)
		}
		a := hold("11:00")
		if a.Code() != domain.CodeTooManyHolds {
			t.Fatalf("a third hold: %q %s", a.Code(), a.Messages())
		}
		ext := a.Errors[0].Extensions
		if ext["activeHolds"] != 2.0 || ext["activeHoldsMax"] != 2.0 || ext["oldestHoldId"] != first["id"] || ext["oldestHoldExpiresAt"] != first["expiresAt"] {
			t.Errorf("too_many_holds extensions %v, want 2 of 2 and the oldest hold %v", ext, first)
		}

		nodes, total := pages(t, s, admin, "activeHoldsConnection", "", "id", 1)
		all := s.Query(t, admin, `{ activeHolds(first: 500) { id } }`, nil).OK(t)["activeHolds"].([]any)
		if total != 2 || !sameJSON(nodes, all) {
			t.Errorf("activeHoldsConnection in pages of 1: total %d, %v; want %v", total, nodes, all)
		}

		for _, c := range []struct{ input, field string }{
			{`{maxActiveHolds: -1}`, "maxActiveHolds"},
			{`{maxActiveHolds: 100001}`, "maxActiveHolds"},
			{`{maxActiveHolds: 3, clearMaxActiveHolds: true}`, "clearMaxActiveHolds"},
			{`{name: " "}`, "name"},
		} {
			a := s.Query(t, admin, `mutation($id: ID!) { updateApiKey(id: $id, input: `+c.input+`) { id } }`, map[string]any{"id": k["id"]})
			if a.Code() != domain.CodeValidationFailed || strings.Join(a.Fields(), ",") != c.field {
				t.Errorf("updateApiKey %s: %q %v", c.input, a.Code(), a.Fields())
			}
		}
		if a := s.Query(t, admin, `mutation { updateApiKey(id: "key_nope", input: {maxActiveHolds: 3}) { id } }`, nil); a.Code() != domain.CodeNotFound {
			t.Errorf("updateApiKey of an unknown key: %q", a.Code())
		}
		if a := s.Query(t, key, `mutation($id: ID!) { updateApiKey(id: $id, input: {maxActiveHolds: 0}) { id } }`, map[string]any{"id": k["id"]}); a.Code() != domain.CodeInsufficientScope {
			t.Errorf("a key lifting its own cap: %q", a.Code())
		}
		u := s.Query(t, admin, `mutation($id: ID!) { updateApiKey(id: $id, input: {clearMaxActiveHolds: true, name: "chain bot"}) { name maxActiveHolds } }`,
			map[string]any{"id": k["id"]}).OK(t)["updateApiKey"].(map[string]any)
		if u["maxActiveHolds"] != nil || u["name"] != "chain bot" {
			t.Fatalf("updateApiKey: %v", u)
		}
		if l := limits(); l["activeHoldsMax"] != float64(graph.DefaultActiveHoldsPerKey) {
			t.Fatalf("back to the default: limits %v", l)
		}
		hold("11:00").OK(t)

		released := s.Query(t, key, `mutation { releaseAllHolds { released } }`, nil).OK(t)["releaseAllHolds"].(map[string]any)["released"]
		if released != 3.0 {
			t.Fatalf("releaseAllHolds released %v, want 3", released)
		}
		if l := limits(); l["activeHolds"] != 0.0 {
			t.Fatalf("after releaseAllHolds: limits %v", l)
		}
		hold("10:00").OK(t) // free again
	})
}
