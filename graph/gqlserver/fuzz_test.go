package gqlserver_test

import (
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/gqlserver"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/storetest"
)

// FuzzGraphQLDocument sends documents to the real handler over a real
// database, with and without an API key: none may panic or give
// internal_error, and what is answered costs at most gqlserver.MaxCost and
// holds no more.
// `go test` runs the seeds; `go test -fuzz FuzzGraphQLDocument ./graph/gqlserver`
// explores.
func FuzzGraphQLDocument(f *testing.F) {
	for _, d := range hostileDocuments() {
		if len(d.query) <= 8<<10 && d.vars == nil {
			f.Add(d.query)
		}
	}
	for _, d := range dashboardQueries {
		if d.vars == nil {
			f.Add(d.query)
		}
	}
	for _, q := range []string{
		`{ __typename }`,
		`{ bookableUnits { id name services { id barbers { name } } } }`,
		`query Q($n: Int = 3) { units(first: $n) { edges { cursor node { id ... on Unit { name } } } pageInfo { hasNextPage } } }`,
		`{ a: units(first: 1) { totalCount } a: units(first: 2) { totalCount } }`,
		`{ ...F } fragment F on Query { __typename ...G } fragment G on Query { ...F }`,
		`{ node(id: "unt_x") { ... on Unit { barbers { ... on Barber { units { name } } } } } }`,
		`mutation { createUnit(input: {name: "x", timezone: "Europe/Lisbon"}) { id } }`,
		`{ appointments(where: {and: [{not: {status: cancelled}}, {or: [{externalReferenceContains: "a"}]}]}) { totalCount } }`,
		`{ __type(name: "Query") { fields { args { type { ofType { name } } } } } }`,
		`{ availability(unitId: "unt_x", serviceId: "svc_x", date: "2027-03-02") { slots { startsAt } } }`,
		"{ __typename @include(if: true) @skip(if: false) }",
		"{ agenda(unitId: \"\x00\", date: \"\xff\") { totalCount } }",
	} {
		f.Add(q)
	}
	s := gqltest.NewServer(f, storetest.Open(f, "sqlite3"))
	f.Fuzz(func(t *testing.T, doc string) {
		for _, key := range []string{"", s.Keys.AdminAPIKey} {
			start := time.Now()
			a := s.Query(t, key, doc, nil)
			if took := time.Since(start); took > 10*time.Second { // a safety net
				t.Errorf("took %v", took)
			}
			for _, e := range a.Errors {
				if e.Extensions["code"] == domain.CodeInternal {
					t.Fatalf("internal_error: %s", a.Messages())
				}
			}
			if a.Data == nil {
				continue
			}
			if n := countValues(a.Data); n > gqlserver.MaxCost {
				t.Fatalf("the answer holds %d values, over MaxCost", n)
			}
			if cost, _, err := gqlserver.OperationCost(doc, nil); err != nil || cost > gqlserver.MaxCost {
				t.Fatalf("answered an operation of cost %d (%v)", cost, err)
			}
		}
	})
}
