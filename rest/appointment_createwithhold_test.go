package rest_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
)

func TestAppointmentCreateWithHold(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("hold is consumed", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, tuesdayAt10, joao, nil)
			if s := e.apHoldStatus(h); s != hold.StatusActive {
				t.Fatalf("hold %s, want active", s)
			}
			// The held slot is taken by the hold, yet the same request with
			// its hold books it.
			b := e.apBody(haircut, tuesdayAt10, joao)
			b["hold_id"] = h
			a := e.apCreate(b)
			if a.HoldID == nil || *a.HoldID != h || a.BarberID != e.barber(joao) || a.StartsAt != tuesdayAt10 {
				t.Errorf("appointment %+v", a)
			}
			if s := e.apHoldStatus(h); s != hold.StatusConsumed {
				t.Errorf("hold %s, want consumed", s)
			}
			if e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("booked slot still offered")
			}
			got := apView(t, e.apGet("/appointments/"+a.ID))
			if got.HoldID == nil || *got.HoldID != h {
				t.Errorf("GET hold_id %v", got.HoldID)
			}
		})

		t.Run("hold without barber in the request", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, tuesdayAt11, "", nil)
			hb, err := e.db.Hold.Get(e.ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			b := e.booking(haircut, tuesdayAt11)
			b["hold_id"] = h
			a := e.apCreate(b)
			if a.BarberID != hb.BarberID {
				t.Errorf("barber %s, want the hold's %s", a.BarberID, hb.BarberID)
			}
		})

		t.Run("hold used twice", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, "2027-03-02T14:00:00", joao, nil)
			b := e.apBody(haircut, "2027-03-02T14:00:00", joao)
			b["hold_id"] = h
			e.apCreate(b)
			n := e.apCount()
			b["client"] = map[string]any{"name": "Other", "phone": otherPhone}
			expect(t, e.apPost("/appointments", b), http.StatusConflict, domain.CodeHoldAlreadyUsed)
			if got := e.apCount(); got != n {
				t.Errorf("%d appointments, want %d", got, n)
			}
		})

		t.Run("hold of another account", func(t *testing.T) {
			e := e.apOn(t)
			other := e.otherAccount()
			ctx := tenant.WithAccount(context.Background(), other.AccountID)
			r := e.do("POST", "/slots/hold", other.APIKey, map[string]any{
				"unit_id":    e.db.Unit.Query().Where(unit.Name(lisbon)).OnlyIDX(ctx),
				"service_id": e.db.Service.Query().Where(service.Name(haircut)).OnlyIDX(ctx),
				"starts_at":  "2027-03-02T15:00:00",
			})
			expect(t, r, http.StatusCreated, "")
			b := e.booking(haircut, "2027-03-02T15:00:00")
			b["hold_id"] = r.JSON(t)["hold_id"]
			expect(t, e.apPost("/appointments", b), http.StatusNotFound, domain.CodeHoldNotFound)
		})

		t.Run("unknown hold", func(t *testing.T) {
			e := e.apOn(t)
			b := e.booking(haircut, "2027-03-02T15:00:00")
			b["hold_id"] = "hld_01aaaaaaaaaaaaaaaaaaaaaaaa"
			expect(t, e.apPost("/appointments", b), http.StatusNotFound, domain.CodeHoldNotFound)
		})

		t.Run("released hold", func(t *testing.T) {
			e := e.apOn(t)
			h := e.apHold(haircut, "2027-03-02T16:00:00", joao, nil)
			expect(t, e.apPost("/slots/hold/"+h+"/release", nil), http.StatusOK, "")
			b := e.apBody(haircut, "2027-03-02T16:00:00", joao)
			b["hold_id"] = h
			expect(t, e.apPost("/appointments", b), http.StatusConflict, domain.CodeHoldExpired)
			// Without the hold the slot is free again.
			delete(b, "hold_id")
			e.apCreate(b)
		})

		t.Run("mismatch", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T17:00:00"
			h := e.apHold(haircut, at, joao, nil)
			cases := []struct {
				name string
				body map[string]any
			}{
				{"other time", e.apBody(haircut, "2027-03-02T17:30:00", joao)},
				{"other service", e.apBody(beardTrim, at, joao)},
				{"other barber", e.apBody(haircut, at, miguel)},
				{"other unit", func() map[string]any {
					b := e.apBody(corte, at, "")
					b["unit_id"] = e.unit(saoPaulo)
					return b
				}()},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					c.body["hold_id"] = h
					expect(t, e.apPost("/appointments", c.body), http.StatusConflict, domain.CodeHoldMismatch)
				})
			}
			if s := e.apHoldStatus(h); s != hold.StatusActive {
				t.Errorf("hold %s after mismatches, want active", s)
			}
			// The hold still books its own slot.
			b := e.apBody(haircut, at, joao)
			b["hold_id"] = h
			e.apCreate(b)
		})

		t.Run("slot held by another hold of the same key", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T18:00:00"
			e.apHold(haircut, at, joao, nil)
			// Without hold_id the held slot is not free, even for the holder.
			apExpectUnavailable(t, e.apPost("/appointments", e.apBody(haircut, at, joao)), at, e.barber(joao))
		})

		// Last: moves the clock.
		t.Run("expired hold", func(t *testing.T) {
			e := e.apOn(t)
			at := "2027-03-02T09:00:00"
			h := e.apHold(haircut, at, joao, map[string]any{"ttl_seconds": 10})
			e.clock.advance(11 * time.Second)
			b := e.apBody(haircut, at, joao)
			b["hold_id"] = h
			expect(t, e.apPost("/appointments", b), http.StatusConflict, domain.CodeHoldExpired)
			// The slot is free again without the hold.
			delete(b, "hold_id")
			e.apCreate(b)
		})
	})
}
