package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
)

// TestWrongKeysSpareTheDatabase: a key of the wrong shape is refused
// without a query, and a well-formed key the database did not know is
// remembered for a minute, so a flood of wrong keys costs one lookup each,
// not one per request.
func TestWrongKeysSpareTheDatabase(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, db0 *env) {
		e, log := countingEnv(t, db0.db)
		refused := func(key string) int {
			t.Helper()
			log.Take()
			expect(t, e.do("GET", "/units", key, nil), http.StatusUnauthorized, domain.CodeInvalidAPIKey)
			return len(log.Take())
		}
		for _, key := range []string{"bk_nope", "bk_" + strings.Repeat("A", 52), "sk_" + strings.Repeat("a", 52), e.keys.APIKey + "x", "bk_é" + strings.Repeat("a", 50)} {
			if n := refused(key); n != 0 {
				t.Errorf("malformed key %q cost %d statements", key, n)
			}
		}
		unknown := "bk_" + strings.Repeat("q", 52)
		if n := refused(unknown); n == 0 {
			t.Fatal("an unknown well-formed key was not looked up")
		}
		if n := refused(unknown); n != 0 {
			t.Errorf("the same unknown key again cost %d statements, want 0", n)
		}
		e.clock.advance(61 * time.Second)
		if n := refused(unknown); n == 0 {
			t.Error("an unknown key was not looked up again after a minute")
		}
		// A good key still works, and the lookups of others did not touch it.
		expect(t, e.do("GET", "/units", e.keys.APIKey, nil), http.StatusOK, "")
	})
}
