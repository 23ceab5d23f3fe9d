package rest_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/graph/domain"
)

func TestAppointmentReschedule(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reschedule := func(e *env, id string, body any) *response {
			e.t.Helper()
			return e.apPost("/appointments/"+id+"/reschedule", body)
		}

		t.Run("moves and frees the old slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-02T15:00:00"})
			expect(t, r, http.StatusOK, "")
			m := apView(t, r)
			if m.ID != a.ID || m.Status != "confirmed" || m.StartsAt != "2027-03-02T15:00:00" || m.EndsAt != "2027-03-02T15:30:00" ||
				m.StartsAtUTC != "2027-03-02T15:00:00Z" || m.BarberID != a.BarberID || !reflect.DeepEqual(m.Client, a.Client) || m.CreatedAt != a.CreatedAt {
				t.Errorf("moved %+v", m)
			}
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, m) {
				t.Errorf("GET after reschedule\n got %+v\nwant %+v", got, m)
			}
			if !e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("old slot not freed")
			}
			if e.apFree(haircut, joao, "2027-03-02T15:00:00") {
				t.Errorf("new slot still offered")
			}
		})

		t.Run("15 minutes later over its own time", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(cutAndBeard, "2027-03-03T10:00:00", joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-03T10:15:00"})
			expect(t, r, http.StatusOK, "")
			if m := apView(t, r); m.StartsAt != "2027-03-03T10:15:00" || m.EndsAt != "2027-03-03T11:15:00" || m.ID != a.ID {
				t.Errorf("moved %+v", m)
			}
			// And 15 minutes earlier, back over it again.
			r = reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-03T10:00:00"})
			expect(t, r, http.StatusOK, "")
			if e.apFree(haircut, joao, "2027-03-03T10:45:00") {
				t.Errorf("10:45 offered inside the moved appointment")
			}
			if !e.apFree(haircut, joao, "2027-03-03T11:00:00") {
				t.Errorf("11:00 not offered after moving back")
			}
		})

		t.Run("to a taken slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-04T10:00:00", joao))
			e.apCreate(e.apBody(haircut, "2027-03-04T15:00:00", joao))
			apExpectUnavailable(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-04T15:00:00"}), "2027-03-04T15:00:00", e.barber(joao))
			// A slot held by someone else is taken too.
			e.apHold(haircut, "2027-03-04T16:00:00", joao, nil)
			apExpectUnavailable(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-04T16:00:00"}), "2027-03-04T16:00:00", e.barber(joao))
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, a) {
				t.Errorf("refused reschedule changed the appointment: %+v", got)
			}
		})

		t.Run("to another barber", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-05T10:00:00", joao))
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T10:00:00", "barber_id": e.barber(miguel)})
			expect(t, r, http.StatusOK, "")
			if m := apView(t, r); m.BarberID != e.barber(miguel) || m.BarberName != miguel || m.StartsAt != "2027-03-05T10:00:00" {
				t.Errorf("moved %+v", m)
			}
			if !e.apFree(haircut, joao, "2027-03-05T10:00:00") || e.apFree(haircut, miguel, "2027-03-05T10:00:00") {
				t.Errorf("availability does not follow the barber change")
			}
		})

		t.Run("to an ineligible barber", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(cutAndBeard, "2027-03-05T14:00:00", joao))
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": e.barber(miguel)}), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": e.barber(pedro)}), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-05T15:00:00", "barber_id": "brb_nope"}), http.StatusNotFound, domain.CodeBarberNotFound)
		})

		t.Run("with a hold", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-08T10:00:00", joao))
			h := e.apHold(haircut, "2027-03-08T15:00:00", miguel, nil)
			r := reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T15:00:00", "hold_id": h})
			expect(t, r, http.StatusOK, "")
			m := apView(t, r)
			if m.StartsAt != "2027-03-08T15:00:00" || m.BarberID != e.barber(miguel) || m.HoldID == nil || *m.HoldID != h {
				t.Errorf("moved %+v", m)
			}
			if s := e.apHoldStatus(h); s != hold.StatusConsumed {
				t.Errorf("hold %s, want consumed", s)
			}
			if !e.apFree(haircut, joao, "2027-03-08T10:00:00") {
				t.Errorf("old slot not freed")
			}
			// The hold is spent.
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T15:00:00", "hold_id": h}), http.StatusConflict, domain.CodeHoldAlreadyUsed)
			// A hold for another time than asked.
			h2 := e.apHold(haircut, "2027-03-08T16:00:00", miguel, nil)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T16:30:00", "hold_id": h2}), http.StatusConflict, domain.CodeHoldMismatch)
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T16:00:00", "hold_id": "hld_nope"}), http.StatusNotFound, domain.CodeHoldNotFound)
			// Another account's hold does not exist here.
			other := e.otherAccount()
			ob := e.apOtherBooking(other, haircut, "2027-03-08T17:00:00")
			delete(ob, "client")
			r = e.do("POST", "/slots/hold", other.APIKey, ob)
			expect(t, r, http.StatusCreated, "")
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-08T17:00:00", "hold_id": r.JSON(t)["hold_id"]}), http.StatusNotFound, domain.CodeHoldNotFound)
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, m) {
				t.Errorf("refused reschedules changed the appointment: %+v", got)
			}
		})

		t.Run("not confirmed", func(t *testing.T) {
			e := e.apOn(t)
			for i, s := range []string{"cancelled", "completed", "no_show"} {
				t.Run(s, func(t *testing.T) {
					e := e.apOn(t)
					at := []string{"2027-03-09T10:00:00", "2027-03-09T11:00:00", "2027-03-09T14:00:00"}[i]
					a := e.apCreate(e.apBody(haircut, at, joao))
					if s == "cancelled" {
						expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "x"}), http.StatusOK, "")
					} else {
						e.apSetStatus(a.ID, appointment.Status(s))
					}
					expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-09T17:00:00"}), http.StatusConflict, domain.CodeNotReschedulable)
					if got := e.appointment(a.ID); got.Status != appointment.Status(s) || apLisbonWinter(got.StartsAt) != at {
						t.Errorf("appointment changed: %s %v", got.Status, got.StartsAt)
					}
				})
			}
		})

		t.Run("bad times", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-10T10:00:00", joao))
			for _, c := range []struct {
				name     string
				startsAt any
				status   int
				code     string
			}{
				{"missing", nil, 400, domain.CodeValidationFailed},
				{"with Z", "2027-03-10T15:00:00Z", 400, domain.CodeValidationFailed},
				{"date only", "2027-03-10", 400, domain.CodeValidationFailed},
				{"not a string", 20270310, 400, domain.CodeValidationFailed},
				{"past", "2027-02-26T10:00:00", 422, domain.CodeOutsideWindow},
				{"within lead time", "2027-03-01T06:30:00", 422, domain.CodeOutsideWindow},
				{"beyond horizon", "2028-06-06T10:00:00", 422, domain.CodeOutsideWindow},
				{"DST gap", "2027-03-28T01:30:00", 422, domain.CodeInvalidLocalTime},
				{"closed day", "2027-03-07T10:00:00", 409, domain.CodeSlotUnavailable},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					body := map[string]any{}
					if c.startsAt != nil {
						body["starts_at"] = c.startsAt
					}
					r := reschedule(e, a.ID, body)
					expect(t, r, c.status, c.code)
					if c.status == 400 {
						apExpectFields(t, r, "starts_at")
					}
				})
			}
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, a) {
				t.Errorf("refused reschedules changed the appointment: %+v", got)
			}
		})

		t.Run("unknown and another account's", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, reschedule(e, "apt_01aaaaaaaaaaaaaaaaaaaaaaaa", map[string]any{"starts_at": "2027-03-10T15:00:00"}), http.StatusNotFound, domain.CodeAppointmentNotFound)
			a := e.apCreate(e.apBody(haircut, "2027-03-10T11:00:00", joao))
			other := e.otherAccount()
			r := e.do("POST", "/appointments/"+a.ID+"/reschedule", other.APIKey, map[string]any{"starts_at": "2027-03-10T15:00:00"})
			expect(t, r, http.StatusNotFound, domain.CodeAppointmentNotFound)
		})

		// Last: moves the clock.
		t.Run("started", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-01T09:00:00", joao))
			e.clock.advance(3*time.Hour + time.Minute) // 09:01 Lisbon
			expect(t, reschedule(e, a.ID, map[string]any{"starts_at": "2027-03-11T15:00:00"}), http.StatusConflict, domain.CodeNotReschedulable)
		})
	})
}

// lisbonWinter formats an instant as a Lisbon local time before the
// daylight saving change (UTC+0), for comparison with a requested starts_at.
func apLisbonWinter(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }
