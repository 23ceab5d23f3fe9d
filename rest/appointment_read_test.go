package rest_test

import (
	"net/http"
	"testing"

	"barberd/graph/domain"
)

func TestAppointmentGet(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		t.Run("found", func(t *testing.T) {
			e := e.apOn(t)
			r := e.apGet("/appointments/" + a.ID)
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); !apSame(got, a) {
				t.Errorf("GET\n got %+v\nwant %+v", got, a)
			}
		})
		t.Run("read scope alone suffices", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("GET", "/appointments/"+a.ID, e.key(domain.ScopeAppointmentsRead), nil), http.StatusOK, "")
		})
		t.Run("unknown", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.apGet("/appointments/apt_01aaaaaaaaaaaaaaaaaaaaaaaa"), http.StatusNotFound, domain.CodeAppointmentNotFound)
			expect(t, e.apGet("/appointments/nope"), http.StatusNotFound, domain.CodeAppointmentNotFound)
		})
		t.Run("another account's", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			expect(t, e.do("GET", "/appointments/"+a.ID, other.APIKey, nil), http.StatusNotFound, domain.CodeAppointmentNotFound)
		})
		t.Run("without appointments:read", func(t *testing.T) {
			e := e.apOn(t)
			k := e.key(domain.ScopeAppointmentsWrite, domain.ScopeCatalogRead)
			expect(t, e.do("GET", "/appointments/"+a.ID, k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
		})
		t.Run("without key", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("GET", "/appointments/"+a.ID, "", nil), http.StatusUnauthorized, domain.CodeMissingAPIKey)
		})
	})
}
