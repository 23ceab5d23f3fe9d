package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// Through the real router, without a key: introspection is answered (the
// graph package checks GraphiQL's own query), a document that expands
// exponentially is refused at once, and a NUL never reaches the database.
func TestGraphQLLimitsThroughRouter(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newGQLEnv(t, db)
		const introspection = `{ __schema { queryType { name } types { ...T } } }
			fragment T on __Type { kind name fields(includeDeprecated: true) { name args { name type { ...R } } type { ...R } } }
			fragment R on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`
		data := e.query(t, "", introspection, nil).ok(t)
		if types, _ := data["__schema"].(map[string]any)["types"].([]any); len(types) == 0 {
			t.Fatalf("introspection without types: %v", data)
		}
		var doubling strings.Builder
		doubling.WriteString("query{...F30}\nfragment F0 on Query{__typename}\n")
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(&doubling, "fragment F%d on Query{...F%d ...F%d}\n", i, i-1, i-1)
		}
		r := e.query(t, "", doubling.String(), nil)
		if r.status != http.StatusUnprocessableEntity || r.code(t) != domain.CodeValidationFailed {
			t.Fatalf("fragment doubling: %d %q: %v", r.status, r.code(t), r.Errors)
		}
		r = e.query(t, e.keys.AdminAPIKey, `mutation($n: String!) { createUnit(input: {name: $n, timezone: "Europe/Lisbon"}) { id } }`, map[string]any{"n": "a\x00b"})
		if r.code(t) != domain.CodeValidationFailed {
			t.Fatalf("NUL in a unit's name: %q: %v", r.code(t), r.Errors)
		}
	})
}
