package rest_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/rest/view"
)

// ntNotice is a notification as GET /notifications/pending returns it.
type ntNotice struct {
	ID                  string           `json:"id"`
	Type                string           `json:"type"`
	CreatedAt           string           `json:"created_at"`
	AppointmentID       string           `json:"appointment_id"`
	Appointment         view.Appointment `json:"appointment"`
	Source              string           `json:"source"`
	PreviousStartsAt    *string          `json:"previous_starts_at"`
	PreviousStartsAtUTC *string          `json:"previous_starts_at_utc"`
}

// notifications decodes a pending list.
func ntList(t testing.TB, r *response) []ntNotice {
	t.Helper()
	var l struct {
		Data []ntNotice `json:"data"`
	}
	r.Decode(t, &l)
	if l.Data == nil {
		t.Fatalf("data is not a list: %s", r.Body)
	}
	return l.Data
}

// pending GETs the key's pending notifications with the given query and
// expects 200.
func (e *env) ntPending(key, query string) []ntNotice {
	e.t.Helper()
	r := e.do("GET", "/notifications/pending"+query, key, nil)
	expect(e.t, r, http.StatusOK, "")
	return ntList(e.t, r)
}

func ntIDs(ns []ntNotice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

func ntTypes(ns []ntNotice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Type
	}
	return out
}

// reader makes a key that reads notifications (and nothing else).
func (e *env) ntReader() string {
	e.t.Helper()
	return e.key(domain.ScopeNotificationsRead)
}

// events books n Haircuts on the given Lisbon day, one every 30 minutes
// from 13:00 with João then Miguel, making n appointment.created events.
func (e *env) ntEvents(day string, n int) []view.Appointment {
	e.t.Helper()
	var out []view.Appointment
	for i := range n {
		b := []string{joao, miguel}[i/12]
		m := 13*60 + (i%12)*30
		out = append(out, e.apCreate(e.apBody(haircut, fmt.Sprintf("%sT%02d:%02d:00", day, m/60, m%60), b)))
	}
	return out
}

func TestNotificationsPending(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("created, cancelled, rescheduled", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			a := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
			b := e.apCreate(e.apBody(haircut, tuesdayAt11, joao))
			r := e.apPost("/appointments/"+a.ID+"/cancel", map[string]any{"reason": "sick"})
			expect(t, r, http.StatusOK, "")
			cancelled := apView(t, r)
			r = e.apPost("/appointments/"+b.ID+"/reschedule", map[string]any{"starts_at": "2027-03-02T15:00:00"})
			expect(t, r, http.StatusOK, "")
			moved := apView(t, r)

			r = e.do("GET", "/notifications/pending", k, nil)
			expect(t, r, http.StatusOK, "")
			ns := ntList(t, r)
			want := []string{domain.EventCreated, domain.EventCreated, domain.EventCancelled, domain.EventRescheduled}
			if !reflect.DeepEqual(ntTypes(ns), want) {
				t.Fatalf("types %v, want %v", ntTypes(ns), want)
			}
			for i, n := range ns {
				if !strings.HasPrefix(n.ID, "ntf_") || n.Source != "api" {
					t.Errorf("notification %d: id %q source %q", i, n.ID, n.Source)
				}
				apUTC(t, "created_at", n.CreatedAt)
				if i > 0 && ns[i-1].ID >= n.ID {
					t.Errorf("ids not ascending: %s then %s", ns[i-1].ID, n.ID)
				}
				if n.AppointmentID != n.Appointment.ID {
					t.Errorf("appointment_id %s, snapshot of %s", n.AppointmentID, n.Appointment.ID)
				}
			}
			if ns[0].AppointmentID != a.ID || !apSame(ns[0].Appointment, a) {
				t.Errorf("created snapshot\n got %+v\nwant %+v", ns[0].Appointment, a)
			}
			if ns[1].AppointmentID != b.ID || !apSame(ns[1].Appointment, b) {
				t.Errorf("created snapshot\n got %+v\nwant %+v", ns[1].Appointment, b)
			}
			if ns[2].AppointmentID != a.ID || !apSame(ns[2].Appointment, cancelled) {
				t.Errorf("cancelled snapshot\n got %+v\nwant %+v", ns[2].Appointment, cancelled)
			}
			if ns[3].AppointmentID != b.ID || !apSame(ns[3].Appointment, moved) {
				t.Errorf("rescheduled snapshot\n got %+v\nwant %+v", ns[3].Appointment, moved)
			}
			if p := ns[3].PreviousStartsAt; p == nil || *p != tuesdayAt11 {
				t.Errorf("previous_starts_at %v, want %s", p, tuesdayAt11)
			}
			if p := ns[3].PreviousStartsAtUTC; p == nil || *p != "2027-03-02T11:00:00Z" {
				t.Errorf("previous_starts_at_utc %v", p)
			}
			var raw struct{ Data []map[string]any }
			r.Decode(t, &raw)
			for i, m := range raw.Data[:3] {
				for _, f := range []string{"previous_starts_at", "previous_starts_at_utc"} {
					if _, ok := m[f]; ok {
						t.Errorf("notification %d (%s) has %s", i, m["type"], f)
					}
				}
			}
			// The snapshot keeps the status as at the event.
			if ns[0].Appointment.Status != "confirmed" || ns[0].Appointment.CancelledAt != nil || ns[2].Appointment.Status != "cancelled" {
				t.Errorf("snapshot statuses %s, %s", ns[0].Appointment.Status, ns[2].Appointment.Status)
			}

			t.Run("consumed", func(t *testing.T) {
				e := e.apOn(t)
				r := e.do("GET", "/notifications/pending", k, nil)
				expect(t, r, http.StatusOK, "")
				if ns := ntList(t, r); len(ns) != 0 {
					t.Errorf("second GET returned %v", ntTypes(ns))
				}
			})
		})

		t.Run("previous start in the unit's zone", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			body := map[string]any{
				"unit_id":    e.unit(saoPaulo),
				"service_id": e.service(corte),
				"starts_at":  "2027-03-16T10:00:00",
				"client":     map[string]any{"name": clientName, "phone": otherPhone},
			}
			a := e.apCreate(body)
			r := e.apPost("/appointments/"+a.ID+"/reschedule", map[string]any{"starts_at": "2027-03-16T16:00:00"})
			expect(t, r, http.StatusOK, "")
			ns := e.ntPending(k, "")
			if len(ns) != 2 || ns[1].Type != domain.EventRescheduled {
				t.Fatalf("got %v", ntTypes(ns))
			}
			n := ns[1]
			if n.PreviousStartsAt == nil || *n.PreviousStartsAt != "2027-03-16T10:00:00" ||
				n.PreviousStartsAtUTC == nil || *n.PreviousStartsAtUTC != "2027-03-16T13:00:00Z" {
				t.Errorf("previous %v %v", n.PreviousStartsAt, n.PreviousStartsAtUTC)
			}
			if n.Appointment.StartsAt != "2027-03-16T16:00:00" || n.Appointment.StartsAtUTC != "2027-03-16T19:00:00Z" || n.Appointment.Timezone != "America/Sao_Paulo" {
				t.Errorf("snapshot %+v", n.Appointment)
			}
		})

		t.Run("limit", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			e.ntEvents("2027-03-03", 5)
			all := e.ntPending(k, "?peek=true")
			if len(all) != 5 {
				t.Fatalf("%d pending, want 5", len(all))
			}
			first := e.ntPending(k, "?limit=2")
			if !reflect.DeepEqual(ntIDs(first), ntIDs(all[:2])) {
				t.Errorf("limit=2 gave %v, want %v", ntIDs(first), ntIDs(all[:2]))
			}
			rest := e.ntPending(k, "?limit=200")
			if !reflect.DeepEqual(ntIDs(rest), ntIDs(all[2:])) {
				t.Errorf("then %v, want %v", ntIDs(rest), ntIDs(all[2:]))
			}
		})

		t.Run("default limit 50", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			e.ntEvents("2027-03-04", 24)
			e.ntEvents("2027-03-05", 24)
			e.ntEvents("2027-03-08", 3)
			if got := e.ntPending(k, ""); len(got) != 50 {
				t.Errorf("%d returned, want 50", len(got))
			}
			if got := e.ntPending(k, ""); len(got) != 1 {
				t.Errorf("%d left, want 1", len(got))
			}
		})

		t.Run("bad limit", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			for _, q := range []string{"limit=0", "limit=201", "limit=x", "limit=-1", "limit=1.5", "peek=maybe"} {
				t.Run(q, func(t *testing.T) {
					e := e.apOn(t)
					r := e.do("GET", "/notifications/pending?"+q, k, nil)
					apExpectFields(t, r, strings.Split(q, "=")[0])
				})
			}
		})

		t.Run("peek", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			e.ntEvents("2027-03-09", 2)
			p1, p2 := e.ntPending(k, "?peek=true"), e.ntPending(k, "?peek=true")
			if len(p1) != 2 || !reflect.DeepEqual(p1, p2) {
				t.Fatalf("peeks differ or wrong size: %v, %v", ntIDs(p1), ntIDs(p2))
			}
			if got := e.ntPending(k, "?peek=true&limit=1"); !reflect.DeepEqual(ntIDs(got), ntIDs(p1[:1])) {
				t.Errorf("peek limit=1: %v", ntIDs(got))
			}
			if got := e.ntPending(k, "?peek=false"); !reflect.DeepEqual(got, p1) {
				t.Errorf("GET after peeks: %v, want %v", ntIDs(got), ntIDs(p1))
			}
			if got := e.ntPending(k, "?peek=true"); len(got) != 0 {
				t.Errorf("peek after GET: %v", ntIDs(got))
			}
		})

		t.Run("ack", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			e.ntEvents("2027-03-10", 3)
			ns := e.ntPending(k, "?peek=true")
			if len(ns) != 3 {
				t.Fatalf("%d pending, want 3", len(ns))
			}
			r := e.do("POST", "/notifications/ack", k, map[string]any{"through": ns[1].ID})
			expect(t, r, http.StatusOK, "")
			var ack map[string]any
			r.Decode(t, &ack)
			if !reflect.DeepEqual(ack, map[string]any{"acknowledged": float64(2)}) {
				t.Errorf("ack %v, want {acknowledged: 2}", ack)
			}
			if got := e.ntPending(k, "?peek=true"); !reflect.DeepEqual(ntIDs(got), ntIDs(ns[2:])) {
				t.Errorf("after ack %v, want %v", ntIDs(got), ntIDs(ns[2:]))
			}
			// Acknowledging again consumes nothing more.
			r = e.do("POST", "/notifications/ack", k, map[string]any{"through": ns[1].ID})
			expect(t, r, http.StatusOK, "")
			if n := r.JSON(t)["acknowledged"]; n != float64(0) {
				t.Errorf("second ack acknowledged %v, want 0", n)
			}
			r = e.do("POST", "/notifications/ack", k, map[string]any{"through": ns[2].ID})
			expect(t, r, http.StatusOK, "")
			if n := r.JSON(t)["acknowledged"]; n != float64(1) {
				t.Errorf("last ack acknowledged %v, want 1", n)
			}
			if got := e.ntPending(k, ""); len(got) != 0 {
				t.Errorf("after acking all: %v", ntIDs(got))
			}

			t.Run("unknown", func(t *testing.T) {
				e := e.apOn(t)
				expect(t, e.do("POST", "/notifications/ack", k, map[string]any{"through": "ntf_01aaaaaaaaaaaaaaaaaaaaaaaa"}), http.StatusNotFound, domain.CodeNotificationNotFound)
			})
			t.Run("before the key existed", func(t *testing.T) {
				e := e.apOn(t)
				later := e.ntReader()
				expect(t, e.do("POST", "/notifications/ack", later, map[string]any{"through": ns[0].ID}), http.StatusNotFound, domain.CodeNotificationNotFound)
			})
			t.Run("another account's", func(t *testing.T) {
				e := e.apOn(t)
				other := e.otherAccount()
				expect(t, e.do("POST", "/notifications/ack", other.APIKey, map[string]any{"through": ns[0].ID}), http.StatusNotFound, domain.CodeNotificationNotFound)
			})
			t.Run("bad body", func(t *testing.T) {
				e := e.apOn(t)
				for _, b := range []any{map[string]any{}, map[string]any{"through": ""}, map[string]any{"through": 5}} {
					apExpectFields(t, e.do("POST", "/notifications/ack", k, b), "through")
				}
			})
			t.Run("without notifications:read", func(t *testing.T) {
				e := e.apOn(t)
				k := e.key(domain.ScopeAppointmentsRead)
				expect(t, e.do("POST", "/notifications/ack", k, map[string]any{"through": ns[0].ID}), http.StatusForbidden, domain.CodeInsufficientScope)
			})
		})

		t.Run("every key sees every event", func(t *testing.T) {
			e := e.apOn(t)
			k1, k2 := e.ntReader(), e.ntReader()
			e.ntEvents("2027-03-11", 3)
			n1 := e.ntPending(k1, "")
			n2 := e.ntPending(k2, "")
			if len(n1) != 3 || !reflect.DeepEqual(n1, n2) {
				t.Errorf("key 1 got %v, key 2 got %v", ntIDs(n1), ntIDs(n2))
			}
			if got := e.ntPending(k1, ""); len(got) != 0 {
				t.Errorf("key 1 again: %v", ntIDs(got))
			}
			// More keys than a notification's statement feeds itself
			// (store.FedKeys), and than the account's last notification
			// was owed to (store.Room): Notify feeds the rest.
			more := []string{k1, k2}
			for len(more) <= store.FedKeys+1 {
				more = append(more, e.ntReader())
			}
			e.ntEvents("2027-03-16", 2)
			for i, k := range more {
				if got := e.ntPending(k, ""); len(got) != 2 {
					t.Errorf("key %d of %d got %v, want the 2 events", i+1, len(more), ntTypes(got))
				}
			}
		})

		t.Run("a key sees only what happened after it was made", func(t *testing.T) {
			e := e.apOn(t)
			before := e.ntEvents("2027-03-12", 1)
			k := e.ntReader()
			if got := e.ntPending(k, "?peek=true"); len(got) != 0 {
				t.Errorf("new key sees %v", ntIDs(got))
			}
			r := e.apPost("/appointments/"+before[0].ID+"/cancel", map[string]any{"reason": "x"})
			expect(t, r, http.StatusOK, "")
			got := e.ntPending(k, "")
			if len(got) != 1 || got[0].Type != domain.EventCancelled || got[0].AppointmentID != before[0].ID {
				t.Errorf("got %v", ntTypes(got))
			}
		})

		t.Run("without notifications:read", func(t *testing.T) {
			e := e.apOn(t)
			k := e.key(domain.ScopeAppointmentsRead, domain.ScopeAppointmentsWrite)
			expect(t, e.do("GET", "/notifications/pending", k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
			expect(t, e.do("GET", "/notifications/pending?peek=true", k, nil), http.StatusForbidden, domain.CodeInsufficientScope)
		})

		t.Run("another account's events are never seen", func(t *testing.T) {
			e := e.apOn(t)
			k := e.ntReader()
			other := e.otherAccount()
			r := e.do("POST", "/appointments", other.APIKey, e.apOtherBooking(other, haircut, "2027-03-15T10:00:00"))
			expect(t, r, http.StatusCreated, "")
			theirs := apView(t, r)
			if got := e.ntPending(k, ""); len(got) != 0 {
				t.Errorf("saw %v of another account", ntTypes(got))
			}
			// The other account's own key does see it.
			got := e.ntPending(other.APIKey, "")
			if len(got) != 1 || got[0].AppointmentID != theirs.ID {
				t.Errorf("other account got %v", ntIDs(got))
			}
			// And our events are not theirs.
			e.ntEvents("2027-03-15", 1)
			if got := e.ntPending(other.APIKey, ""); len(got) != 0 {
				t.Errorf("other account saw %v", ntTypes(got))
			}
			if got := e.ntPending(k, ""); len(got) != 1 {
				t.Errorf("%d of ours, want 1", len(got))
			}
		})
	})
}
