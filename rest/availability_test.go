package rest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"barberd/graph/domain"
	"barberd/rest"
)

// slotBody is a slot of an availability answer or of a problem's alternatives.
type slotBody = rest.Slot

// availabilityBody is an availability response.
type availabilityBody = rest.Availability

// availabilityPath is the availability query of a service at a unit on a
// day, with extra key, value pairs (such as "barber_id", id).
func availabilityPath(unitID, serviceID, date string, kv ...string) string {
	return query("/availability", append([]string{"unit_id", unitID, "service_id", serviceID, "date", date}, kv...)...)
}

// availableAt asks for the free slots of a service at Lisbon on a day.
func availableAt(t *testing.T, e *env, serviceName, date string, kv ...string) availabilityBody {
	t.Helper()
	return availableIn(t, e, e.unit(lisbon), e.service(serviceName), date, kv...)
}

func availableIn(t *testing.T, e *env, unitID, serviceID, date string, kv ...string) availabilityBody {
	t.Helper()
	r := call(t, e, "GET", availabilityPath(unitID, serviceID, date, kv...), e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	var a availabilityBody
	r.Decode(t, &a)
	if a.Slots == nil {
		t.Fatalf("slots is not a list: %s", r.Body)
	}
	return a
}

// startsOf lists the local starts of a barber's slots, in order.
func startsOf(slots []slotBody, barberID string) []string {
	var out []string
	for _, s := range slots {
		if s.BarberID == barberID {
			out = append(out, s.StartsAt)
		}
	}
	return out
}

// grid lists the local starts, every 15 minutes from "from", of a service of
// the given minutes that ends by "to", on date.
func grid(date, from, to string, minutes int) []string {
	f, _ := time.Parse("15:04", from)
	u, _ := time.Parse("15:04", to)
	var out []string
	for s := f; !s.Add(time.Duration(minutes) * time.Minute).After(u); s = s.Add(15 * time.Minute) {
		out = append(out, date+"T"+s.Format("15:04:05"))
	}
	return out
}

// weekday is the demo barbers' Monday to Friday grid for a service.
func weekday(date string, minutes int) []string {
	return append(grid(date, "09:00", "12:00", minutes), grid(date, "13:00", "19:00", minutes)...)
}

func wantStarts(t *testing.T, who string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %d slots %v\nwant %d slots %v", who, len(got), got, len(want), want)
	}
}

// checkSlotTimes checks that each slot's UTC instants are its local times at
// the given UTC offset, and that it lasts the service's minutes.
func checkSlotTimes(t *testing.T, slots []slotBody, offset time.Duration, minutes int) {
	t.Helper()
	for _, s := range slots {
		start, err1 := time.Parse("2006-01-02T15:04:05", s.StartsAt)
		end, err2 := time.Parse("2006-01-02T15:04:05", s.EndsAt)
		startUTC, err3 := time.Parse(time.RFC3339, s.StartsAtUTC)
		endUTC, err4 := time.Parse(time.RFC3339, s.EndsAtUTC)
		if err := cmpErr(err1, err2, err3, err4); err != nil {
			t.Fatalf("slot %+v: %v", s, err)
		}
		if !strings.HasSuffix(s.StartsAtUTC, "Z") || !strings.HasSuffix(s.EndsAtUTC, "Z") {
			t.Errorf("slot %+v: UTC times must end in Z", s)
		}
		if got := start.Sub(startUTC); got != offset {
			t.Errorf("slot %+v: local - UTC = %v, want %v", s, got, offset)
		}
		if got := end.Sub(endUTC); got != offset {
			t.Errorf("slot %+v: local end - UTC end = %v, want %v", s, got, offset)
		}
		if got := endUTC.Sub(startUTC); got != time.Duration(minutes)*time.Minute {
			t.Errorf("slot %+v lasts %v, want %d minutes", s, got, minutes)
		}
	}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkSorted checks that slots are sorted by time, then barber.
func checkSorted(t *testing.T, slots []slotBody) {
	t.Helper()
	sorted := slices.IsSortedFunc(slots, func(a, b slotBody) int {
		if c := strings.Compare(a.StartsAtUTC, b.StartsAtUTC); c != 0 {
			return c
		}
		return strings.Compare(a.BarberID, b.BarberID)
	})
	if !sorted {
		t.Errorf("slots are not sorted by time, then barber: %+v", slots)
	}
	for i := 1; i < len(slots); i++ {
		if slots[i] == slots[i-1] {
			t.Errorf("slot listed twice: %+v", slots[i])
		}
	}
}

func TestAvailabilityDemoDays(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		lis, hc, jo, mi := e.unit(lisbon), e.service(haircut), e.barber(joao), e.barber(miguel)
		t.Run("Tuesday haircut, every eligible barber", func(t *testing.T) {
			a := availableAt(t, e, haircut, tuesday)
			if a.UnitID != lis || a.ServiceID != hc || a.BarberID != nil || a.Date != tuesday || a.Timezone != "Europe/Lisbon" {
				t.Errorf("header fields: %+v", a)
			}
			// 09:00..11:30 (11 starts) and 13:00..18:30 (23 starts) each.
			want := weekday(tuesday, 30)
			if len(want) != 34 || want[0] != "2027-03-02T09:00:00" || want[10] != "2027-03-02T11:30:00" ||
				want[11] != "2027-03-02T13:00:00" || want[33] != "2027-03-02T18:30:00" {
				t.Fatalf("test grid is wrong: %v", want)
			}
			if len(a.Slots) != 68 {
				t.Errorf("%d slots, want 68 (34 for each of 2 barbers)", len(a.Slots))
			}
			wantStarts(t, joao, startsOf(a.Slots, jo), want)
			wantStarts(t, miguel, startsOf(a.Slots, mi), want)
			checkSorted(t, a.Slots)
			for i := 0; i+1 < len(a.Slots); i += 2 {
				if a.Slots[i].StartsAt != a.Slots[i+1].StartsAt || a.Slots[i].BarberID == a.Slots[i+1].BarberID {
					t.Fatalf("slots %d and %d are not both barbers at one time: %+v %+v", i, i+1, a.Slots[i], a.Slots[i+1])
				}
			}
			if s := a.Slots[0]; s.EndsAt != "2027-03-02T09:30:00" || s.StartsAtUTC != "2027-03-02T09:00:00Z" || s.EndsAtUTC != "2027-03-02T09:30:00Z" {
				t.Errorf("first slot %+v", s)
			}
			checkSlotTimes(t, a.Slots, 0, 30) // Lisbon is on UTC+0 until 2027-03-28
		})
		t.Run("one barber", func(t *testing.T) {
			a := availableAt(t, e, haircut, tuesday, "barber_id", mi)
			if a.BarberID == nil || *a.BarberID != mi {
				t.Errorf("barber_id = %v, want %s", a.BarberID, mi)
			}
			if len(a.Slots) != 34 {
				t.Errorf("%d slots, want 34", len(a.Slots))
			}
			wantStarts(t, miguel, startsOf(a.Slots, mi), weekday(tuesday, 30))
		})
		t.Run("60-minute service only with the barber who performs it", func(t *testing.T) {
			a := availableAt(t, e, cutAndBeard, tuesday)
			wantStarts(t, joao, startsOf(a.Slots, jo), weekday(tuesday, 60))
			if len(a.Slots) != 30 {
				t.Errorf("%d slots, want 30 (09:00..11:00 and 13:00..18:00)", len(a.Slots))
			}
			checkSlotTimes(t, a.Slots, 0, 60)
		})
		t.Run("45-minute service", func(t *testing.T) {
			a := availableAt(t, e, beardTrim, tuesday, "barber_id", jo)
			wantStarts(t, joao, startsOf(a.Slots, jo), weekday(tuesday, 45))
			if n := len(a.Slots); n != 10+22 {
				t.Errorf("%d slots, want 32 (09:00..11:15 and 13:00..18:15)", n)
			}
		})
		t.Run("Saturday 09:00-14:00", func(t *testing.T) {
			sat := "2027-03-06"
			a := availableAt(t, e, haircut, sat)
			want := grid(sat, "09:00", "14:00", 30)
			if len(want) != 19 || want[18] != sat+"T13:30:00" {
				t.Fatalf("test grid is wrong: %v", want)
			}
			wantStarts(t, joao, startsOf(a.Slots, jo), want)
			wantStarts(t, miguel, startsOf(a.Slots, mi), want)
			if len(a.Slots) != 38 {
				t.Errorf("%d slots, want 38", len(a.Slots))
			}
		})
		t.Run("Sunday closed", func(t *testing.T) {
			if a := availableAt(t, e, haircut, "2027-03-07"); len(a.Slots) != 0 || a.Date != "2027-03-07" {
				t.Errorf("Sunday: %+v", a)
			}
		})
		t.Run("past day", func(t *testing.T) {
			if a := availableAt(t, e, haircut, "2027-02-26"); len(a.Slots) != 0 {
				t.Errorf("last Friday has %d slots", len(a.Slots))
			}
			if a := availableAt(t, e, haircut, "2026-03-02"); len(a.Slots) != 0 {
				t.Errorf("a year ago has %d slots", len(a.Slots))
			}
		})
		t.Run("today, before opening", func(t *testing.T) {
			// 06:00 in Lisbon: the lead time ends at 07:00, before the shop opens.
			a := availableAt(t, e, haircut, "2027-03-01")
			wantStarts(t, joao, startsOf(a.Slots, jo), weekday("2027-03-01", 30))
		})
		t.Run("last day of the horizon", func(t *testing.T) {
			// 2027-03-01 + 365 days = Tuesday 2028-02-29 (2028 is a leap year).
			a := availableAt(t, e, haircut, "2028-02-29")
			if len(a.Slots) != 68 {
				t.Errorf("%d slots on the horizon's last day, want 68", len(a.Slots))
			}
		})
		t.Run("beyond the horizon", func(t *testing.T) {
			for _, d := range []string{"2028-03-01", "2028-03-02", "2030-01-08"} {
				if a := availableAt(t, e, haircut, d); len(a.Slots) != 0 {
					t.Errorf("%s: %d slots beyond the horizon", d, len(a.Slots))
				}
			}
		})
	})
}

func TestAvailabilityLeadTime(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo, mi := e.barber(joao), e.barber(miguel)
		monday := "2027-03-01"
		// Monday 09:30 in Lisbon (UTC+0): the earliest start is 10:30.
		e.clock.advance(3*time.Hour + 30*time.Minute)
		t.Run("slots before now plus 60 minutes are gone", func(t *testing.T) {
			a := availableAt(t, e, haircut, monday)
			want := append(grid(monday, "10:30", "12:00", 30), grid(monday, "13:00", "19:00", 30)...)
			if want[0] != monday+"T10:30:00" || len(want) != 28 {
				t.Fatalf("test grid is wrong: %v", want)
			}
			wantStarts(t, joao, startsOf(a.Slots, jo), want)
			wantStarts(t, miguel, startsOf(a.Slots, mi), want)
		})
		t.Run("tomorrow is untouched", func(t *testing.T) {
			if a := availableAt(t, e, haircut, tuesday); len(a.Slots) != 68 {
				t.Errorf("%d slots on Tuesday, want 68", len(a.Slots))
			}
		})
		t.Run("one minute later the first slot goes", func(t *testing.T) {
			e.clock.advance(time.Minute)
			a := availableAt(t, e, haircut, monday, "barber_id", jo)
			if len(a.Slots) == 0 || a.Slots[0].StartsAt != monday+"T10:45:00" {
				t.Fatalf("first slot %+v, want 10:45", a.Slots[:1])
			}
		})
		t.Run("after closing today has no slots", func(t *testing.T) {
			e.clock.advance(9 * time.Hour) // 18:31 Lisbon
			if a := availableAt(t, e, haircut, monday); len(a.Slots) != 0 {
				t.Errorf("%d slots after closing: %+v", len(a.Slots), a.Slots)
			}
		})
	})
}

func TestAvailabilityTimeZones(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		t.Run("São Paulo is UTC-3", func(t *testing.T) {
			sp, corteID := e.unit(saoPaulo), e.service(corte)
			a := availableIn(t, e, sp, corteID, tuesday, "barber_id", e.barber(rafael))
			if a.Timezone != "America/Sao_Paulo" || a.Date != tuesday {
				t.Errorf("timezone %q date %q", a.Timezone, a.Date)
			}
			wantStarts(t, rafael, startsOf(a.Slots, e.barber(rafael)), weekday(tuesday, 30))
			checkSlotTimes(t, a.Slots, -3*time.Hour, 30)
			first, last := a.Slots[0], a.Slots[len(a.Slots)-1]
			if first.StartsAt != "2027-03-02T09:00:00" || first.StartsAtUTC != "2027-03-02T12:00:00Z" ||
				first.EndsAt != "2027-03-02T09:30:00" || first.EndsAtUTC != "2027-03-02T12:30:00Z" {
				t.Errorf("first slot %+v", first)
			}
			if last.StartsAt != "2027-03-02T18:30:00" || last.StartsAtUTC != "2027-03-02T21:30:00Z" || last.EndsAtUTC != "2027-03-02T22:00:00Z" {
				t.Errorf("last slot %+v", last)
			}
		})
		t.Run("São Paulo, both barbers", func(t *testing.T) {
			a := availableIn(t, e, e.unit(saoPaulo), e.service(corte), tuesday)
			if len(a.Slots) != 68 {
				t.Errorf("%d slots, want 68", len(a.Slots))
			}
			checkSorted(t, a.Slots)
		})
		t.Run("São Paulo today at 03:00 local", func(t *testing.T) {
			// The clock is 06:00 UTC = 03:00 in São Paulo; the whole day is open.
			a := availableIn(t, e, e.unit(saoPaulo), e.service(corte), "2027-03-01", "barber_id", e.barber(rafael))
			wantStarts(t, rafael, startsOf(a.Slots, e.barber(rafael)), weekday("2027-03-01", 30))
		})
		t.Run("Lisbon on summer time is UTC+1", func(t *testing.T) {
			a := availableAt(t, e, haircut, "2027-03-29", "barber_id", e.barber(joao))
			wantStarts(t, joao, startsOf(a.Slots, e.barber(joao)), weekday("2027-03-29", 30))
			checkSlotTimes(t, a.Slots, time.Hour, 30)
			if a.Slots[0].StartsAtUTC != "2027-03-29T08:00:00Z" {
				t.Errorf("first slot %+v, want 08:00Z", a.Slots[0])
			}
		})
		t.Run("each unit's own today decides past days and the horizon", func(t *testing.T) {
			// 2027-03-02 01:00 UTC: already Tuesday in Lisbon, still Monday
			// 22:00 in São Paulo.
			e.clock.advance(19 * time.Hour)
			sp, corteID := e.unit(saoPaulo), e.service(corte)
			if n := len(availableAt(t, e, haircut, "2027-03-01").Slots); n != 0 {
				t.Errorf("Lisbon yesterday: %d slots", n)
			}
			if n := len(availableIn(t, e, sp, corteID, "2027-03-01").Slots); n != 0 {
				t.Errorf("São Paulo after closing: %d slots", n)
			}
			if n := len(availableIn(t, e, sp, corteID, tuesday).Slots); n != 68 {
				t.Errorf("São Paulo tomorrow: %d slots, want 68", n)
			}
			if n := len(availableAt(t, e, haircut, "2028-03-01").Slots); n != 68 {
				t.Errorf("Lisbon's last horizon day 2028-03-01: %d slots, want 68", n)
			}
			if n := len(availableIn(t, e, sp, corteID, "2028-03-01").Slots); n != 0 {
				t.Errorf("São Paulo 2028-03-01 is beyond its horizon, yet has %d slots", n)
			}
			if n := len(availableIn(t, e, sp, corteID, "2028-02-29").Slots); n != 68 {
				t.Errorf("São Paulo's last horizon day 2028-02-29: %d slots, want 68", n)
			}
			body := map[string]any{"unit_id": sp, "service_id": corteID, "starts_at": "2028-03-01T10:00:00"}
			expect(t, call(t, e, "POST", "/slots/hold", e.keys.APIKey, body), http.StatusUnprocessableEntity, domain.CodeOutsideWindow)
			holdOK(t, e, holdRequest(e, haircut, "2028-03-01T10:00:00"))
		})
		t.Run("Lisbon's spring-forward Sunday is closed", func(t *testing.T) {
			if a := availableAt(t, e, haircut, "2027-03-28"); len(a.Slots) != 0 {
				t.Errorf("%d slots", len(a.Slots))
			}
		})
	})
}

func TestAvailabilityErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		k := e.keys.APIKey
		lis, hc := e.unit(lisbon), e.service(haircut)
		t.Run("missing parameters are each named", func(t *testing.T) {
			expectFields(t, call(t, e, "GET", "/availability", k, nil), "unit_id", "service_id", "date")
			expectFields(t, call(t, e, "GET", query("/availability", "unit_id", lis), k, nil), "service_id", "date")
			expectFields(t, call(t, e, "GET", query("/availability", "unit_id", lis, "service_id", hc), k, nil), "date")
			expectFields(t, call(t, e, "GET", query("/availability", "service_id", hc, "date", tuesday), k, nil), "unit_id")
			expectFields(t, call(t, e, "GET", query("/availability", "unit_id", "", "service_id", " ", "date", tuesday), k, nil), "unit_id", "service_id")
		})
		for _, d := range []string{"2027-3-2", "02/03/2027", "2027-02-30", "2027-03-02T10:00:00", "tomorrow", "2027-13-01"} {
			t.Run("malformed date "+d, func(t *testing.T) {
				expectFields(t, call(t, e, "GET", availabilityPath(lis, hc, d), k, nil), "date")
			})
		}
		t.Run("malformed date and missing service", func(t *testing.T) {
			expectFields(t, call(t, e, "GET", query("/availability", "unit_id", lis, "date", "2027-3-2"), k, nil), "service_id", "date")
		})
		t.Run("empty barber_id", func(t *testing.T) {
			expectFields(t, call(t, e, "GET", availabilityPath(lis, hc, tuesday, "barber_id", ""), k, nil), "barber_id")
		})
		notFound := []struct {
			name, unit, service, barber, code string
		}{
			{"unknown unit", "nope", hc, "", domain.CodeUnitNotFound},
			{"unknown service", lis, "nope", "", domain.CodeServiceNotFound},
			{"unknown barber", lis, hc, "nope", domain.CodeBarberNotFound},
		}
		for _, tt := range notFound {
			t.Run(tt.name, func(t *testing.T) {
				var kv []string
				if tt.barber != "" {
					kv = []string{"barber_id", tt.barber}
				}
				expect(t, call(t, e, "GET", availabilityPath(tt.unit, tt.service, tuesday, kv...), k, nil), http.StatusNotFound, tt.code)
			})
		}
		t.Run("ids of another account", func(t *testing.T) {
			f := foreign(t, e)
			expect(t, call(t, e, "GET", availabilityPath(f.unit, hc, tuesday), k, nil), http.StatusNotFound, domain.CodeUnitNotFound)
			expect(t, call(t, e, "GET", availabilityPath(lis, f.service, tuesday), k, nil), http.StatusNotFound, domain.CodeServiceNotFound)
			expect(t, call(t, e, "GET", availabilityPath(lis, hc, tuesday, "barber_id", f.barberID), k, nil), http.StatusNotFound, domain.CodeBarberNotFound)
		})
		unprocessable := []struct {
			name, unit, service, barber, code string
		}{
			{"barber does not perform the service", lisbon, cutAndBeard, miguel, domain.CodeBarberNotEligible},
			{"inactive barber", lisbon, haircut, pedro, domain.CodeBarberNotEligible},
			{"barber of another unit", lisbon, haircut, rafael, domain.CodeBarberNotEligible},
			{"inactive service", lisbon, hotTowel, "", domain.CodeServiceNotBookable},
			{"service not bookable online", lisbon, wedding, "", domain.CodeServiceNotBookable},
			{"inactive service with a barber", lisbon, hotTowel, joao, domain.CodeServiceNotBookable},
			{"service of another unit", lisbon, corte, "", domain.CodeServiceNotBookable},
		}
		for _, tt := range unprocessable {
			t.Run(tt.name, func(t *testing.T) {
				var kv []string
				if tt.barber != "" {
					kv = []string{"barber_id", e.barber(tt.barber)}
				}
				r := call(t, e, "GET", availabilityPath(e.unit(tt.unit), e.service(tt.service), tuesday, kv...), k, nil)
				expect(t, r, http.StatusUnprocessableEntity, tt.code)
			})
		}
		t.Run("a barber deactivated now", func(t *testing.T) {
			mi := e.barber(miguel)
			e.db.Barber.UpdateOneID(mi).SetActive(false).ExecX(e.ctx)
			e.wroteSQL()
			expect(t, call(t, e, "GET", availabilityPath(lis, hc, tuesday, "barber_id", mi), k, nil), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)
			a := availableAt(t, e, haircut, tuesday)
			if n := len(startsOf(a.Slots, mi)); n != 0 || len(a.Slots) != 34 {
				t.Errorf("inactive barber still offered: %d of %d slots", n, len(a.Slots))
			}
		})
		t.Run("a service made unbookable now", func(t *testing.T) {
			e.db.Service.UpdateOneID(e.service(beardTrim)).SetBookableOnline(false).ExecX(e.ctx)
			e.wroteSQL()
			expect(t, call(t, e, "GET", availabilityPath(lis, e.service(beardTrim), tuesday), k, nil), http.StatusUnprocessableEntity, domain.CodeServiceNotBookable)
		})
		t.Run("a deactivated unit", func(t *testing.T) {
			sp := e.unit(saoPaulo)
			e.db.Unit.UpdateOneID(sp).SetActive(false).ExecX(e.ctx)
			e.wroteSQL()
			expect(t, call(t, e, "GET", availabilityPath(sp, e.service(corte), tuesday), k, nil), http.StatusNotFound, domain.CodeUnitNotFound)
		})
	})
}

func TestAvailabilityBlocking(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo, mi := e.barber(joao), e.barber(miguel)
		all := weekday(tuesday, 30)
		without := func(xs []string, drop ...string) []string {
			return slices.DeleteFunc(slices.Clone(xs), func(x string) bool { return slices.Contains(drop, x) })
		}
		at := func(clock string) string { return tuesday + "T" + clock + ":00" }
		t.Run("an appointment blocks its barber only", func(t *testing.T) {
			body := e.booking(haircut, tuesdayAt10)
			body["barber_id"] = jo
			expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusCreated, "")
			a := availableAt(t, e, haircut, tuesday)
			// 09:45 and 10:15 would overlap 10:00-10:30 too.
			wantStarts(t, joao, startsOf(a.Slots, jo), without(all, at("09:45"), at("10:00"), at("10:15")))
			wantStarts(t, miguel, startsOf(a.Slots, mi), all)
			// A 60-minute service loses the hour before too.
			b := availableAt(t, e, cutAndBeard, tuesday)
			wantStarts(t, joao, startsOf(b.Slots, jo), without(weekday(tuesday, 60), at("09:15"), at("09:30"), at("09:45"), at("10:00"), at("10:15")))
		})
		t.Run("a hold blocks its barber only", func(t *testing.T) {
			r := call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, at("14:00"), "barber_id", mi))
			expect(t, r, http.StatusCreated, "")
			a := availableAt(t, e, haircut, tuesday)
			wantStarts(t, miguel, startsOf(a.Slots, mi), without(all, at("13:45"), at("14:00"), at("14:15")))
			if got := startsOf(a.Slots, jo); !slices.Contains(got, at("14:00")) {
				t.Errorf("João lost 14:00 to Miguel's hold")
			}
		})
		t.Run("an expired hold no longer blocks", func(t *testing.T) {
			r := call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, at("16:00"), "barber_id", jo, "ttl_seconds", 10))
			expect(t, r, http.StatusCreated, "")
			if got := startsOf(availableAt(t, e, haircut, tuesday).Slots, jo); slices.Contains(got, at("16:00")) {
				t.Fatalf("16:00 offered while held")
			}
			e.clock.advance(9 * time.Second)
			if got := startsOf(availableAt(t, e, haircut, tuesday).Slots, jo); slices.Contains(got, at("16:00")) {
				t.Fatalf("16:00 offered a second before the hold expires")
			}
			e.clock.advance(time.Second) // exactly expires_at
			got := startsOf(availableAt(t, e, haircut, tuesday).Slots, jo)
			for _, s := range []string{at("15:45"), at("16:00"), at("16:15")} {
				if !slices.Contains(got, s) {
					t.Errorf("%s not offered after the hold expired", s)
				}
			}
		})
		t.Run("a barber filter sees the same blocks", func(t *testing.T) {
			a := availableAt(t, e, haircut, tuesday, "barber_id", jo)
			wantStarts(t, joao, startsOf(a.Slots, jo), without(all, at("09:45"), at("10:00"), at("10:15")))
		})
	})
}

// sundayHours gives a barber Sunday hours at Lisbon, so the daylight saving
// Sundays of 2027 have slots.
func sundayHours(t *testing.T, e *env, barberID, opens, closes string) {
	t.Helper()
	e.db.WorkingHours.Create().SetAccountID(e.keys.AccountID).SetBarberID(barberID).SetUnitID(e.unit(lisbon)).
		SetWeekday(0).SetOpensAt(opens).SetClosesAt(closes).ExecX(e.ctx)
}

func TestAvailabilityDaylightSaving(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo := e.barber(joao)
		sundayHours(t, e, jo, "00:00", "04:00")
		t.Run("spring forward skips 01:00-01:59", func(t *testing.T) {
			// 2027-03-28: at 01:00 (UTC+0) Lisbon's clocks jump to 02:00 (UTC+1),
			// so 00:00-04:00 holds three elapsed hours.
			d := "2027-03-28"
			a := availableAt(t, e, haircut, d)
			want := append(grid(d, "00:00", "01:00", 15), grid(d, "02:00", "04:00", 30)...)
			wantStarts(t, joao, startsOf(a.Slots, jo), want)
			utc := namesOf(a.Slots, func(s slotBody) string { return s.StartsAtUTC[11:16] })
			wantNames(t, "UTC starts", utc, []string{"00:00", "00:15", "00:30", "00:45", "01:00", "01:15", "01:30", "01:45", "02:00", "02:15", "02:30"})
			// 00:45 lasts 30 elapsed minutes, so it ends at 02:15 summer time.
			if s := a.Slots[3]; s.EndsAt != d+"T02:15:00" || s.EndsAtUTC != d+"T01:15:00Z" {
				t.Errorf("slot across the change: %+v", s)
			}
			checkSorted(t, a.Slots)
		})
		t.Run("fall back offers each wall time once, at its first occurrence", func(t *testing.T) {
			// 2027-10-31: at 02:00 (UTC+1) Lisbon's clocks go back to 01:00
			// (UTC+0), so 00:00-04:00 holds five elapsed hours.
			d := "2027-10-31"
			a := availableAt(t, e, haircut, d)
			wantStarts(t, joao, startsOf(a.Slots, jo), grid(d, "00:00", "04:00", 30))
			if len(a.Slots) != 15 {
				t.Fatalf("%d slots, want 15", len(a.Slots))
			}
			first, late, after := a.Slots[0], a.Slots[7], a.Slots[8]
			if first.StartsAtUTC != "2027-10-30T23:00:00Z" {
				t.Errorf("00:00 is %s, want 2027-10-30T23:00:00Z", first.StartsAtUTC)
			}
			if late.StartsAt != d+"T01:45:00" || late.StartsAtUTC != d+"T00:45:00Z" || late.EndsAt != d+"T01:15:00" || late.EndsAtUTC != d+"T01:15:00Z" {
				t.Errorf("01:45 summer time: %+v", late)
			}
			if after.StartsAt != d+"T02:00:00" || after.StartsAtUTC != d+"T02:00:00Z" {
				t.Errorf("02:00 winter time: %+v", after)
			}
			checkSorted(t, a.Slots)
		})
		t.Run("holds on daylight saving days", func(t *testing.T) {
			expect(t, call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, "2027-03-28T01:15:00", "barber_id", jo)), http.StatusUnprocessableEntity, domain.CodeInvalidLocalTime)
			h := holdOK(t, e, holdRequest(e, haircut, "2027-03-28T02:15:00", "barber_id", jo))
			if h.StartsAtUTC != "2027-03-28T01:15:00Z" || h.EndsAt != "2027-03-28T02:45:00" {
				t.Errorf("hold after the gap: %+v", h)
			}
			h = holdOK(t, e, holdRequest(e, haircut, "2027-03-28T00:45:00", "barber_id", jo))
			if h.EndsAt != "2027-03-28T02:15:00" || h.EndsAtUTC != "2027-03-28T01:15:00Z" {
				t.Errorf("hold across the gap: %+v", h)
			}
			// 02:00 summer time is 01:00 UTC, inside the hold from 00:45 (UTC+0).
			holdConflict(t, e, holdRequest(e, haircut, "2027-03-28T02:00:00", "barber_id", jo))
			h = holdOK(t, e, holdRequest(e, haircut, "2027-10-31T01:30:00", "barber_id", jo))
			if h.StartsAtUTC != "2027-10-31T00:30:00Z" || h.EndsAt != "2027-10-31T01:00:00" || h.EndsAtUTC != "2027-10-31T01:00:00Z" {
				t.Errorf("ambiguous 01:30 must be its first occurrence: %+v", h)
			}
			// 01:00-01:30 summer time is now held; 01:00 winter time was never offered.
			got := startsOf(availableAt(t, e, haircut, "2027-10-31").Slots, jo)
			for _, s := range []string{"2027-10-31T01:15:00", "2027-10-31T01:30:00", "2027-10-31T01:45:00"} {
				if slices.Contains(got, s) {
					t.Errorf("%s still offered over the hold", s)
				}
			}
		})
	})
}

func TestAvailabilityBuffer(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		jo, mi := e.barber(joao), e.barber(miguel)
		e.db.Service.UpdateOneID(e.service(haircut)).SetBufferMinutes(15).ExecX(e.ctx)
		at := func(clock string) string { return tuesday + "T" + clock + ":00" }
		without := func(xs []string, drop ...string) []string {
			return slices.DeleteFunc(slices.Clone(xs), func(x string) bool { return slices.Contains(drop, x) })
		}
		t.Run("the buffer may spill past closing", func(t *testing.T) {
			a := availableAt(t, e, haircut, tuesday)
			wantStarts(t, joao, startsOf(a.Slots, jo), weekday(tuesday, 30))
			checkSlotTimes(t, a.Slots, 0, 30) // the slot itself is 30 minutes
		})
		t.Run("an appointment blocks its duration plus buffer", func(t *testing.T) {
			body := e.booking(haircut, tuesdayAt10)
			body["barber_id"] = jo
			expect(t, call(t, e, "POST", "/appointments", e.keys.APIKey, body), http.StatusCreated, "")
			// Busy 10:00-10:45; a 30-minute haircut plus 15 minutes clashes from 09:30 to 10:30.
			a := availableAt(t, e, haircut, tuesday)
			wantStarts(t, joao, startsOf(a.Slots, jo), without(weekday(tuesday, 30), at("09:30"), at("09:45"), at("10:00"), at("10:15"), at("10:30")))
			// A 60-minute service without buffer clashes from 09:15 to 10:30.
			b := availableAt(t, e, cutAndBeard, tuesday)
			wantStarts(t, joao, startsOf(b.Slots, jo), without(weekday(tuesday, 60), at("09:15"), at("09:30"), at("09:45"), at("10:00"), at("10:15"), at("10:30")))
		})
		t.Run("a hold blocks its duration plus buffer", func(t *testing.T) {
			h := holdOK(t, e, holdRequest(e, haircut, at("14:00"), "barber_id", mi))
			if h.EndsAt != at("14:30") {
				t.Errorf("hold ends_at %s, want 14:30 (the buffer is not part of it)", h.EndsAt)
			}
			a := availableAt(t, e, haircut, tuesday, "barber_id", mi)
			wantStarts(t, miguel, startsOf(a.Slots, mi), without(weekday(tuesday, 30), at("13:30"), at("13:45"), at("14:00"), at("14:15"), at("14:30")))
			holdConflict(t, e, holdRequest(e, haircut, at("14:30"), "barber_id", mi))
			holdOK(t, e, holdRequest(e, haircut, at("14:45"), "barber_id", mi))
		})
	})
}
