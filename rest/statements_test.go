package rest_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestStatementsPerRequest counts the SQL statements (BEGIN and COMMIT
// included) each v1 request sends once the caches are warm, beside the
// shared version read (package graph/fresh), which the count leaves out. It
// logs them all (go test -v) and holds the hot paths to their budget.
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
		count := func(method, path string, body any, status int) int {
			t.Helper()
			log.take()
			expect(t, e.do(method, path, key, body), status, "")
			return len(log.take())
		}
		// Warm the key and catalog caches.
		count("GET", avail, nil, http.StatusOK)
		got := map[string]int{}
		got["GET /context"] = count("GET", "/context", nil, http.StatusOK)
		got["GET /units"] = count("GET", "/units", nil, http.StatusOK)
		got["GET /services"] = count("GET", "/services?unit_id="+unitID, nil, http.StatusOK)
		got["GET /barbers"] = count("GET", "/barbers?unit_id="+unitID, nil, http.StatusOK)
		got["GET /availability (cached)"] = count("GET", avail, nil, http.StatusOK)
		got["POST /slots/hold"] = count("POST", "/slots/hold", map[string]any{"unit_id": unitID, "service_id": serviceID, "barber_id": barberID, "starts_at": tuesdayAt10}, http.StatusCreated)
		got["GET /availability (after a write)"] = count("GET", avail, nil, http.StatusOK)
		// The first create with a barber named warms that catalog entry.
		count("POST", "/appointments", booking("2027-03-02T13:00:00"), http.StatusCreated)
		body := booking(tuesdayAt11)
		body["external_reference"] = "count-statements"
		log.take()
		r := e.do("POST", "/appointments", key, body)
		expect(t, r, http.StatusCreated, "")
		got["POST /appointments"] = len(log.take())
		id, _ := r.JSON(t)["id"].(string)
		got["POST /appointments (replay)"] = count("POST", "/appointments", body, http.StatusOK)
		got["GET /appointments/{id}"] = count("GET", "/appointments/"+id, nil, http.StatusOK)
		got["GET /appointments?client_phone"] = count("GET", "/appointments?"+url.Values{"client_phone": {validPhone}}.Encode(), nil, http.StatusOK)
		got["GET /appointments?client_phone&from"] = count("GET", "/appointments?"+url.Values{"client_phone": {validPhone}, "from": {tuesday}}.Encode(), nil, http.StatusOK)
		got["POST /appointments/{id}/reschedule"] = count("POST", "/appointments/"+id+"/reschedule", map[string]any{"starts_at": "2027-03-02T15:00:00"}, http.StatusOK)
		got["POST /appointments/{id}/cancel"] = count("POST", "/appointments/"+id+"/cancel", map[string]any{"reason": "counting"}, http.StatusOK)
		got["GET /notifications/pending"] = count("GET", "/notifications/pending", nil, http.StatusOK)
		for _, k := range []string{"GET /context", "GET /units", "GET /services", "GET /barbers", "GET /availability (cached)",
			"POST /slots/hold", "GET /availability (after a write)", "POST /appointments", "POST /appointments (replay)",
			"GET /appointments/{id}", "GET /appointments?client_phone", "GET /appointments?client_phone&from", "POST /appointments/{id}/reschedule", "POST /appointments/{id}/cancel", "GET /notifications/pending"} {
			t.Logf("%-36s %d", k, got[k])
		}
		if n := got["GET /availability (cached)"]; n != 0 {
			t.Errorf("a cached availability answer cost %d statements, want 0", n)
		}
		// The appointments, then their units, services and barbers; dates
		// read the account's units' zones first.
		if n, limit := got["GET /appointments?client_phone"], 4; n > limit {
			t.Errorf("a client lookup cost %d statements, want at most %d", n, limit)
		}
		if n, limit := got["GET /appointments?client_phone&from"], 5; n > limit {
			t.Errorf("a client lookup by dates cost %d statements, want at most %d", n, limit)
		}
		if n, limit := got["POST /appointments"], 11; n > limit {
			t.Errorf("a create cost %d statements, want at most %d", n, limit)
		}
	})
}
