package gqlserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/gqlserver"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/paging"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// mib is the body limit /graphql is to have: no document up to it may cost
// more than a few milliseconds before it is refused.
const mib = 1 << 20

// repeat is head, then item n times with %d replaced by its index, then
// tail.
func repeat(head, item, tail string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		b.WriteString(strings.ReplaceAll(item, "%d", fmt.Sprint(i)))
	}
	b.WriteString(tail)
	return b.String()
}

// fill is repeat with as many items as make the document size bytes.
func fill(head, item, tail string, size int) string {
	n := (size - len(head) - len(tail)) / len(strings.ReplaceAll(item, "%d", "0000"))
	return repeat(head, item, tail, n)
}

// doubling is query{...Fn} where each fragment spreads the one before it
// twice: n+1 fragments in a few hundred bytes that expand to 2^n fields.
func doubling(n int, leaf string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query{...F%d}\nfragment F0 on Query{%s}\n", n, leaf)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query{...F%d ...F%d}\n", i, i-1, i-1)
	}
	return b.String()
}

// nested is fields nested n levels, alternating between two list edges.
func nested(root, a, b string, n int) string {
	var q, end strings.Builder
	q.WriteString("{" + root + "{")
	for i := range n {
		e := a
		if i%2 == 1 {
			e = b
		}
		q.WriteString("id " + e + "{")
		end.WriteString("}")
	}
	return q.String() + "id" + end.String() + "}}"
}

// hostile is a document sent to hurt the server, and what must become of
// it: refused with validation_failed and a message holding refusal, or
// (refusal "") answered.
type hostile struct {
	name, query string
	vars        map[string]any
	refusal     string
}

func hostileDocuments() []hostile {
	return []hostile{
		{"fragment doubling n=30", doubling(30, "__typename"), nil, "pairs"},
		{"fragment doubling n=40", doubling(40, "__typename"), nil, "pairs"},
		{"fragment doubling of skipped fields", doubling(30, "__typename @skip(if: true)"), nil, "pairs"},
		{"fragment doubling of distinct fields", doubling(30, repeat("", "a%d: __typename ", "", 30)), nil, "pairs"},
		{"wide fragment spread three times", "{...W ...W ...W}" + wideFragments(1, 2000), nil, "names"},
		{"100 fragments of 30 fields spread together", repeat("{", "...W%d ", "}", 100) + wideFragments(100, 30), nil, "names"},
		{"100 fragments spread together", repeat("{", "...W%d ", "}", 100) + wideFragments(100, 1), nil, ""},
		{"101 fragments", repeat("{", "...W%d ", "}", 101) + wideFragments(101, 1), nil, "fragments"},
		{"fragments spread 50 times in 100 selection sets", repeat("{", "a%d: __schema { ...S }", "}", 100) + "fragment S on __Schema {" + repeat("", " ...T%d", "}", 50) + repeat("", "fragment T%d on __Schema { description }\n", "", 50), nil, "pairs"},
		{"99 aliases of appointments(first: 500)", repeat("{", "a%d: appointments(first: 500) { totalCount } ", "}", 99), nil, "cost is"},
		{"240 aliases of appointments(first: 500)", repeat("{", "a%d: appointments(first: 500) { totalCount } ", "}", 240), nil, "names"},
		{"alias flood of appointments(first: 500), 1 MiB", fill("{", "a%d: appointments(first: 500) { totalCount } ", "}", mib), nil, "bytes"},
		{"one alias 3000 times", repeat("{", "a: __typename ", "}", 3000), nil, "pairs"},
		{"one alias, 64 KiB", fill("{", "a: __typename ", "}", 64<<10-1), nil, "tokens"},
		{"one alias, 1 MiB", fill("{", "a: __typename ", "}", mib), nil, "bytes"},
		{"99 aliases of __typename", repeat("{", "a%d: __typename ", "}", 99), nil, ""},
		{"3000 aliases of __typename", repeat("{", "a%d: __typename ", "}", 3000), nil, "names"},
		{"@include(if: true) 1,000 times on one field", repeat("{__typename", " @include(if: true)", "}", 1000), nil, "directives"},
		{"@include(if: true) 10,000 times on one field", repeat("{__typename", " @include(if: true)", "}", 10000), nil, "bytes"},
		{"directive flood, 1 MiB", fill("{__typename", " @skip(if: false)", "}", mib), nil, "bytes"},
		{"nested list fan-out, 7 levels", nested("bookableBarbers", "services", "barbers", 6), nil, "cost is"},
		{"nested list fan-out, 3 levels", nested("bookableBarbers", "services", "barbers", 3), nil, "cost is"},
		{"every service of every barber of a whole catalog", `{ bookableServices(first: 500) { barbers { services { id } } } }`, nil, "cost is"},
		{"bookableBarbers(first: 2147483647)", `{ bookableBarbers(first: 2147483647) { id } }`, nil, "first"},
		{"first: 2147483647", `{ appointments(first: 2147483647) { totalCount } }`, nil, "first"},
		{"first: 2147483647 in a variable", `query($n: Int) { agenda(unitId: "unt_x", date: "2027-03-01", first: $n) { totalCount } }`, map[string]any{"n": 2147483647}, "first"},
		{"last: 501", `{ customers(last: 501) { edges { node { id } } } }`, nil, "last"},
		{"first: 2147483648", `{ appointments(first: 2147483648) { totalCount } }`, nil, "first"},
		{"501 ids", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": strings.Split(strings.Repeat("x,", 500)+"x", ",")}, "ids"},
		{"depth 13", `{ appointments(first: 1) { edges { node { hold { barber { workingHours { barber { timeOff { barber { workingHours { unit { services { name } } } } } } } } } } } } }`, nil, "levels deep"},
		{"GraphiQL introspection twice", `{ a: __schema { ...S } b: __schema { ...S } }
			fragment S on __Schema { queryType { name } mutationType { name } subscriptionType { name }
				types { ...FullType } directives { name description locations args { ...InputValue } } }` +
			gqlserver.GraphiQLIntrospection[strings.Index(gqlserver.GraphiQLIntrospection, "fragment FullType"):], nil, "cost is"},
		{"GraphiQL introspection", gqlserver.GraphiQLIntrospection, nil, ""},
		{"full introspection", gqlserver.FullIntrospection, nil, ""},
		{"99 unknown fields", repeat("{", "x%d ", "}", 99), nil, "Cannot query field"},
		{"string of 1 MiB", `{ __type(name: "` + strings.Repeat("a", mib) + `") { name } }`, nil, "bytes"},
		{"string of 1 MiB in a variable", `query($n: String!) { __type(name: $n) { name } }`, map[string]any{"n": strings.Repeat("a", mib)}, ""},
		{"block string of 1 MiB", `{ __type(name: """` + strings.Repeat("a\n", mib/2) + `""") { name } }`, nil, "bytes"},
		{"comments, 1 MiB", fill("{", "#%d\n", "__typename}", mib), nil, "bytes"},
		{"white space, 1 MiB", fill("{", "    ", "__typename}", mib), nil, "bytes"},
		{"ofType nested 33 levels", repeat(`{ __type(name: "Unit") {`, " ofType {", " name"+strings.Repeat(" }", 31)+" } }", 31), nil, "levels deep"},
		{"ofType nested 30 levels", repeat(`{ __type(name: "Unit") {`, " ofType {", " name"+strings.Repeat(" }", 29)+" } }", 29), nil, ""},
		{"ofType nested, 1 MiB", fill(`{ __type(name: "Unit") {`, " ofType {", " name }", mib), nil, "bytes"},
		{"where nested 40 levels", whereNot(40), nil, "levels deep"},
		{"where nested 30 levels in a variable", `query($w: AppointmentWhereInput) { appointments(where: $w) { totalCount } }`, map[string]any{"w": nestedNot(29)}, ""},
		{"where nested 500 levels in a variable", `query($w: AppointmentWhereInput) { appointments(where: $w) { totalCount } }`, map[string]any{"w": nestedNot(499)}, "levels deep"},
		{"where with 499 alternatives", whereOr(499), nil, ""},
		{"where with 500 alternatives", whereOr(500), nil, "where"},
	}
}

// nestedNot is a where filter of n nested nots.
func nestedNot(n int) map[string]any {
	w := map[string]any{"status": "confirmed"}
	for range n {
		w = map[string]any{"not": w}
	}
	return w
}

// whereNot filters appointments by n nested nots.
func whereNot(n int) string {
	return repeat("{ appointments(where: ", "{not: ", "{status: confirmed}"+strings.Repeat("}", n)+") { totalCount } }", n)
}

// whereOr filters appointments by n alternatives.
func whereOr(n int) string {
	return repeat("{ appointments(where: {or: [", `{externalReference: "r%d"} `, "]}) { totalCount } }", n)
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wideFragments defines n fragments W0... on Query of k aliased fields.
func wideFragments(n, k int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "fragment W%d on Query{", i)
		for j := range k {
			fmt.Fprintf(&b, "w%d_%d:__typename ", i, j)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestHostileDocuments sends each hostile document, with and without an
// API key, to the real handler over a real database: each is refused
// before it runs, or answered, and either way quickly.
func TestHostileDocuments(t *testing.T) {
	t.Parallel()
	docs := hostileDocuments()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		for _, d := range docs {
			for _, key := range []struct{ name, secret string }{{"anonymous", ""}, {"admin key", s.Keys.AdminAPIKey}} {
				t.Run(d.name+"/"+key.name, func(t *testing.T) {
					start := time.Now()
					a := s.Query(t, key.secret, d.query, d.vars)
					took := time.Since(start)
					t.Logf("%d bytes: %v, %d errors: %.200s", len(d.query), took.Round(time.Microsecond), len(a.Errors), a.Messages())
					if took > 5*time.Second { // a safety net: the benchmark measures
						t.Errorf("took %v", took)
					}
					for _, e := range a.Errors {
						if e.Extensions["code"] == domain.CodeInternal {
							t.Fatalf("internal_error: %s", a.Messages())
						}
					}
					if len(a.Errors) > 21 {
						t.Errorf("%d errors: validation reports at most 20 and a note", len(a.Errors))
					}
					if d.refusal == "" {
						for _, e := range a.Errors {
							if c := e.Extensions["code"]; key.secret != "" || c != domain.CodeMissingAPIKey {
								t.Fatalf("not answered: %s", a.Messages())
							}
						}
						return
					}
					if a.Code() != domain.CodeValidationFailed || a.Data != nil || !strings.Contains(a.Messages()+strings.Join(a.Fields(), " "), d.refusal) {
						t.Fatalf("want refused with validation_failed naming %q; got %d %q: %s %v", d.refusal, a.Status, a.Code(), a.Messages(), a.Fields())
					}
				})
			}
		}
	})
}

// BenchmarkHostileDocuments measures the CPU each hostile document costs,
// against {__typename} as the floor.
func BenchmarkHostileDocuments(b *testing.B) {
	s := gqltest.NewServer(b, storetest.Open(b, "sqlite3"))
	docs := append([]hostile{{"floor {__typename}", "{__typename}", nil, ""}}, hostileDocuments()...)
	for _, d := range docs {
		body, err := json.Marshal(map[string]any{"query": d.query, "variables": d.vars})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				s.Post(b, s.Keys.AdminAPIKey, body)
			}
			// The machine may be shared: CPU time is steadier than wall time.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// The numbers in the package doc (doc.go): what the admin dashboard's queries
// cost, within MaxCost.
func TestDashboardCosts(t *testing.T) {
	for _, c := range dashboardQueries {
		t.Run(c.name, func(t *testing.T) {
			cost, depth, err := gqlserver.OperationCost(c.query, c.vars)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("cost %d, depth %d", cost, depth)
			if c.cost != 0 && cost != c.cost {
				t.Errorf("cost %d, want %d", cost, c.cost)
			}
			if cost > gqlserver.MaxCost {
				t.Errorf("cost %d over MaxCost %d", cost, gqlserver.MaxCost)
			}
		})
	}
}

// appointmentsByClient is priced as a list of its limit: 20 when left out,
// never more than the 100 the resolver allows.
func TestClientAppointmentsCost(t *testing.T) {
	for _, c := range []struct {
		query string
		vars  map[string]any
		cost  int
	}{
		{`{ appointmentsByClient(clientPhone: "+351912345678") { id } }`, nil, 1 + 1000 + 20},
		{`{ appointmentsByClient(clientPhone: "+351912345678", limit: 100) { id } }`, nil, 1 + 1000 + 100},
		{`{ appointmentsByClient(clientPhone: "+351912345678", limit: 2147483647) { id } }`, nil, 1 + 1000 + 100},
		{`query($n: Int) { appointmentsByClient(clientPhone: "+351912345678", limit: $n) { id startsAtLocal endsAtLocal timezone } }`, map[string]any{"n": 50}, 1 + 1000 + 50*4},
	} {
		cost, _, err := gqlserver.OperationCost(c.query, c.vars)
		if err != nil || cost != c.cost {
			t.Errorf("%s %v: cost %d (%v), want %d", c.query, c.vars, cost, err, c.cost)
		}
	}
}

// dashboardQueries are what an admin dashboard and the playground ask for.
var dashboardQueries = []struct {
	name, query string
	vars        map[string]any
	cost        int
}{
	{"agenda of a day", `query($u: ID!) { agenda(unitId: $u, date: "2027-03-02") { edges { node { id startsAt endsAt status unit { name } service { name } barber { name } customer { name phone } } } } }`, map[string]any{"u": "unt_x"}, 1702},
	{"agenda of a day, largest page", `query($u: ID!, $n: Int) { agenda(unitId: $u, date: "2027-03-02", first: $n) { edges { node { id startsAt endsAt status unit { name } service { name } barber { name } customer { name phone } } } } }`, map[string]any{"u": "unt_x", "n": 500}, 8002},
	{"page of 100 barbers", `{ barbers(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id name active units { id name } services { id name durationMinutes } } } } }`, nil, 13706},
	{"bookable barbers with services and units", `{ bookableBarbers { id name services { id name } units { id name } } }`, nil, 5201},
	{"a month of free slots", `query($u: ID!, $s: ID!) { availabilityRange(unitId: $u, serviceId: $s, from: "2027-03-01", to: "2027-03-31") { days { date reason slots { startsAt barberId } } } }`, map[string]any{"u": "unt_x", "s": "svc_x"}, 13495},
	{"next free times", `query($u: ID!, $s: ID!) { nextFreeSlots(unitId: $u, serviceId: $s, weekdays: [4, 5], timeFrom: "17:00", limit: 20) { reason slots { startsAt endsAt barberId } } }`, map[string]any{"u": "unt_x", "s": "svc_x"}, 1063},
	{"webhook delivery log", `query($e: ID!) { webhookDeliveries(endpointId: $e) { edges { node { id status createdAt attempts { attemptedAt statusCode latencyMs error } } } } }`, map[string]any{"e": "whe_x"}, 11252},
	{"GraphiQL introspection", gqlserver.GraphiQLIntrospection, nil, 40007},
	{"full introspection", gqlserver.FullIntrospection, nil, 43836},
}

// TestCostBoundsTheAnswer checks that an operation's cost bounds what its
// answer holds: every value of the answer is counted.
func TestCostBoundsTheAnswer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		// An endpoint first, so the bookings are owed to it.
		hook := s.Query(t, s.Keys.AdminAPIKey, `mutation { createWebhookEndpoint(input: {url: "https://crm.example.com/hooks"}) { endpoint { id } } }`, nil).OK(t)
		endpoint := hook["createWebhookEndpoint"].(map[string]any)["endpoint"].(map[string]any)["id"]
		unit, haircut := bookSome(t, s)
		docs := append(dashboardQueries[:0:0], dashboardQueries...)
		docs = append(docs, []struct {
			name, query string
			vars        map[string]any
			cost        int
		}{
			{"appointments", `{ appointments(first: 500) { totalCount edges { node { id status barber { name units { name } } } } } }`, nil, 0},
			{"catalog", `{ bookableUnits { id name services { id name barbers { id name } } } }`, nil, 0},
			{"a client's appointments", `{ appointmentsByClient(clientPhone: "+351912345670", from: "2027-03-01", limit: 100) { id startsAtLocal endsAtLocal timezone unit { name } } }`, nil, 0},
			{"nodes", `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Unit { name barbers { name } } } }`, map[string]any{"ids": []any{unit, unit, "unt_nope"}}, 0},
		}...)
		for _, d := range docs {
			t.Run(d.name, func(t *testing.T) {
				vars := d.vars
				if _, ok := vars["u"]; ok {
					vars = map[string]any{"u": unit, "s": haircut, "n": vars["n"]}
				}
				if _, ok := vars["e"]; ok {
					vars = map[string]any{"e": endpoint}
				}
				cost, _, err := gqlserver.OperationCost(d.query, vars)
				if err != nil {
					t.Fatal(err)
				}
				for _, key := range []string{"", s.Keys.AdminAPIKey} {
					a := s.Query(t, key, d.query, vars)
					if key == "" && !strings.Contains(d.name, "introspection") {
						continue
					}
					n := countValues(a.OK(t))
					t.Logf("%d values, cost %d", n, cost)
					if n == 0 || n > cost {
						t.Errorf("the answer holds %d values; its cost is %d", n, cost)
					}
				}
			})
		}
	})
}

// bookSome books haircuts at the Lisbon demo unit on 2027-03-02 and
// returns the ids of the unit and the haircut.
func bookSome(t testing.TB, s *gqltest.Server) (unit, haircut string) {
	t.Helper()
	unit, haircut = s.Keys.IDs["Barbearia Chiado"], s.Keys.IDs["Haircut"]
	for i, at := range []string{"10:00", "10:00", "11:00", "11:00", "14:30"} {
		s.Query(t, s.Keys.APIKey, `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`, map[string]any{"in": map[string]any{
			"unitId": unit, "serviceId": haircut, "startsAt": "2027-03-02T" + at + ":00",
			"client": map[string]any{"name": fmt.Sprintf("Client %d", i), "phone": fmt.Sprintf("+35191234567%d", i)},
		}}).OK(t)
	}
	return unit, haircut
}

// countValues counts the fields of an answer: each object's keys, through
// lists.
func countValues(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += 1 + countValues(e)
		}
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}

// A connection page is 50 items without first or last, at most 500, and
// never negative; nodes looks up at most 500 ids.
func TestPageSizes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		for i := range 60 {
			s.Query(t, s.Keys.AdminAPIKey, `mutation($n: String!) { createUnit(input: {name: $n, timezone: "Europe/Lisbon"}) { id } }`, map[string]any{"n": fmt.Sprintf("Unit %d", i)}).OK(t)
		}
		edges := func(a *gqltest.Answer) int {
			return len(a.OK(t)["units"].(map[string]any)["edges"].([]any))
		}
		if n := edges(s.Query(t, s.Keys.AdminAPIKey, `{ units { edges { node { id } } } }`, nil)); n != paging.DefaultPageSize {
			t.Errorf("without first or last: %d units, want %d", n, paging.DefaultPageSize)
		}
		if n := edges(s.Query(t, s.Keys.AdminAPIKey, `{ units(first: 500) { edges { node { id } } } }`, nil)); n != 62 {
			t.Errorf("first: 500: %d units, want all 62", n)
		}
		if n := edges(s.Query(t, s.Keys.AdminAPIKey, `{ units(last: 5) { edges { node { id } } } }`, nil)); n != 5 {
			t.Errorf("last: 5: %d units", n)
		}
		// The lists take first the same way.
		list := func(a *gqltest.Answer) int { return len(a.OK(t)["bookableUnits"].([]any)) }
		if n := list(s.Query(t, s.Keys.APIKey, `{ bookableUnits { id } }`, nil)); n != paging.DefaultPageSize {
			t.Errorf("bookableUnits without first: %d units, want %d", n, paging.DefaultPageSize)
		}
		if n := list(s.Query(t, s.Keys.APIKey, `{ bookableUnits(first: 500) { id } }`, nil)); n != 62 {
			t.Errorf("bookableUnits(first: 500): %d units, want all 62", n)
		}
		if n := list(s.Query(t, s.Keys.APIKey, `{ bookableUnits(first: 3) { id } }`, nil)); n != 3 {
			t.Errorf("bookableUnits(first: 3): %d units", n)
		}
		for _, c := range []struct{ query, field string }{
			{`{ units(first: 501) { totalCount } }`, "first"},
			{`{ barbers(last: 501) { totalCount } }`, "last"},
			{`{ agenda(unitId: "unt_x", date: "2027-03-01", first: 501) { totalCount } }`, "first"},
			{`query($n: Int) { customers(first: $n) { totalCount } }`, "first"},
			{`query($n: Int) { services(last: $n) { totalCount } }`, "last"},
			{`{ bookableUnits(first: 501) { id } }`, "first"},
			{`query($n: Int) { bookableServices(first: $n) { id } }`, "first"},
			{`query($n: Int) { bookableBarbers(first: $n) { id } }`, "first"},
			{`query($n: Int) { apiKeys(first: $n) { id } }`, "first"},
			{`query($n: Int) { activeHolds(first: $n) { id } }`, "first"},
		} {
			a := s.Query(t, s.Keys.AdminAPIKey, c.query, map[string]any{"n": 501})
			if a.Code() != domain.CodeValidationFailed || strings.Join(a.Fields(), ",") != c.field {
				t.Errorf("%s: %q %v: %s", c.query, a.Code(), a.Fields(), a.Messages())
			}
		}
		if a := s.Query(t, s.Keys.AdminAPIKey, `{ units(first: -1) { totalCount } }`, nil); a.Code() != domain.CodeValidationFailed {
			t.Errorf("first: -1: %q %s", a.Code(), a.Messages())
		}

		// The resolvers apply the same bounds when called directly.
		v, err := s.Res.Authenticate(context.Background(), s.Keys.AdminAPIKey)
		if err != nil {
			t.Fatal(err)
		}
		ctx := domain.WithViewer(context.Background(), v)
		conn, err := s.Res.Query().Units(ctx, nil, nil, nil, nil, nil, nil)
		if err != nil || len(conn.Edges) != paging.DefaultPageSize {
			t.Errorf("Units without first or last: %v edges, %v", conn, err)
		}
		big := paging.MaxPageSize + 1
		if _, err := s.Res.Query().Appointments(ctx, nil, &big, nil, nil, nil, nil); domain.ErrorCode(err) != domain.CodeValidationFailed {
			t.Errorf("Appointments(first: 501): %v", err)
		}
		if _, err := s.Res.Query().Agenda(ctx, "unt_x", "2027-03-01", nil, nil, nil, &big, nil); domain.ErrorCode(err) != domain.CodeValidationFailed {
			t.Errorf("Agenda(last: 501): %v", err)
		}
		if _, err := s.Res.Query().Nodes(ctx, make([]string, big)); domain.ErrorCode(err) != domain.CodeValidationFailed {
			t.Errorf("Nodes(501 ids): %v", err)
		}
		neg := -1
		for name, call := range map[string]func(*int) error{
			"BookableUnits":    func(n *int) error { _, err := s.Res.Query().BookableUnits(ctx, n); return err },
			"BookableServices": func(n *int) error { _, err := s.Res.Query().BookableServices(ctx, nil, n); return err },
			"BookableBarbers":  func(n *int) error { _, err := s.Res.Query().BookableBarbers(ctx, nil, nil, n); return err },
			"APIKeys":          func(n *int) error { _, err := s.Res.Query().APIKeys(ctx, n); return err },
			"ActiveHolds":      func(n *int) error { _, err := s.Res.Query().ActiveHolds(ctx, nil, nil, n); return err },
		} {
			for _, n := range []*int{&big, &neg} {
				if err := call(n); domain.ErrorCode(err) != domain.CodeValidationFailed {
					t.Errorf("%s(first: %d): %v", name, *n, err)
				}
			}
		}
		us, err := s.Res.Query().BookableUnits(ctx, nil)
		if err != nil || len(us) != paging.DefaultPageSize {
			t.Errorf("BookableUnits without first: %d units, %v", len(us), err)
		}
	})
}

// Introspection shows no directive of gqlgen's code generation, and the
// schema still works.
func TestIntrospectionHidesGeneratorDirectives(t *testing.T) {
	t.Parallel()
	s := gqltest.NewServer(t, storetest.Open(t, "sqlite3"))
	data := s.Query(t, "", `{ __schema { directives { name } } }`, nil).OK(t)
	var names []string
	for _, d := range data["__schema"].(map[string]any)["directives"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	got := strings.Join(names, " ")
	for _, hidden := range []string{"goField", "goModel"} {
		if strings.Contains(got, hidden) {
			t.Errorf("introspection shows @%s: %s", hidden, got)
		}
	}
	for _, kept := range []string{"include", "skip", "deprecated"} {
		if !strings.Contains(got, kept) {
			t.Errorf("introspection lacks @%s: %s", kept, got)
		}
	}
	if a := s.Query(t, "", `{ __typename @goField(name: "x") }`, nil); a.Code() != domain.CodeValidationFailed {
		t.Errorf("@goField in a query: %q %s", a.Code(), a.Messages())
	}
	s.Query(t, s.Keys.AdminAPIKey, `{ units(first: 1) { edges { node { id barbers { name } } } } }`, nil).OK(t)
}

// BenchmarkDashboardQueries measures what the limits add to legitimate
// operations.
func BenchmarkDashboardQueries(b *testing.B) {
	s := gqltest.NewServer(b, storetest.Open(b, "sqlite3"))
	unit, _ := bookSome(b, s)
	for _, d := range dashboardQueries {
		vars := d.vars
		if _, ok := vars["u"]; ok {
			vars = map[string]any{"u": unit, "n": vars["n"]}
		}
		body, err := json.Marshal(map[string]any{"query": d.query, "variables": vars})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.name, func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				if a := s.Post(b, s.Keys.AdminAPIKey, body); len(a.Errors) > 0 {
					b.Fatal(a.Messages())
				}
			}
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
