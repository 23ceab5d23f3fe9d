package rest_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
)

// statementsMeasured is what each v1 request of TestStatementsPerRequest
// sent when the table was last set, on SQLite and on PostgreSQL (whose
// writes lock the barber row, and whose BEGIN rides in the round trip of
// its transaction's first statement, so it is not counted there). A
// request may send statementsRoom more before the test fails; a cached
// answer (availability, a catalog list) sends none, ever.
var statementsMeasured = map[string]map[string]int{
	"GET /context":                                 {dialect.SQLite: 3, dialect.Postgres: 3},
	"GET /units":                                   {dialect.SQLite: 1, dialect.Postgres: 1},
	"GET /services":                                {dialect.SQLite: 3, dialect.Postgres: 3},
	"GET /barbers":                                 {dialect.SQLite: 4, dialect.Postgres: 4},
	"GET /availability (cached)":                   {dialect.SQLite: 0, dialect.Postgres: 0},
	"GET /units (cached)":                          {dialect.SQLite: 0, dialect.Postgres: 0},
	"GET /services (cached)":                       {dialect.SQLite: 0, dialect.Postgres: 0},
	"GET /barbers (cached)":                        {dialect.SQLite: 0, dialect.Postgres: 0},
	"POST /slots/hold":                             {dialect.SQLite: 10, dialect.Postgres: 6},
	"GET /availability (after a write)":            {dialect.SQLite: 1, dialect.Postgres: 1},
	"POST /appointments":                           {dialect.SQLite: 9, dialect.Postgres: 3},
	"POST /appointments (replay)":                  {dialect.SQLite: 5, dialect.Postgres: 3},
	"POST /appointments (hold_id)":                 {dialect.SQLite: 11, dialect.Postgres: 3},
	"POST /appointments/{id}/reschedule (hold_id)": {dialect.SQLite: 13, dialect.Postgres: 4},
	"GET /appointments/{id}":                       {dialect.SQLite: 1, dialect.Postgres: 1},
	"GET /appointments?client_phone":               {dialect.SQLite: 1, dialect.Postgres: 1},
	"GET /appointments?client_phone&from":          {dialect.SQLite: 2, dialect.Postgres: 2},
	"POST /appointments/{id}/reschedule":           {dialect.SQLite: 11, dialect.Postgres: 4},
	"POST /appointments/{id}/cancel":               {dialect.SQLite: 8, dialect.Postgres: 3},
	"GET /notifications/pending":                   {dialect.SQLite: 5, dialect.Postgres: 1},
}

// statementsRoom is how many statements a request may send beyond what was
// measured: one for a read, two for a write (a transaction, which also
// frees expired holds and notifies), so no path sits at its ceiling.
func statementsRoom(path string) int {
	if strings.HasSuffix(path, " (cached)") {
		return 0
	}
	if strings.HasPrefix(path, "POST ") {
		return 2
	}
	return 1
}

// TestStatementsPerRequest counts the SQL statements (BEGIN and COMMIT
// included; statements sent together in one round trip count once) each
// v1 request sends once the caches are warm, beside the
// shared version read (package graph/fresh), which the count leaves out,
// and holds every request to its measured count plus its room.
func TestStatementsPerRequest(t *testing.T) {
	each(t, func(t *testing.T, db0 *env) {
		e, log := countingEnv(t, db0.db)
		key := e.keys.APIKey
		unitID, serviceID, barberID := e.unit(lisbon), e.service(haircut), e.barber(joao)
		avail := "/availability?" + url.Values{"unit_id": {unitID}, "service_id": {serviceID}, "date": {tuesday}}.Encode()
		booking := func(at string) map[string]any {
			return map[string]any{"unit_id": unitID, "service_id": serviceID, "barber_id": barberID, "starts_at": at,
				"client": map[string]any{"name": clientName, "phone": validPhone}}
		}
		measured := map[string]bool{}
		measure := func(name, method, path string, body any, status int) *response {
			t.Helper()
			log.Take()
			r := e.do(method, path, key, body)
			lines := log.Take()
			if db0.db.Dialect == dialect.Postgres {
				// BEGIN rides in the round trip of the transaction's
				// first statement (graph/store/pipeline.go).
				lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasSuffix(l, "): started") })
			}
			expect(t, r, status, "")
			if name == "" {
				return r
			}
			measured[name] = true
			want, ok := statementsMeasured[name][db0.db.Dialect]
			t.Logf("%-36s %2d (measured %d)", name, len(lines), want)
			if limit := want + statementsRoom(name); !ok || len(lines) > limit {
				t.Errorf("%s sent %d statements, want at most %d (measured %d + room %d):\n\t%s",
					name, len(lines), limit, want, statementsRoom(name), strings.Join(lines, "\n\t"))
			}
			return r
		}
		// Warm the key and catalog caches.
		measure("", "GET", avail, nil, http.StatusOK)
		measure("GET /context", "GET", "/context", nil, http.StatusOK)
		measure("GET /units", "GET", "/units", nil, http.StatusOK)
		measure("GET /services", "GET", "/services?unit_id="+unitID, nil, http.StatusOK)
		measure("GET /barbers", "GET", "/barbers?unit_id="+unitID, nil, http.StatusOK)
		measure("GET /units (cached)", "GET", "/units", nil, http.StatusOK)
		measure("GET /services (cached)", "GET", "/services?unit_id="+unitID, nil, http.StatusOK)
		measure("GET /barbers (cached)", "GET", "/barbers?unit_id="+unitID, nil, http.StatusOK)
		measure("GET /availability (cached)", "GET", avail, nil, http.StatusOK)
		hold := func(name, at string) string {
			t.Helper()
			id, _ := measure(name, "POST", "/slots/hold", map[string]any{"unit_id": unitID, "service_id": serviceID, "barber_id": barberID, "starts_at": at}, http.StatusCreated).JSON(t)["hold_id"].(string)
			return id
		}
		held := hold("POST /slots/hold", tuesdayAt10)
		measure("GET /availability (after a write)", "GET", avail, nil, http.StatusOK)
		// The first create with a barber named warms that catalog entry.
		measure("", "POST", "/appointments", booking("2027-03-02T13:00:00"), http.StatusCreated)
		body := booking(tuesdayAt11)
		body["external_reference"] = "count-statements"
		id, _ := measure("POST /appointments", "POST", "/appointments", body, http.StatusCreated).JSON(t)["id"].(string)
		measure("POST /appointments (replay)", "POST", "/appointments", body, http.StatusOK)
		withHold := booking(tuesdayAt10)
		withHold["hold_id"] = held
		measure("POST /appointments (hold_id)", "POST", "/appointments", withHold, http.StatusCreated)
		measure("GET /appointments/{id}", "GET", "/appointments/"+id, nil, http.StatusOK)
		measure("GET /appointments?client_phone", "GET", "/appointments?"+url.Values{"client_phone": {validPhone}}.Encode(), nil, http.StatusOK)
		measure("GET /appointments?client_phone&from", "GET", "/appointments?"+url.Values{"client_phone": {validPhone}, "from": {tuesday}}.Encode(), nil, http.StatusOK)
		measure("POST /appointments/{id}/reschedule", "POST", "/appointments/"+id+"/reschedule", map[string]any{"starts_at": "2027-03-02T15:00:00"}, http.StatusOK)
		held = hold("", "2027-03-02T16:00:00")
		measure("POST /appointments/{id}/reschedule (hold_id)", "POST", "/appointments/"+id+"/reschedule", map[string]any{"starts_at": "2027-03-02T16:00:00", "hold_id": held}, http.StatusOK)
		measure("POST /appointments/{id}/cancel", "POST", "/appointments/"+id+"/cancel", map[string]any{"reason": "counting"}, http.StatusOK)
		measure("GET /notifications/pending", "GET", "/notifications/pending", nil, http.StatusOK)
		for name := range statementsMeasured {
			if !measured[name] {
				t.Errorf("%s is in the table but was not measured", name)
			}
		}
	})
}
