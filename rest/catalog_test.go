package rest_test

import (
	"net/http"
	"testing"

	"barberd/graph"
)

func TestUnits(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		var got struct {
			Data []struct {
				ID, Name, Timezone string
			}
		}
		r := e.do("GET", "/units", e.keys.APIKey, nil)
		expect(t, r, http.StatusOK, "")
		r.Decode(t, &got)
		if len(got.Data) != 2 || got.Data[0].Name != lisbon || got.Data[1].Timezone != "America/Sao_Paulo" {
			t.Fatalf("units: %+v", got.Data)
		}
	})
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("missing key", func(t *testing.T) {
			expect(t, e.do("GET", "/units", "", nil), http.StatusUnauthorized, graph.CodeMissingAPIKey)
		})
		t.Run("invalid key", func(t *testing.T) {
			expect(t, e.do("GET", "/units", "bk_nope", nil), http.StatusUnauthorized, graph.CodeInvalidAPIKey)
		})
		t.Run("insufficient scope", func(t *testing.T) {
			k := e.key(graph.ScopeContextRead)
			r := e.do("GET", "/units", k, nil)
			expect(t, r, http.StatusForbidden, graph.CodeInsufficientScope)
		})
		t.Run("unknown route", func(t *testing.T) {
			expect(t, e.do("GET", "/nope", e.keys.APIKey, nil), http.StatusNotFound, graph.CodeNotFound)
		})
		t.Run("wrong method", func(t *testing.T) {
			expect(t, e.do("DELETE", "/units", e.keys.APIKey, nil), http.StatusMethodNotAllowed, "method_not_allowed")
		})
	})
}
