package gqlserver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/paging"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// pages walks a connection field page by page (first: n, after the last
// page's end cursor) and returns its nodes, in order, and its totalCount.
func pages(t *testing.T, s *gqltest.Server, key, field, args, nodeFields string, n int) (nodes []any, total int) {
	t.Helper()
	q := fmt.Sprintf(`query($n: Int, $after: Cursor) { c: %s(%sfirst: $n, after: $after) {
		totalCount pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { %s } } } }`, field, args, nodeFields)
	var after any
	for page := 0; ; page++ {
		c := s.Query(t, key, q, map[string]any{"n": n, "after": after}).OK(t)["c"].(map[string]any)
		edges, info := c["edges"].([]any), c["pageInfo"].(map[string]any)
		total = int(c["totalCount"].(float64))
		for _, e := range edges {
			nodes = append(nodes, e.(map[string]any)["node"])
		}
		if info["hasPreviousPage"] != (page > 0) {
			t.Errorf("%s page %d: hasPreviousPage %v", field, page, info["hasPreviousPage"])
		}
		if info["hasNextPage"] != true {
			return nodes, total
		}
		if len(edges) != n || page > 20 {
			t.Fatalf("%s page %d: %d edges of %d, and more to come", field, page, len(edges), n)
		}
		after = info["endCursor"]
	}
}

// sameJSON reports whether two decoded answers are equal.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestListsTellMoreExist: on an account with 60 barbers, a dashboard that
// asks for a list without first gets the documented first 50, and the
// connection beside each list tells it that more exist and pages through
// all of them, the same items in the same order as the list with first:
// 500, edges (a barber's bookable units and services) included.
func TestListsTellMoreExist(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		admin := s.Keys.AdminAPIKey
		const fields = `id name units { id } services { id }`
		var all []any
		for i := 0; len(all) < 60; i++ {
			s.Query(t, admin, `mutation($n: String!) { createBarber(input: {name: $n}) { id } }`, map[string]any{"n": fmt.Sprintf("Barber %02d", i)}).OK(t)
			all = s.Query(t, s.Keys.APIKey, `{ bookableBarbers(first: 500) { `+fields+` } }`, nil).OK(t)["bookableBarbers"].([]any)
		}
		if got := s.Query(t, s.Keys.APIKey, `{ bookableBarbers { id } }`, nil).OK(t)["bookableBarbers"].([]any); len(got) != paging.DefaultPageSize {
			t.Fatalf("bookableBarbers without first: %d, want the documented %d", len(got), paging.DefaultPageSize)
		}
		c := s.Query(t, s.Keys.APIKey, `{ bookableBarbersConnection { totalCount pageInfo { hasNextPage } edges { node { `+fields+` } } } }`, nil).
			OK(t)["bookableBarbersConnection"].(map[string]any)
		if c["totalCount"] != 60.0 || c["pageInfo"].(map[string]any)["hasNextPage"] != true || len(c["edges"].([]any)) != paging.DefaultPageSize {
			t.Fatalf("bookableBarbersConnection without first: totalCount %v, pageInfo %v, %d edges; want 60, more, %d",
				c["totalCount"], c["pageInfo"], len(c["edges"].([]any)), paging.DefaultPageSize)
		}
		for _, n := range []int{50, 7, 60, 500} {
			nodes, total := pages(t, s, s.Keys.APIKey, "bookableBarbersConnection", "", fields, n)
			if total != 60 || !sameJSON(nodes, all) {
				t.Errorf("bookableBarbersConnection in pages of %d: total %d, %d nodes; want the 60 of bookableBarbers(first: 500)", n, total, len(nodes))
			}
		}

		// The other lists likewise, filters included.
		units := s.Query(t, s.Keys.APIKey, `{ bookableUnits(first: 500) { id name } }`, nil).OK(t)["bookableUnits"].([]any)
		unit := units[0].(map[string]any)["id"].(string)
		services := s.Query(t, s.Keys.APIKey, `query($u: ID) { bookableServices(unitId: $u, first: 500) { id name units { id } } }`, map[string]any{"u": unit}).OK(t)["bookableServices"].([]any)
		for range 3 {
			s.Query(t, admin, `mutation { createApiKey(input: {name: "k", scopes: ["catalog:read"]}) { secret } }`, nil).OK(t)
		}
		keys := s.Query(t, admin, `{ apiKeys(first: 500) { id name } }`, nil).OK(t)["apiKeys"].([]any)
		for _, c := range []struct {
			field, args, fields string
			want                []any
		}{
			{"bookableUnitsConnection", "", "id name", units},
			{"bookableServicesConnection", fmt.Sprintf("unitId: %q, ", unit), "id name units { id }", services},
			{"apiKeysConnection", "", "id name", keys},
		} {
			nodes, total := pages(t, s, admin, c.field, c.args, c.fields, 2)
			if total != len(c.want) || !sameJSON(nodes, c.want) {
				t.Errorf("%s in pages of 2: total %d, nodes %v; want %v", c.field, total, nodes, c.want)
			}
		}

		// A cursor of another list, or none at all, is a bad argument.
		keyCursor := s.Query(t, admin, `{ apiKeysConnection(first: 1) { edges { cursor } pageInfo { endCursor } } }`, nil).OK(t)["apiKeysConnection"].(map[string]any)["pageInfo"].(map[string]any)["endCursor"]
		for _, after := range []any{keyCursor, "nonsense"} {
			a := s.Query(t, s.Keys.APIKey, `query($a: Cursor) { bookableBarbersConnection(after: $a) { totalCount } }`, map[string]any{"a": after})
			if a.Code() != domain.CodeValidationFailed {
				t.Errorf("bookableBarbersConnection(after: %v): %q %s", after, a.Code(), a.Messages())
			}
		}
		// Pages are bounded and priced as every connection's.
		if a := s.Query(t, s.Keys.APIKey, `{ bookableBarbersConnection(first: 501) { totalCount } }`, nil); a.Code() != domain.CodeValidationFailed {
			t.Errorf("first: 501: %q %s", a.Code(), a.Messages())
		}
	})
}
