package main

import (
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestMCPHolds holds times and frees them through the tools: one with
// release_hold, the rest of the key's with release_all_holds, whose repeat
// frees nothing more.
func TestMCPHolds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newMCPEnv(t, db, serverConfig{})
		a := httpAgent(t, e.srv.URL, keyed(e.key(t, domain.BookingScopes...), "Authorization", nil))
		s := a.lisbon()
		day := nextWeekday(time.Friday)
		type holdJSON struct {
			HoldID string `json:"hold_id"`
			Status string
		}
		hold := func(at string) holdJSON {
			t.Helper()
			var h holdJSON
			a.ok("hold_slot", map[string]any{"unit_id": s.unit, "service_id": s.haircut, "barber_id": s.joao, "starts_at": day + "T" + at}, &h)
			if h.Status != "active" {
				t.Fatalf("hold at %s: %+v", at, h)
			}
			return h
		}
		first := hold("10:00:00")
		hold("11:00:00")
		hold("15:00:00")

		var released holdJSON
		a.ok("release_hold", map[string]any{"hold_id": first.HoldID}, &released)
		if released.HoldID != first.HoldID || released.Status != "released" {
			t.Fatalf("release_hold: %+v", released)
		}
		a.ok("release_hold", map[string]any{"hold_id": first.HoldID}, &released)
		if released.Status != "released" {
			t.Fatalf("release_hold again: %+v", released)
		}

		var all struct{ Released *int }
		text := a.ok("release_all_holds", nil, &all)
		if all.Released == nil || *all.Released != 2 {
			t.Fatalf("release_all_holds: %+v, want 2 released", all)
		}
		if !strings.Contains(text, "2") {
			t.Errorf("release_all_holds summary %q does not say how many", text)
		}
		all.Released = nil
		a.ok("release_all_holds", nil, &all)
		if all.Released == nil || *all.Released != 0 {
			t.Fatalf("release_all_holds again: %+v, want 0 released", all)
		}
		hold("11:00:00") // free again
		a.refused("release_all_holds", map[string]any{"hold_id": first.HoldID}, domain.CodeValidationFailed)
	})
}
