package rest_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/rest"
)

// holdBody is a hold response.
type holdBody = rest.Hold

// holdRequest is a hold body for a service at Lisbon, with extra key, value
// pairs (such as "barber_id", id or "ttl_seconds", 10).
func holdRequest(e *env, serviceName, startsAt string, kv ...any) map[string]any {
	b := map[string]any{"unit_id": e.unit(lisbon), "service_id": e.service(serviceName), "starts_at": startsAt}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// holdOK posts a hold that must succeed and returns it.
func holdOK(t *testing.T, e *env, body map[string]any) holdBody {
	t.Helper()
	r := call(t, e, "POST", "/slots/hold", e.keys.APIKey, body)
	expect(t, r, http.StatusCreated, "")
	var h holdBody
	r.Decode(t, &h)
	return h
}

// holdConflict posts a hold that must fail with slot_unavailable and
// returns the alternatives offered.
func holdConflict(t *testing.T, e *env, body map[string]any) []slotBody {
	t.Helper()
	r := call(t, e, "POST", "/slots/hold", e.keys.APIKey, body)
	expect(t, r, http.StatusConflict, domain.CodeSlotUnavailable)
	p := problemOf(t, r)
	if len(p.Alternatives) > 3 {
		t.Fatalf("%d alternatives, want at most 3", len(p.Alternatives))
	}
	checkSorted(t, p.Alternatives)
	return p.Alternatives
}

func releasePath(id string) string { return "/slots/hold/" + id + "/release" }

func release(t *testing.T, e *env, id string) holdBody {
	t.Helper()
	r := call(t, e, "POST", releasePath(id), e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	var h holdBody
	r.Decode(t, &h)
	return h
}

func alternativeStarts(alts []slotBody) []string {
	return namesOf(alts, func(s slotBody) string { return s.StartsAt })
}

func TestHoldCreate(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		e.reconfigure(func(c *graph.Settings) { c.Limits.ActiveHoldsPerKey = 0 }) // one key makes more holds here than the cap allows (TestHoldCap)
		lis, hc, jo, mi := e.unit(lisbon), e.service(haircut), e.barber(joao), e.barber(miguel)
		t.Run("without barber an eligible one is assigned", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt10))
			if h.BarberID != jo && h.BarberID != mi {
				t.Fatalf("barber_id %q is not an eligible Lisbon barber", h.BarberID)
			}
			if h.HoldID == "" || h.Status != "active" || h.UnitID != lis || h.ServiceID != hc || h.Timezone != "Europe/Lisbon" {
				t.Errorf("hold: %+v", h)
			}
			if h.StartsAt != tuesdayAt10 || h.EndsAt != "2027-03-02T10:30:00" ||
				h.StartsAtUTC != "2027-03-02T10:00:00Z" || h.EndsAtUTC != "2027-03-02T10:30:00Z" {
				t.Errorf("hold times: %+v", h)
			}
			if h.ExpiresAt != "2027-03-01T06:05:00Z" {
				t.Errorf("expires_at %q, want now + 300s = 2027-03-01T06:05:00Z", h.ExpiresAt)
			}
		})
		t.Run("without barber only one who performs the service", func(t *testing.T) {
			for _, at := range []string{"2027-03-02T13:00:00", "2027-03-02T15:00:00"} {
				if h := holdOK(t, e, holdRequest(e, cutAndBeard, at)); h.BarberID != jo {
					t.Fatalf("haircut and beard held with %s, want João", h.BarberID)
				}
			}
		})
		t.Run("with a barber", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, beardTrim, tuesdayAt11, "barber_id", mi))
			if h.BarberID != mi || h.EndsAt != "2027-03-02T11:45:00" {
				t.Errorf("hold: %+v", h)
			}
		})
		t.Run("ttl bounds", func(t *testing.T) {
			for _, tt := range []struct {
				ttl         int
				at, expires string
			}{
				{10, "2027-03-03T10:00:00", "2027-03-01T06:00:10Z"},
				{1800, "2027-03-03T11:00:00", "2027-03-01T06:30:00Z"},
				{300, "2027-03-03T13:00:00", "2027-03-01T06:05:00Z"},
			} {
				at := tt.at
				h := holdOK(t, e, holdRequest(e, haircut, at, "barber_id", jo, "ttl_seconds", tt.ttl))
				if h.ExpiresAt != tt.expires {
					t.Errorf("ttl %d: expires_at %q, want %q", tt.ttl, h.ExpiresAt, tt.expires)
				}
			}
		})
		for _, ttl := range []any{9, 1801, 0, -300, 1e6, "x", "300", 10.5, true, []int{300}, map[string]any{}} {
			t.Run(fmt.Sprintf("ttl_seconds %v", ttl), func(t *testing.T) {
				expectFields(t, call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, "2027-03-04T10:00:00", "ttl_seconds", ttl)), "ttl_seconds")
			})
		}
		t.Run("null ttl_seconds means the default", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-04T10:00:00", "barber_id", jo, "ttl_seconds", nil))
			if h.ExpiresAt != "2027-03-01T06:05:00Z" {
				t.Errorf("expires_at %q", h.ExpiresAt)
			}
		})
		t.Run("São Paulo times", func(t *testing.T) {
			body := map[string]any{"unit_id": e.unit(saoPaulo), "service_id": e.service(corte), "starts_at": tuesdayAt10, "barber_id": e.barber(rafael)}
			h := holdOK(t, e, body)
			if h.Timezone != "America/Sao_Paulo" || h.StartsAt != tuesdayAt10 || h.StartsAtUTC != "2027-03-02T13:00:00Z" ||
				h.EndsAt != "2027-03-02T10:30:00" || h.EndsAtUTC != "2027-03-02T13:30:00Z" {
				t.Errorf("hold: %+v", h)
			}
		})
		t.Run("Lisbon summer time", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-29T09:00:00", "barber_id", jo))
			if h.StartsAtUTC != "2027-03-29T08:00:00Z" || h.StartsAt != "2027-03-29T09:00:00" {
				t.Errorf("hold: %+v", h)
			}
		})
		t.Run("last day of the horizon", func(t *testing.T) {
			holdOK(t, e, holdRequest(e, haircut, "2028-02-29T18:30:00", "barber_id", jo))
		})
	})
}

func TestHoldRejected(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		post := func(t *testing.T, body any) *response {
			t.Helper()
			return call(t, e, "POST", "/slots/hold", k, body)
		}
		t.Run("missing fields", func(t *testing.T) {
			expectFields(t, post(t, map[string]any{}), "unit_id", "service_id", "starts_at")
			expectFields(t, post(t, map[string]any{"unit_id": e.unit(lisbon)}), "service_id", "starts_at")
			expectFields(t, post(t, map[string]any{"unit_id": "", "service_id": e.service(haircut), "starts_at": tuesdayAt10}), "unit_id")
		})
		t.Run("empty barber_id", func(t *testing.T) {
			expectFields(t, post(t, holdRequest(e, haircut, tuesdayAt10, "barber_id", "")), "barber_id")
		})
		for _, at := range []string{
			"2027-03-02T10:00:00+00:00", "2027-03-02T10:00:00Z", "2027-03-02T10:00:00.000", "2027-03-02T10:00:00.5",
			"2027-03-02", "2027-03-02T10:00", "2027-03-02 10:00:00", "2027-02-30T10:00:00", "2027-03-02T24:00:00",
			"10:00:00", "2027-03-02T10:00:00-03:00",
		} {
			t.Run("starts_at "+at, func(t *testing.T) {
				expectFields(t, post(t, holdRequest(e, haircut, at)), "starts_at")
			})
		}
		t.Run("every bad field at once", func(t *testing.T) {
			expectFields(t, post(t, map[string]any{"service_id": e.service(haircut), "starts_at": "2027-03-02T10:00:00Z", "ttl_seconds": 5}),
				"unit_id", "starts_at", "ttl_seconds")
		})
		notFound := []struct {
			name string
			body map[string]any
			code string
		}{
			{"unknown unit", map[string]any{"unit_id": "nope", "service_id": e.service(haircut), "starts_at": tuesdayAt10}, domain.CodeUnitNotFound},
			{"unknown service", holdRequest(e, haircut, tuesdayAt10, "service_id", "nope"), domain.CodeServiceNotFound},
			{"unknown barber", holdRequest(e, haircut, tuesdayAt10, "barber_id", "nope"), domain.CodeBarberNotFound},
		}
		for _, tt := range notFound {
			t.Run(tt.name, func(t *testing.T) { expect(t, post(t, tt.body), http.StatusNotFound, tt.code) })
		}
		t.Run("ids of another account", func(t *testing.T) {
			f := foreign(t, e)
			expect(t, post(t, map[string]any{"unit_id": f.unit, "service_id": e.service(haircut), "starts_at": tuesdayAt10}), http.StatusNotFound, domain.CodeUnitNotFound)
			expect(t, post(t, holdRequest(e, haircut, tuesdayAt10, "service_id", f.service)), http.StatusNotFound, domain.CodeServiceNotFound)
			expect(t, post(t, holdRequest(e, haircut, tuesdayAt10, "barber_id", f.barberID)), http.StatusNotFound, domain.CodeBarberNotFound)
		})
		unprocessable := []struct {
			name string
			body map[string]any
			code string
		}{
			{"barber does not perform the service", holdRequest(e, cutAndBeard, tuesdayAt10, "barber_id", e.barber(miguel)), domain.CodeBarberNotEligible},
			{"inactive barber", holdRequest(e, haircut, tuesdayAt10, "barber_id", e.barber(pedro)), domain.CodeBarberNotEligible},
			{"barber of another unit", holdRequest(e, haircut, tuesdayAt10, "barber_id", e.barber(rafael)), domain.CodeBarberNotEligible},
			{"inactive service", holdRequest(e, hotTowel, tuesdayAt10), domain.CodeServiceNotBookable},
			{"service not bookable online", holdRequest(e, wedding, tuesdayAt10), domain.CodeServiceNotBookable},
			// Lisbon springs forward at 01:00 on 2027-03-28, straight to 02:00.
			{"nonexistent local time", holdRequest(e, haircut, "2027-03-28T01:30:00"), domain.CodeInvalidLocalTime},
			{"nonexistent local time, first second", holdRequest(e, haircut, "2027-03-28T01:00:00"), domain.CodeInvalidLocalTime},
			{"nonexistent local time, last second", holdRequest(e, haircut, "2027-03-28T01:59:59", "barber_id", e.barber(joao)), domain.CodeInvalidLocalTime},
			{"past day", holdRequest(e, haircut, "2027-02-26T10:00:00"), domain.CodeOutsideWindow},
			{"earlier today", holdRequest(e, haircut, "2027-03-01T05:45:00"), domain.CodeOutsideWindow},
			{"within the lead time", holdRequest(e, haircut, "2027-03-01T06:45:00"), domain.CodeOutsideWindow},
			{"beyond the horizon", holdRequest(e, haircut, "2028-03-01T10:00:00"), domain.CodeOutsideWindow},
			{"far beyond the horizon", holdRequest(e, haircut, "2031-03-04T10:00:00"), domain.CodeOutsideWindow},
		}
		for _, tt := range unprocessable {
			t.Run(tt.name, func(t *testing.T) { expect(t, post(t, tt.body), http.StatusUnprocessableEntity, tt.code) })
		}
		jo := e.barber(joao)
		t.Run("off the grid", func(t *testing.T) {
			alts := holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T10:07:00", "barber_id", jo))
			want := []string{"2027-03-02T09:45:00", tuesdayAt10, "2027-03-02T10:15:00"}
			if got := alternativeStarts(alts); !slices.Equal(got, want) {
				t.Errorf("alternatives %v, want %v", got, want)
			}
			for _, a := range alts {
				if a.BarberID != jo {
					t.Errorf("alternative with another barber: %+v", a)
				}
			}
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T10:00:30", "barber_id", jo))
		})
		t.Run("outside working hours", func(t *testing.T) {
			alts := holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T20:00:00"))
			want := []string{"2027-03-02T18:15:00", "2027-03-02T18:30:00", "2027-03-02T18:30:00"}
			if got := alternativeStarts(alts); !slices.Equal(got, want) {
				t.Errorf("alternatives %v, want %v", got, want)
			}
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T08:45:00", "barber_id", jo))
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T12:00:00", "barber_id", jo)) // break
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T11:45:00", "barber_id", jo)) // ends in the break
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T18:45:00", "barber_id", jo)) // ends after closing
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-06T14:00:00", "barber_id", jo)) // Saturday after 14:00
		})
		t.Run("closed day", func(t *testing.T) {
			if alts := holdConflict(t, e, holdRequest(e, haircut, "2027-03-07T10:00:00")); len(alts) != 0 {
				t.Errorf("alternatives on a closed day: %+v", alts)
			}
		})
		t.Run("nothing was held", func(t *testing.T) {
			if n := e.db.Hold.Query().CountX(e.ctx); n != 0 {
				t.Errorf("%d holds after only refusals", n)
			}
		})
	})
}

func TestHoldLeadTime(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		// Monday 09:30 in Lisbon: bookings must start at 10:30 or later.
		e.clock.advance(3*time.Hour + 30*time.Minute)
		for _, at := range []string{"2027-03-01T09:00:00", "2027-03-01T10:00:00", "2027-03-01T10:15:00"} {
			t.Run("refused "+at, func(t *testing.T) {
				expect(t, call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, at)), http.StatusUnprocessableEntity, domain.CodeOutsideWindow)
			})
		}
		t.Run("accepted at exactly the lead time", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-01T10:30:00"))
			if h.ExpiresAt != "2027-03-01T09:35:00Z" {
				t.Errorf("expires_at %q, want 2027-03-01T09:35:00Z", h.ExpiresAt)
			}
		})
	})
}

func TestHoldConflicts(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo, mi := e.barber(joao), e.barber(miguel)
		t.Run("same barber and time", func(t *testing.T) {
			holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			alts := holdConflict(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			// João is busy 10:00-10:30, so 09:45 and 10:15 are gone too; the
			// nearest free starts are 09:30 and 10:30, then 09:15 (ties go
			// to the earlier time).
			want := []string{"2027-03-02T09:15:00", "2027-03-02T09:30:00", "2027-03-02T10:30:00"}
			if got := alternativeStarts(alts); !slices.Equal(got, want) {
				t.Errorf("alternatives %v, want %v", got, want)
			}
			for _, a := range alts {
				if a.BarberID != jo {
					t.Errorf("alternative with another barber: %+v", a)
				}
				if a.EndsAtUTC == "" || a.StartsAtUTC == "" || a.EndsAt == "" {
					t.Errorf("alternative is not a full slot: %+v", a)
				}
			}
		})
		t.Run("overlapping time", func(t *testing.T) {
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T10:15:00", "barber_id", jo))
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-02T09:45:00", "barber_id", jo))
			holdConflict(t, e, holdRequest(e, cutAndBeard, "2027-03-02T09:30:00", "barber_id", jo))
			holdOK(t, e, holdRequest(e, haircut, "2027-03-02T10:30:00", "barber_id", jo)) // back to back
		})
		t.Run("without barber the other one is taken", func(t *testing.T) {
			if h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt10)); h.BarberID != mi {
				t.Errorf("held with %s, want Miguel (João is held)", h.BarberID)
			}
			holdConflict(t, e, holdRequest(e, haircut, tuesdayAt10))
		})
		t.Run("without barber two holds then none", func(t *testing.T) {
			at := "2027-03-02T15:00:00"
			a := holdOK(t, e, holdRequest(e, haircut, at))
			b := holdOK(t, e, holdRequest(e, haircut, at))
			if a.BarberID == b.BarberID || !sameSet([]string{a.BarberID, b.BarberID}, []string{jo, mi}) {
				t.Fatalf("holds with %s and %s, want João and Miguel", a.BarberID, b.BarberID)
			}
			alts := holdConflict(t, e, holdRequest(e, haircut, at))
			want := []string{"2027-03-02T14:30:00", "2027-03-02T14:30:00", "2027-03-02T15:30:00"}
			if got := alternativeStarts(alts); !slices.Equal(got, want) {
				t.Errorf("alternatives %v, want %v", got, want)
			}
			if len(alts) == 3 && alts[0].BarberID == alts[1].BarberID {
				t.Errorf("14:30 offered twice with one barber: %+v", alts)
			}
		})
		t.Run("an appointment blocks holds", func(t *testing.T) {
			body := e.booking(haircut, tuesdayAt11)
			body["barber_id"] = mi
			expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusCreated, "")
			holdConflict(t, e, holdRequest(e, haircut, tuesdayAt11, "barber_id", mi))
			if h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt11)); h.BarberID != jo {
				t.Errorf("held with %s, want João", h.BarberID)
			}
		})
		t.Run("a hold of another account does not block", func(t *testing.T) {
			f := foreign(t, e)
			r := call(t, e, "POST", "/slots/hold", f.keys.APIKey, map[string]any{"unit_id": f.unit, "service_id": f.service, "starts_at": "2027-03-02T17:00:00", "barber_id": f.barberID})
			expect(t, r, http.StatusCreated, "")
			holdOK(t, e, holdRequest(e, haircut, "2027-03-02T17:00:00", "barber_id", jo))
		})
	})
}

func TestHoldRelease(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo := e.barber(joao)
		t.Run("release frees the slot", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			r := release(t, e, h.HoldID)
			if r.Status != "released" || r.HoldID != h.HoldID || r.BarberID != jo || r.StartsAt != tuesdayAt10 || r.ExpiresAt != h.ExpiresAt {
				t.Errorf("released hold: %+v", r)
			}
			if !slices.Contains(startsOf(availableAt(t, e, haircut, tuesday, "barber_id", jo).Slots, jo), tuesdayAt10) {
				t.Errorf("10:00 not offered after release")
			}
			t.Run("again", func(t *testing.T) {
				if r := release(t, e, h.HoldID); r.Status != "released" {
					t.Errorf("status %q", r.Status)
				}
			})
			t.Run("another hold takes the slot", func(t *testing.T) {
				holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			})
			t.Run("a released hold cannot be booked", func(t *testing.T) {
				body := e.booking(haircut, tuesdayAt10)
				body["hold_id"] = h.HoldID
				expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusConflict, domain.CodeHoldExpired)
			})
		})
		t.Run("with an empty JSON body", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt11, "barber_id", jo))
			r := call(t, e, "POST", releasePath(h.HoldID), e.keys.APIKey, map[string]any{})
			expect(t, r, http.StatusOK, "")
		})
		t.Run("consumed", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-02T13:00:00"))
			body := e.booking(haircut, "2027-03-02T13:00:00")
			body["hold_id"] = h.HoldID
			expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusCreated, "")
			expect(t, call(t, e, "POST", releasePath(h.HoldID), e.keys.APIKey, nil), http.StatusConflict, domain.CodeHoldAlreadyUsed)
		})
		t.Run("expired", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-02T14:00:00", "barber_id", jo, "ttl_seconds", 10))
			e.clock.advance(10 * time.Second)
			expect(t, call(t, e, "POST", releasePath(h.HoldID), e.keys.APIKey, nil), http.StatusConflict, domain.CodeHoldExpired)
		})
		t.Run("unknown", func(t *testing.T) {
			expect(t, call(t, e, "POST", releasePath("nope"), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeHoldNotFound)
		})
		t.Run("of another account", func(t *testing.T) {
			f := foreign(t, e)
			r := call(t, e, "POST", "/slots/hold", f.keys.APIKey, map[string]any{"unit_id": f.unit, "service_id": f.service, "starts_at": "2027-03-02T16:00:00"})
			expect(t, r, http.StatusCreated, "")
			var h holdBody
			r.Decode(t, &h)
			expect(t, call(t, e, "POST", releasePath(h.HoldID), e.keys.APIKey, nil), http.StatusNotFound, domain.CodeHoldNotFound)
			// Untouched: its owner can still release it.
			r = call(t, e, "POST", releasePath(h.HoldID), f.keys.APIKey, nil)
			expect(t, r, http.StatusOK, "")
		})
		t.Run("another key of the same account", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-02T17:00:00"))
			r := call(t, e, "POST", releasePath(h.HoldID), e.key(domain.ScopeHoldsWrite), nil)
			expect(t, r, http.StatusOK, "")
		})
	})
}

func TestHoldExpiry(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo := e.barber(joao)
		h := holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo, "ttl_seconds", 10))
		t.Run("blocks until it expires", func(t *testing.T) {
			holdConflict(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			e.clock.advance(9 * time.Second)
			holdConflict(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
		})
		t.Run("then another hold takes the slot at once", func(t *testing.T) {
			e.clock.advance(time.Second)
			n := holdOK(t, e, holdRequest(e, haircut, tuesdayAt10, "barber_id", jo))
			if n.HoldID == h.HoldID || n.Status != "active" {
				t.Errorf("new hold: %+v", n)
			}
		})
		t.Run("the expired hold stays expired", func(t *testing.T) {
			expect(t, call(t, e, "POST", releasePath(h.HoldID), e.keys.APIKey, nil), http.StatusConflict, domain.CodeHoldExpired)
			body := e.booking(haircut, tuesdayAt10)
			body["hold_id"] = h.HoldID
			expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusConflict, domain.CodeHoldExpired)
		})
		t.Run("without barber an expired hold's barber is free again", func(t *testing.T) {
			at := "2027-03-02T15:00:00"
			holdOK(t, e, holdRequest(e, haircut, at, "ttl_seconds", 10))
			holdOK(t, e, holdRequest(e, haircut, at, "ttl_seconds", 10))
			holdConflict(t, e, holdRequest(e, haircut, at))
			e.clock.advance(10 * time.Second)
			holdOK(t, e, holdRequest(e, haircut, at))
			holdOK(t, e, holdRequest(e, haircut, at))
		})
	})
}
