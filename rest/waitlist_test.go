package rest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/rest/view"
)

// The waitlist over REST (docs/waitlist.md): João's Tuesday 17:00-18:00 is
// made full by two haircuts (17:00 and 17:30), so a client may wait for it.

const (
	wlDay      = tuesday
	wlFirst    = wlDay + "T17:00:00"
	wlSecond   = wlDay + "T17:30:00"
	wlWindowTo = "18:00"
)

// wlBody is a join for João's Tuesday between 17:00 and 18:00 for phone.
func (e *env) wlBody(phone string) map[string]any {
	return map[string]any{
		"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
		"from": wlDay, "to": wlDay, "time_from": "17:00", "time_to": wlWindowTo,
		"client": map[string]any{"name": clientName, "phone": phone},
	}
}

// wlFill books João's 17:00 and 17:30 haircuts with the demo key and
// returns their ids: no start of the window is free then.
func (e *env) wlFill() (first, second string) {
	e.t.Helper()
	k := e.keys.APIKey
	return e.clBook(k, lisbon, wlFirst, joao, "+351910000001", ""), e.clBook(k, lisbon, wlSecond, joao, "+351910000002", "")
}

// wlJoin joins with key and expects status; it returns the entry when the
// join succeeded.
func (e *env) wlJoin(key string, body map[string]any, status int) view.WaitlistEntry {
	e.t.Helper()
	r := e.do("POST", "/waitlist", key, body)
	expect(e.t, r, status, "")
	var v view.WaitlistEntry
	r.Decode(e.t, &v)
	return v
}

// wlGet reads an entry with the demo key.
func (e *env) wlGet(id string) view.WaitlistEntry {
	e.t.Helper()
	r := e.do("GET", "/waitlist/"+id, e.keys.APIKey, nil)
	expect(e.t, r, http.StatusOK, "")
	var v view.WaitlistEntry
	r.Decode(e.t, &v)
	return v
}

// wlAwait waits (the offer job's 5 s at most) until the entry has status.
func (e *env) wlAwait(id, status string) view.WaitlistEntry {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := e.wlGet(id)
		if v.Status == status {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("entry %s is %s, want %s: %+v", id, v.Status, status, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wlFind GETs /waitlist with the query and the demo key.
func (e *env) wlFind(rawQuery string) []string {
	e.t.Helper()
	r := e.do("GET", "/waitlist?"+rawQuery, e.keys.APIKey, nil)
	expect(e.t, r, http.StatusOK, "")
	var ids []string
	for _, v := range dataOf[view.WaitlistEntry](e.t, r) {
		ids = append(ids, v.ID)
	}
	return ids
}

// wlOffer is a slot.available notification.
type wlOffer struct {
	ID            string             `json:"id"`
	Type          string             `json:"type"`
	AppointmentID *string            `json:"appointment_id"`
	WaitlistEntry view.WaitlistEntry `json:"waitlist_entry"`
	Slot          view.Slot          `json:"slot"`
	Hold          *view.Hold         `json:"hold"`
	Appointment   any                `json:"appointment"`
}

// wlOffers peeks at the key's pending slot.available notifications.
func (e *env) wlOffers(key string) []wlOffer {
	e.t.Helper()
	r := e.do("GET", "/notifications/pending?peek=true&limit=200", key, nil)
	expect(e.t, r, http.StatusOK, "")
	var l struct {
		Data []wlOffer `json:"data"`
	}
	r.Decode(e.t, &l)
	var out []wlOffer
	for _, n := range l.Data {
		if n.Type == view.SlotAvailable {
			out = append(out, n)
		}
	}
	return out
}

func TestWaitlistEntries(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		e.wlFill()
		k := e.keys.APIKey
		v := e.wlJoin(k, e.wlBody(validPhone), http.StatusCreated)
		if !strings.HasPrefix(v.ID, "wl_") || v.Status != "waiting" || v.Offer != nil || v.AppointmentID != nil ||
			v.UnitID != e.unit(lisbon) || v.BarberID == nil || *v.BarberID != e.barber(joao) ||
			v.From != wlDay || v.To != wlDay || v.TimeFrom == nil || *v.TimeFrom != "17:00" ||
			v.Timezone != "Europe/Lisbon" || v.Client.Phone != validPhone || v.OfferHoldSeconds != 600 ||
			v.Weekdays == nil || len(v.Weekdays) != 0 {
			t.Fatalf("joined %+v", v)
		}
		if got := e.wlGet(v.ID); got.ID != v.ID || got.Status != "waiting" || got.CreatedAt != v.CreatedAt {
			t.Fatalf("get %+v, want %+v", got, v)
		}

		t.Run("lookup", func(t *testing.T) {
			e := e.apOn(t)
			for q, want := range map[string][]string{
				"client_phone=%2B351912345678":                        {v.ID},
				"client_phone=+351912345678":                          {v.ID}, // a + left unencoded arrives as a space
				"client_phone=%2B351912345678&status=waiting,offered": {v.ID},
				"client_phone=%2B351912345678&status=booked":          nil,
				"client_phone=%2B351999999999":                        nil,
			} {
				if got := e.wlFind(q); !slices.Equal(got, want) {
					t.Errorf("%s: %v, want %v", q, got, want)
				}
			}
			expectFields(t, e.do("GET", "/waitlist", k, nil), "client_phone")
			apExpectFields(t, e.do("GET", "/waitlist?client_phone=%2B351912345678&status=pending", k, nil), "status")
			apExpectFields(t, e.do("GET", "/waitlist?client_phone=12345", k, nil), "client_phone")
		})

		t.Run("already waiting", func(t *testing.T) {
			e := e.apOn(t)
			r := e.do("POST", "/waitlist", k, e.wlBody(validPhone))
			expect(t, r, http.StatusConflict, domain.CodeAlreadyWaiting)
			if got := r.JSON(t)["waitlist_entry_id"]; got != v.ID {
				t.Fatalf("waitlist_entry_id %v, want %s", got, v.ID)
			}
		})

		t.Run("replay", func(t *testing.T) {
			e := e.apOn(t)
			body := e.wlBody("+351910000003")
			body["external_reference"] = "wl-chat-1"
			first := e.wlJoin(k, body, http.StatusCreated)
			body["to"] = "2027-03-05" // whatever else it says
			r := e.do("POST", "/waitlist", k, body)
			expect(t, r, http.StatusOK, "")
			var again view.WaitlistEntry
			r.Decode(t, &again)
			if r.Header.Get("Idempotent-Replayed") != "true" || again.ID != first.ID || again.To != wlDay {
				t.Fatalf("replay %+v (header %q), want %s", again, r.Header.Get("Idempotent-Replayed"), first.ID)
			}
			// Another key's reference is its own.
			other := e.wlJoin(e.key(domain.BookingScopes...), e.wlBody("+351910000004"), http.StatusCreated)
			if other.ID == first.ID {
				t.Fatal("another key's join replayed this key's")
			}
		})

		t.Run("not found", func(t *testing.T) {
			e := e.apOn(t)
			for _, p := range []string{"/waitlist/wl_nope", "/waitlist/wl%00x", "/waitlist/" + strings.Repeat("w", 41)} {
				expect(t, e.do("GET", p, k, nil), http.StatusNotFound, domain.CodeWaitlistEntryNotFound)
				expect(t, e.do("DELETE", p, k, nil), http.StatusNotFound, domain.CodeWaitlistEntryNotFound)
			}
			foreign := e.otherAccount().APIKey
			expect(t, e.do("GET", "/waitlist/"+v.ID, foreign, nil), http.StatusNotFound, domain.CodeWaitlistEntryNotFound)
			expect(t, e.do("DELETE", "/waitlist/"+v.ID, foreign, nil), http.StatusNotFound, domain.CodeWaitlistEntryNotFound)
			expect(t, e.do("PUT", "/waitlist/"+v.ID, k, nil), http.StatusMethodNotAllowed, "method_not_allowed")
		})

		t.Run("scopes", func(t *testing.T) {
			e := e.apOn(t)
			read := e.key(allScopesBut(domain.ScopeAppointmentsWrite)...)
			expect(t, e.do("POST", "/waitlist", read, e.wlBody("+351910000005")), http.StatusForbidden, domain.CodeInsufficientScope)
			expect(t, e.do("DELETE", "/waitlist/"+v.ID, read, nil), http.StatusForbidden, domain.CodeInsufficientScope)
			write := e.key(allScopesBut(domain.ScopeAppointmentsRead)...)
			expect(t, e.do("GET", "/waitlist/"+v.ID, write, nil), http.StatusForbidden, domain.CodeInsufficientScope)
			expect(t, e.do("GET", "/waitlist?client_phone=%2B351912345678", write, nil), http.StatusForbidden, domain.CodeInsufficientScope)
		})

		t.Run("leave", func(t *testing.T) {
			e := e.apOn(t)
			for range 2 { // leaving again is 200, unchanged
				r := e.do("DELETE", "/waitlist/"+v.ID, k, nil)
				expect(t, r, http.StatusOK, "")
				var left view.WaitlistEntry
				r.Decode(t, &left)
				if left.ID != v.ID || left.Status != "cancelled" {
					t.Fatalf("left %+v", left)
				}
			}
			if got := e.wlFind("client_phone=%2B351912345678&status=waiting"); got != nil {
				t.Fatalf("waiting after leaving: %v", got)
			}
			// No longer waiting, the client may join again.
			if again := e.wlJoin(k, e.wlBody(validPhone), http.StatusCreated); again.ID == v.ID {
				t.Fatal("joined again as the cancelled entry")
			}
		})
	})
}

func TestWaitlistJoinRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		t.Run("slot available", func(t *testing.T) {
			e := e.apOn(t)
			e.clBook(k, lisbon, wlFirst, joao, "+351910000001", "") // 17:30 and 17:45 stay free
			r := e.do("POST", "/waitlist", k, e.wlBody(validPhone))
			alts := apExpectUnavailableLike(t, r, domain.CodeSlotAvailable)
			for _, a := range alts {
				if a.BarberID != e.barber(joao) || a.StartsAt < wlFirst || a.StartsAt >= wlDay+"T"+wlWindowTo+":00" {
					t.Errorf("alternative %+v outside the request", a)
				}
			}
			if !slices.ContainsFunc(alts, func(a apAlternative) bool { return a.StartsAt == wlSecond }) {
				t.Errorf("alternatives %+v lack %s", alts, wlSecond)
			}
		})
		t.Run("validation", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("POST", "/waitlist", k, "[1]"), http.StatusBadRequest, domain.CodeInvalidJSON)
			apExpectFields(t, e.do("POST", "/waitlist", k, map[string]any{}), "unit_id", "service_id", "from", "to", "client.name", "client.phone")
			bad := e.wlBody("12345")
			bad["from"], bad["to"] = "2027-02-28", "2027-04-30" // yesterday; 62 days
			bad["time_from"], bad["time_to"] = "18:00", "17:00"
			bad["weekdays"] = []int{0, 8}
			bad["offer_hold_seconds"] = 5
			bad["external_reference"] = strings.Repeat("r", 256)
			apExpectFields(t, e.do("POST", "/waitlist", k, bad),
				"client.phone", "to", "time_to", "weekdays", "offer_hold_seconds", "external_reference")
			past := e.wlBody(validPhone)
			past["from"] = "2027-02-28" // the unit's yesterday, checked once the shape is right
			expectFields(t, e.do("POST", "/waitlist", k, past), "from")
			far := e.wlBody(validPhone)
			far["from"], far["to"] = "2028-03-01", "2028-03-02" // past the 365-day horizon
			expect(t, e.do("POST", "/waitlist", k, far), http.StatusUnprocessableEntity, domain.CodeOutsideWindow)
			typed := e.wlBody(validPhone)
			typed["weekdays"], typed["offer_hold_seconds"], typed["time_from"] = "5", "600", 17
			apExpectFields(t, e.do("POST", "/waitlist", k, typed), "weekdays", "offer_hold_seconds", "time_from")
			long := e.wlBody(validPhone)
			long["to"] = "2027-04-01" // 32 days with from below
			long["from"] = "2027-03-01"
			apExpectFields(t, e.do("POST", "/waitlist", k, long), "to")
		})
		t.Run("unknown ids", func(t *testing.T) {
			e := e.apOn(t)
			body := e.wlBody(validPhone)
			body["unit_id"] = "unt_nope"
			expect(t, e.do("POST", "/waitlist", k, body), http.StatusNotFound, domain.CodeUnitNotFound)
			body = e.wlBody(validPhone)
			body["service_id"] = e.service(cutAndBeard)
			body["barber_id"] = e.barber(miguel) // Miguel does not cut and trim
			expect(t, e.do("POST", "/waitlist", k, body), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)
		})
	})
}

// apExpectUnavailableLike expects 409 with code and 1..3 alternatives.
func apExpectUnavailableLike(t *testing.T, r *response, code string) []apAlternative {
	t.Helper()
	expect(t, r, http.StatusConflict, code)
	var p struct {
		Alternatives []apAlternative `json:"alternatives"`
	}
	r.Decode(t, &p)
	if len(p.Alternatives) == 0 || len(p.Alternatives) > 3 {
		t.Fatalf("want 1..3 alternatives: %s", r.Body)
	}
	return p.Alternatives
}

// TestWaitlistCap: a key has at most Limits.WaitlistPerKey waiting entries;
// leaving one makes room, and another key has a cap of its own.
func TestWaitlistCap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		if d := graph.DefaultLimits.WaitlistPerKey; d != 100 {
			t.Fatalf("default waitlist cap %d, want 100", d)
		}
		e.reconfigure(func(s *graph.Settings) { s.Limits.WaitlistPerKey = 2 })
		e.wlFill()
		k := e.key(domain.BookingScopes...)
		first := e.wlJoin(k, e.wlBody("+351910000011"), http.StatusCreated)
		e.wlJoin(k, e.wlBody("+351910000012"), http.StatusCreated)
		r := e.do("POST", "/waitlist", k, e.wlBody("+351910000013"))
		expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyWaitlist)
		if r.Header.Get("Retry-After") != "" {
			t.Error("too_many_waitlist_entries with Retry-After")
		}
		e.wlJoin(e.keys.APIKey, e.wlBody("+351910000013"), http.StatusCreated)
		expect(t, e.do("DELETE", "/waitlist/"+first.ID, k, nil), http.StatusOK, "")
		e.wlJoin(k, e.wlBody("+351910000014"), http.StatusCreated)
	})
}

// TestWaitlistOffers: a cancellation offers the freed start to the oldest
// matching entry, held for its key and told on its key's feed only;
// booking with the hold books the entry; leaving an offered entry releases
// its hold, and the start goes to the next entry.
func TestWaitlistOffers(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		at1700, at1730 := e.wlFill()
		bot, other := e.key(domain.BookingScopes...), e.key(domain.BookingScopes...)
		first := e.wlJoin(bot, e.wlBody("+351910000021"), http.StatusCreated)
		second := e.wlJoin(other, e.wlBody("+351910000022"), http.StatusCreated)
		third := e.wlJoin(bot, e.wlBody("+351910000023"), http.StatusCreated)

		expect(t, e.do("POST", "/appointments/"+at1700+"/cancel", e.keys.APIKey, map[string]any{"reason": "Client is ill"}), http.StatusOK, "")
		offered := e.wlAwait(first.ID, "offered")
		o := offered.Offer
		if o == nil || o.Slot.StartsAt != wlFirst || o.Slot.BarberID != e.barber(joao) || o.HoldID == nil || o.OfferedAt == "" {
			t.Fatalf("offer %+v", o)
		}
		h, err := e.db.Hold.Get(e.ctx, *o.HoldID)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != hold.StatusActive || h.APIKeyID != e.keyID(t, bot) || !h.ExpiresAt.After(e.clock.now()) {
			t.Fatalf("offer hold %+v, want active for the bot's key", h)
		}
		for _, id := range []string{second.ID, third.ID} {
			if s := e.wlGet(id).Status; s != "waiting" {
				t.Fatalf("entry %s is %s: one start is offered to one entry", id, s)
			}
		}

		notes := e.wlOffers(bot)
		if len(notes) != 1 {
			t.Fatalf("the bot's key has %d slot.available notifications, want 1", len(notes))
		}
		n := notes[0]
		if n.AppointmentID != nil || n.WaitlistEntry.ID != first.ID || n.WaitlistEntry.Status != "offered" ||
			n.Slot != o.Slot || n.Hold == nil || n.Hold.HoldID != *o.HoldID || n.Appointment != nil {
			t.Fatalf("slot.available %+v, want the offer %+v", n, o)
		}
		for _, k := range []string{other, e.keys.APIKey} {
			if got := e.wlOffers(k); len(got) != 0 {
				t.Fatalf("another key was told of the bot's offer: %+v", got)
			}
		}

		t.Run("book with the offer's hold", func(t *testing.T) {
			e := e.apOn(t)
			body := e.apBody(haircut, wlFirst, joao)
			body["hold_id"] = *o.HoldID
			body["client"] = map[string]any{"name": clientName, "phone": "+351910000021"}
			r := e.do("POST", "/appointments", bot, body)
			expect(t, r, http.StatusCreated, "")
			apt := apView(t, r)
			booked := e.wlAwait(first.ID, "booked")
			if booked.AppointmentID == nil || *booked.AppointmentID != apt.ID || booked.Offer == nil {
				t.Fatalf("booked entry %+v, want appointment %s", booked, apt.ID)
			}
		})

		t.Run("leaving an offered entry passes the start on", func(t *testing.T) {
			e := e.apOn(t)
			expect(t, e.do("POST", "/appointments/"+at1730+"/cancel", e.keys.APIKey, map[string]any{"reason": "Moved away"}), http.StatusOK, "")
			got := e.wlAwait(second.ID, "offered")
			if got.Offer == nil || got.Offer.Slot.StartsAt != wlSecond || got.Offer.HoldID == nil {
				t.Fatalf("second entry's offer %+v", got.Offer)
			}
			if s := e.wlGet(third.ID).Status; s != "waiting" {
				t.Fatalf("third entry %s while the second's hold keeps the start", s)
			}
			r := e.do("DELETE", "/waitlist/"+second.ID, other, nil)
			expect(t, r, http.StatusOK, "")
			if s := e.apHoldStatus(*got.Offer.HoldID); s != hold.StatusReleased {
				t.Fatalf("the left entry's hold is %s, want released", s)
			}
			next := e.wlAwait(third.ID, "offered")
			if next.Offer == nil || next.Offer.Slot.StartsAt != wlSecond || next.Offer.HoldID == nil || *next.Offer.HoldID == *got.Offer.HoldID {
				t.Fatalf("third entry's offer %+v", next.Offer)
			}
			if notes := e.wlOffers(other); len(notes) != 1 || notes[0].WaitlistEntry.ID != second.ID {
				t.Fatalf("the other key's offers %+v, want its entry's only", notes)
			}
		})
	})
}
