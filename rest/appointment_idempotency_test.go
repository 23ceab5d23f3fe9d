package rest_test

import (
	"net/http"
	"testing"

	"barberd/graph/domain"
)

func TestAppointmentIdempotency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reader := e.key(domain.ScopeNotificationsRead)

		t.Run("same reference replays", func(t *testing.T) {
			e := e.apOn(t)
			b := e.apBody(haircut, "2027-03-03T10:00:00", joao)
			b["external_reference"] = "crm-1"
			first := e.apCreate(b)
			n := e.apCount()
			// A different body with the same reference.
			b2 := e.apBody(beardTrim, "2027-03-03T14:00:00", miguel)
			b2["external_reference"] = "crm-1"
			b2["client"] = map[string]any{"name": "Someone", "phone": otherPhone}
			for range 2 {
				r := e.apPost("/appointments", b2)
				expect(t, r, http.StatusOK, "")
				if h := r.Header.Get("Idempotent-Replayed"); h != "true" {
					t.Errorf("Idempotent-Replayed %q, want true", h)
				}
				if got := apView(t, r); !apSame(got, first) {
					t.Errorf("replay\n got %+v\nwant %+v", got, first)
				}
			}
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
			// The other time stayed free.
			if !e.apFree(beardTrim, miguel, "2027-03-03T14:00:00") {
				t.Errorf("replay took the new body's slot")
			}
		})

		t.Run("replay after cancel", func(t *testing.T) {
			e := e.apOn(t)
			b := e.apBody(haircut, "2027-03-03T11:00:00", joao)
			b["external_reference"] = "crm-2"
			first := e.apCreate(b)
			expect(t, e.apPost("/appointments/"+first.ID+"/cancel", map[string]any{"reason": "changed plans"}), http.StatusOK, "")
			n := e.apCount()
			r := e.apPost("/appointments", b)
			expect(t, r, http.StatusOK, "")
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("no Idempotent-Replayed header")
			}
			got := apView(t, r)
			if got.ID != first.ID || got.Status != "cancelled" || got.CancelledAt == nil {
				t.Errorf("replay %+v, want the cancelled %s", got, first.ID)
			}
			if e.apCount() != n {
				t.Errorf("replay after cancel created an appointment")
			}
		})

		t.Run("replay with a hold already used by the first", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-03T15:00:00"
			h := e.apHold(haircut, at, joao, nil)
			b := e.apBody(haircut, at, joao)
			b["hold_id"], b["external_reference"] = h, "crm-hold"
			first := e.apCreate(b)
			r := e.apPost("/appointments", b)
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); got.ID != first.ID || r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay %s, want %s", got.ID, first.ID)
			}
		})

		t.Run("another key of the account makes a new one", func(t *testing.T) {
			e := e.apOn(t)
			b := e.booking(haircut, "2027-03-03T16:00:00")
			b["external_reference"] = "crm-3"
			first := e.apCreate(b)
			k := e.key(domain.ScopeAppointmentsWrite)
			r := e.do("POST", "/appointments", k, b)
			expect(t, r, http.StatusCreated, "")
			second := apView(t, r)
			if second.ID == first.ID || r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("another key replayed %s", first.ID)
			}
			if second.BarberID == first.BarberID {
				t.Errorf("both at %s with one barber", second.StartsAt)
			}
			// Each key replays its own.
			r = e.do("POST", "/appointments", k, b)
			expect(t, r, http.StatusOK, "")
			if apView(t, r).ID != second.ID {
				t.Errorf("second key replayed another appointment")
			}
		})

		t.Run("another account's reference is not a replay", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			ob := e.apOtherBooking(other, haircut, "2027-03-03T17:00:00")
			ob["external_reference"] = "crm-1"
			r := e.do("POST", "/appointments", other.APIKey, ob)
			expect(t, r, http.StatusCreated, "")
		})

		t.Run("no reference, no replay", func(t *testing.T) {
			e := e.apOn(t)
			n := e.apCount()
			a := e.apCreate(e.apBody(haircut, "2027-03-03T18:00:00", joao))
			b := e.apCreate(e.apBody(haircut, "2027-03-03T18:30:00", joao))
			if a.ID == b.ID || e.apCount() != n+2 {
				t.Errorf("two creates without reference made %d appointments", e.apCount()-n)
			}
			// The same body again is a new booking attempt, not a replay.
			apExpectUnavailable(t, e.apPost("/appointments", e.apBody(haircut, "2027-03-03T18:00:00", joao)), "2027-03-03T18:00:00", e.barber(joao))
		})

		t.Run("replays tell nobody", func(t *testing.T) {
			e := e.apOn(t)
			r := e.do("GET", "/notifications/pending?peek=true&limit=200", reader, nil)
			expect(t, r, http.StatusOK, "")
			created := 0
			for _, n := range ntList(t, r) {
				if n.Type == domain.EventCreated {
					created++
				}
			}
			// crm-1, crm-2, crm-hold, crm-3 (two keys), two without reference.
			if created != 7 {
				t.Errorf("%d appointment.created, want 7", created)
			}
		})
	})
}
