package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"barberd/graph/domain"
)

// holdJSON is a valid hold request body for the Lisbon demo unit.
func holdJSON(t *testing.T, e *env, startsAt string) []byte {
	t.Helper()
	b, err := json.Marshal(holdRequest(e, haircut, startsAt))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRequestBodies(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		for _, body := range []string{"", "not json", "{", `{"unit_id": "x",}`, "[]", `[{"unit_id": "x"}]`, "null", `"text"`, "42", "true", `{"a":1} {"b":2}`} {
			t.Run("not a JSON object: "+body, func(t *testing.T) {
				expect(t, call(t, e, "POST", "/slots/hold", k, body), http.StatusBadRequest, domain.CodeInvalidJSON)
			})
		}
		t.Run("not a JSON object on every POST", func(t *testing.T) {
			for _, path := range []string{"/appointments", "/appointments/nope/cancel", "/appointments/nope/reschedule", "/notifications/ack"} {
				expect(t, call(t, e, "POST", path, k, "[]"), http.StatusBadRequest, domain.CodeInvalidJSON)
			}
		})
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data; boundary=x", "application/jsonx", "json"} {
			t.Run("Content-Type "+ct, func(t *testing.T) {
				r := callWith(t, e, "POST", "/slots/hold", k, holdJSON(t, e, tuesdayAt10), http.Header{"Content-Type": {ct}})
				expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
			})
		}
		t.Run("no Content-Type", func(t *testing.T) {
			r := callWith(t, e, "POST", "/slots/hold", k, holdJSON(t, e, tuesdayAt10), http.Header{"Content-Type": nil})
			expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
		})
		t.Run("Content-Type text/plain on every POST", func(t *testing.T) {
			for _, path := range []string{"/appointments", "/appointments/nope/cancel", "/appointments/nope/reschedule", "/notifications/ack"} {
				r := callWith(t, e, "POST", path, k, "{}", http.Header{"Content-Type": {"text/plain"}})
				expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
			}
		})
		t.Run("Content-Type with parameters", func(t *testing.T) {
			r := callWith(t, e, "POST", "/slots/hold", k, holdJSON(t, e, tuesdayAt10), http.Header{"Content-Type": {"application/json; charset=utf-8"}})
			expect(t, r, http.StatusCreated, "")
			r = callWith(t, e, "POST", "/slots/hold", k, holdJSON(t, e, tuesdayAt11), http.Header{"Content-Type": {"Application/JSON"}})
			expect(t, r, http.StatusCreated, "")
		})
		t.Run("body over 64 KiB", func(t *testing.T) {
			big := `{"unit_id": "` + strings.Repeat("a", 64<<10) + `"}`
			expect(t, call(t, e, "POST", "/slots/hold", k, big), http.StatusRequestEntityTooLarge, "payload_too_large")
			expect(t, call(t, e, "POST", "/appointments", k, big), http.StatusRequestEntityTooLarge, "payload_too_large")
			expect(t, call(t, e, "POST", "/appointments/nope/cancel", k, big), http.StatusRequestEntityTooLarge, "payload_too_large")
		})
		t.Run("body of exactly 64 KiB", func(t *testing.T) {
			b := holdJSON(t, e, "2027-03-02T13:00:00")
			b = append(b, bytes.Repeat([]byte(" "), 64<<10-len(b))...)
			if len(b) != 64<<10 {
				t.Fatalf("body is %d bytes", len(b))
			}
			expect(t, call(t, e, "POST", "/slots/hold", k, b), http.StatusCreated, "")
			over := append(b, ' ')
			expect(t, call(t, e, "POST", "/slots/hold", k, over), http.StatusRequestEntityTooLarge, "payload_too_large")
		})
		t.Run("wrongly typed fields", func(t *testing.T) {
			body := holdRequest(e, haircut, "2027-03-02T14:00:00", "unit_id", 5, "ttl_seconds", "x")
			expectFields(t, call(t, e, "POST", "/slots/hold", k, body), "unit_id", "ttl_seconds")
		})
		t.Run("every wrongly typed field at once", func(t *testing.T) {
			body := map[string]any{"unit_id": 5, "service_id": true, "barber_id": []string{"x"}, "starts_at": 7, "ttl_seconds": "x"}
			expectFields(t, call(t, e, "POST", "/slots/hold", k, body), "unit_id", "service_id", "barber_id", "starts_at", "ttl_seconds")
		})
		t.Run("wrongly typed and missing fields at once", func(t *testing.T) {
			expectFields(t, call(t, e, "POST", "/slots/hold", k, map[string]any{"unit_id": 5}), "unit_id", "service_id", "starts_at")
			expectFields(t, call(t, e, "POST", "/slots/hold", k, map[string]any{"unit_id": 5, "starts_at": "2027-03-02"}), "unit_id", "service_id", "starts_at")
		})
		t.Run("wrongly typed nested fields", func(t *testing.T) {
			body := e.booking(haircut, tuesdayAt10)
			body["client"] = map[string]any{"name": 7, "phone": validPhone}
			body["external_reference"] = 12
			expectFields(t, call(t, e, "POST", "/appointments", k, body), "client.name", "external_reference")
		})
		t.Run("unknown fields are ignored", func(t *testing.T) {
			body := holdRequest(e, haircut, "2027-03-02T15:00:00", "note", "hello", "extra", map[string]any{"a": 1})
			expect(t, call(t, e, "POST", "/slots/hold", k, body), http.StatusCreated, "")
		})
		t.Run("release refuses a body that is not JSON", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-02T17:00:00"))
			r := callWith(t, e, "POST", releasePath(h.HoldID), k, "please", http.Header{"Content-Type": {"text/plain"}})
			expect(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
			expect(t, call(t, e, "POST", releasePath(h.HoldID), k, "[]"), http.StatusBadRequest, domain.CodeInvalidJSON)
			expect(t, call(t, e, "POST", releasePath(h.HoldID), k, strings.Repeat(" ", 65<<10)), http.StatusRequestEntityTooLarge, "payload_too_large")
			// None of that released it.
			if r := release(t, e, h.HoldID); r.Status != "released" {
				t.Errorf("status %q", r.Status)
			}
		})
		t.Run("release takes an empty body", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-02T16:00:00"))
			expect(t, call(t, e, "POST", releasePath(h.HoldID), k, nil), http.StatusOK, "")
			expect(t, call(t, e, "POST", releasePath(h.HoldID), k, ""), http.StatusOK, "")
			expect(t, call(t, e, "POST", releasePath(h.HoldID), k, "{}"), http.StatusOK, "")
		})
	})
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		for _, path := range []string{"/nope", "/", "/unit", "/units/x", "/slots", "/slots/hold/x", "/slots/hold/x/release/y", "/appointments/x/y"} {
			t.Run("unknown route "+path, func(t *testing.T) {
				expect(t, call(t, e, "GET", path, k, nil), http.StatusNotFound, domain.CodeNotFound)
			})
		}
		for _, tt := range []struct{ method, path string }{
			{"DELETE", "/units"}, {"POST", "/units"}, {"PUT", "/context"}, {"POST", "/availability"},
			{"GET", "/slots/hold"}, {"PUT", "/slots/hold"}, {"GET", "/slots/hold/x/release"},
			{"DELETE", "/appointments/x"}, {"PATCH", "/appointments/x"}, {"POST", "/openapi.json"},
		} {
			t.Run("wrong method "+tt.method+" "+tt.path, func(t *testing.T) {
				expect(t, call(t, e, tt.method, tt.path, k, nil), http.StatusMethodNotAllowed, "method_not_allowed")
			})
		}
		t.Run("HEAD works like GET", func(t *testing.T) {
			for _, tt := range []struct {
				path, key string
				status    int
			}{
				{"/units", k, http.StatusOK},
				{"/context", k, http.StatusOK},
				{"/openapi.json", "", http.StatusOK},
				{"/units", "", http.StatusUnauthorized},
				{"/slots/hold", k, http.StatusMethodNotAllowed},
				{"/nope", k, http.StatusNotFound},
			} {
				r := call(t, e, "HEAD", tt.path, tt.key, nil)
				if r.Status != tt.status || len(r.Body) != 0 || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("HEAD %s: %d %q, X-Request-Id %q; want %d, no body", tt.path, r.Status, r.Body, r.Header.Get("X-Request-Id"), tt.status)
				}
			}
		})
	})
}

var wellFormedID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func TestRequestID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		withID := func(id string) http.Header { return http.Header{"X-Request-Id": {id}} }
		for _, id := range []string{"req-123", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "a.b_c:d-E", strings.Repeat("x", 128)} {
			t.Run("echoed "+id[:min(len(id), 20)], func(t *testing.T) {
				r := callWith(t, e, "GET", "/units", e.keys.APIKey, nil, withID(id))
				expect(t, r, http.StatusOK, "")
				if got := r.Header.Get("X-Request-Id"); got != id {
					t.Errorf("X-Request-Id %q, want %q", got, id)
				}
				r = callWith(t, e, "GET", "/units", "", nil, withID(id))
				expect(t, r, http.StatusUnauthorized, domain.CodeMissingAPIKey)
				if got, body := r.Header.Get("X-Request-Id"), problemOf(t, r).RequestID; got != id || body != id {
					t.Errorf("X-Request-Id %q, request_id %q, want %q", got, body, id)
				}
			})
		}
		for _, id := range []string{"has spaces in it", strings.Repeat("x", 129), strings.Repeat("y", 300), "semi;colon", "<script>", "a/b", `"quoted"`} {
			t.Run("replaced "+id[:min(len(id), 20)], func(t *testing.T) {
				r := callWith(t, e, "GET", "/nope", e.keys.APIKey, nil, withID(id))
				expect(t, r, http.StatusNotFound, domain.CodeNotFound)
				got := r.Header.Get("X-Request-Id")
				if got == id || !wellFormedID.MatchString(got) {
					t.Errorf("X-Request-Id %q for incoming %q", got, id)
				}
				if p := problemOf(t, r); p.RequestID != got {
					t.Errorf("request_id %q, header %q", p.RequestID, got)
				}
			})
		}
		t.Run("generated when absent", func(t *testing.T) {
			a := call(t, e, "GET", "/units", e.keys.APIKey, nil).Header.Get("X-Request-Id")
			b := call(t, e, "GET", "/units", e.keys.APIKey, nil).Header.Get("X-Request-Id")
			if !wellFormedID.MatchString(a) || !wellFormedID.MatchString(b) || a == b {
				t.Errorf("generated ids %q and %q", a, b)
			}
		})
		t.Run("on the OpenAPI document too", func(t *testing.T) {
			r := callWith(t, e, "GET", "/openapi.json", "", nil, withID("doc-1"))
			if got := r.Header.Get("X-Request-Id"); got != "doc-1" {
				t.Errorf("X-Request-Id %q", got)
			}
		})
	})
}

// TestProblems checks the problem+json form of one error of each status.
func TestProblems(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", e.barber(joao)))
		tests := []struct {
			name, method, path, key string
			body                    any
			header                  http.Header
			status                  int
			code                    string
		}{
			{"invalid json", "POST", "/slots/hold", k, "nope", nil, 400, domain.CodeInvalidJSON},
			{"validation", "POST", "/slots/hold", k, map[string]any{}, nil, 400, domain.CodeValidationFailed},
			{"validation in a query", "GET", "/availability", k, nil, nil, 400, domain.CodeValidationFailed},
			{"missing key", "GET", "/context", "", nil, nil, 401, domain.CodeMissingAPIKey},
			{"invalid key", "GET", "/context", "bk_wrong", nil, nil, 401, domain.CodeInvalidAPIKey},
			{"scope", "GET", "/context", e.key(domain.ScopeCatalogRead), nil, nil, 403, domain.CodeInsufficientScope},
			{"route", "GET", "/nope", k, nil, nil, 404, domain.CodeNotFound},
			{"unit", "GET", query("/services", "unit_id", "nope"), k, nil, nil, 404, domain.CodeUnitNotFound},
			{"hold", "POST", releasePath("nope"), k, nil, nil, 404, domain.CodeHoldNotFound},
			{"method", "DELETE", "/context", k, nil, nil, 405, "method_not_allowed"},
			{"slot", "POST", "/slots/hold", k, holdRequest(e, haircut, tuesdayAt10, "barber_id", e.barber(joao)), nil, 409, domain.CodeSlotUnavailable},
			{"too large", "POST", "/slots/hold", k, strings.Repeat(" ", 65<<10), nil, 413, "payload_too_large"},
			{"media type", "POST", "/slots/hold", k, "{}", http.Header{"Content-Type": {"text/plain"}}, 415, "unsupported_media_type"},
			{"window", "POST", "/slots/hold", k, holdRequest(e, haircut, "2027-02-26T10:00:00"), nil, 422, domain.CodeOutsideWindow},
			{"eligible", "GET", availabilityPath(e.unit(lisbon), e.service(cutAndBeard), tuesday, "barber_id", e.barber(miguel)), k, nil, nil, 422, domain.CodeBarberNotEligible},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := callWith(t, e, tt.method, tt.path, tt.key, tt.body, tt.header)
				expect(t, r, tt.status, tt.code) // also checks Content-Type
				var p map[string]any
				r.Decode(t, &p)
				for _, f := range []string{"type", "title", "detail", "request_id"} {
					if s, _ := p[f].(string); s == "" {
						t.Errorf("problem lacks %s: %s", f, r.Body)
					}
				}
				if st, _ := p["status"].(float64); int(st) != tt.status {
					t.Errorf("problem status %v, want %d", p["status"], tt.status)
				}
				if p["request_id"] != r.Header.Get("X-Request-Id") {
					t.Errorf("request_id %v, X-Request-Id %q", p["request_id"], r.Header.Get("X-Request-Id"))
				}
				_, hasErrors := p["errors"]
				if hasErrors != (tt.code == domain.CodeValidationFailed) {
					t.Errorf("errors present: %v, for code %s", hasErrors, tt.code)
				}
				_, hasAlternatives := p["alternatives"]
				if hasAlternatives != (tt.code == domain.CodeSlotUnavailable) {
					t.Errorf("alternatives present: %v, for code %s", hasAlternatives, tt.code)
				}
				lower := strings.ToLower(string(r.Body))
				for _, leak := range []string{"sql", "select ", "pq:", "goroutine", "panic", ".go:"} {
					if strings.Contains(lower, leak) {
						t.Errorf("problem leaks %q: %s", leak, r.Body)
					}
				}
			})
		}
	})
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		for _, key := range []string{"", "bk_not_a_key"} {
			t.Run("key "+map[bool]string{true: "absent", false: "invalid"}[key == ""], func(t *testing.T) {
				r := call(t, e, "GET", "/openapi.json", key, nil)
				expect(t, r, http.StatusOK, "")
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("Content-Type %q", ct)
				}
				var doc struct {
					OpenAPI string                     `json:"openapi"`
					Paths   map[string]json.RawMessage `json:"paths"`
				}
				if err := json.Unmarshal(r.Body, &doc); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				if !strings.HasPrefix(doc.OpenAPI, "3.1") {
					t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
				}
				for _, p := range []string{"/context", "/units", "/services", "/barbers", "/availability", "/slots/hold", "/slots/hold/{hold_id}/release"} {
					if _, ok := doc.Paths[p]; !ok {
						t.Errorf("path %s is not documented", p)
					}
				}
			})
		}
	})
}
