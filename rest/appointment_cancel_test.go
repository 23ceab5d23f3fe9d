package rest_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"barberd/ent/appointment"
	"barberd/graph/domain"
)

func TestAppointmentCancel(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		reader := e.key(domain.ScopeNotificationsRead)

		t.Run("cancels and frees the slot", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
			if e.apFree(haircut, joao, tuesdayAt10) {
				t.Fatalf("booked slot offered")
			}
			r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "Client asked by WhatsApp"})
			expect(t, r, http.StatusOK, "")
			c := apView(t, r)
			if c.ID != a.ID || c.Status != "cancelled" || c.CancelledAt == nil || c.CancellationReason == nil ||
				*c.CancellationReason != "Client asked by WhatsApp" || c.StartsAt != a.StartsAt || !reflect.DeepEqual(c.Client, a.Client) {
				t.Fatalf("cancelled %+v", c)
			}
			apUTC(t, "cancelled_at", *c.CancelledAt)
			if got := apView(t, e.apGet("/appointments/"+a.ID)); !apSame(got, c) {
				t.Errorf("GET after cancel\n got %+v\nwant %+v", got, c)
			}
			if !e.apFree(haircut, joao, tuesdayAt10) {
				t.Errorf("cancelled slot not offered again")
			}
			e.apCreate(e.apBody(haircut, tuesdayAt10, joao))

			t.Run("again is unchanged and tells nobody", func(t *testing.T) {
				e := e.apOn(t)
				r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "another reason"})
				expect(t, r, http.StatusOK, "")
				if again := apView(t, r); !apSame(again, c) {
					t.Errorf("cancel again\n got %+v\nwant %+v", again, c)
				}
				r = e.do("GET", "/notifications/pending?peek=true&limit=200", reader, nil)
				expect(t, r, http.StatusOK, "")
				cancelled := 0
				for _, n := range ntList(t, r) {
					if n.Type == domain.EventCancelled && n.AppointmentID == a.ID {
						cancelled++
					}
				}
				if cancelled != 1 {
					t.Errorf("%d appointment.cancelled for %s, want 1", cancelled, a.ID)
				}
			})
		})

		t.Run("reason", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, tuesdayAt11, joao))
			for _, c := range []struct {
				name string
				body any
			}{
				{"missing", map[string]any{}},
				{"null", map[string]any{"reason": nil}},
				{"empty", map[string]any{"reason": ""}},
				{"blank", map[string]any{"reason": "   "}},
				{"501 characters", map[string]any{"reason": strings.Repeat("x", 501)}},
				{"not a string", map[string]any{"reason": 42}},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := e.apOn(t)
					apExpectFields(t, e.apPost("/appointments/"+a.ID+"/cancel", c.body), "reason")
				})
			}
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Fatalf("status %s after refused cancels", s)
			}
			r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": strings.Repeat("é", 500)})
			expect(t, r, http.StatusOK, "")
			if c := apView(t, r); c.Status != "cancelled" {
				t.Errorf("status %s", c.Status)
			}
		})

		t.Run("completed and no-show", func(t *testing.T) {
			e := e.apOn(t)
			for i, s := range []appointment.Status{appointment.StatusCompleted, appointment.StatusNoShow} {
				t.Run(string(s), func(t *testing.T) {
					e := e.apOn(t)
					a := e.apCreate(e.apBody(haircut, []string{"2027-03-02T14:00:00", "2027-03-02T15:00:00"}[i], joao))
					e.apSetStatus(a.ID, s)
					expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "x"}), http.StatusConflict, domain.CodeNotCancellable)
					if got := e.appointment(a.ID).Status; got != s {
						t.Errorf("status %s, want %s", got, s)
					}
				})
			}
		})

		t.Run("unknown", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.apPost("/appointments/apt_01aaaaaaaaaaaaaaaaaaaaaaaa/cancel", map[string]any{"reason": "x"}), http.StatusNotFound, domain.CodeAppointmentNotFound)
		})

		t.Run("another account's", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-02T16:00:00", joao))
			other := e.otherAccount()
			expect(t, e.do("POST", "/appointments/"+a.ID+"/cancel", other.APIKey, map[string]any{"reason": "x"}), http.StatusNotFound, domain.CodeAppointmentNotFound)
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Errorf("status %s", s)
			}
		})

		t.Run("without appointments:write", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-02T17:00:00", joao))
			k := e.key(domain.ScopeAppointmentsRead)
			expect(t, e.do("POST", "/appointments/"+a.ID+"/cancel", k, map[string]any{"reason": "x"}), http.StatusForbidden, domain.CodeInsufficientScope)
		})

		// Last: moves the clock.
		t.Run("started", func(t *testing.T) {
			e := e.apOn(t)
			a := e.apCreate(e.apBody(haircut, "2027-03-01T09:00:00", joao))
			b := e.apCreate(e.apBody(haircut, "2027-03-01T09:30:00", joao))
			r := e.apPost("/appointments/"+b.ID+"/cancel", map[string]any{"reason": "early"})
			expect(t, r, http.StatusOK, "")
			cancelled := apView(t, r)
			e.clock.advance(3 * time.Hour) // 09:00 Lisbon (UTC+0)
			expect(t, e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "late"}), http.StatusConflict, domain.CodeNotCancellable)
			if s := e.appointment(a.ID).Status; s != appointment.StatusConfirmed {
				t.Errorf("status %s", s)
			}
			// One cancelled before it started still answers 200, unchanged.
			e.clock.advance(time.Hour)
			r = e.apPost("/appointments/"+b.ID+"/cancel", map[string]any{"reason": "again"})
			expect(t, r, http.StatusOK, "")
			if got := apView(t, r); !apSame(got, cancelled) {
				t.Errorf("cancel again after start\n got %+v\nwant %+v", got, cancelled)
			}
		})
	})
}
