package rest_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/rest"
)

// nextQuery is a search for the next free times of a Lisbon service.
type nextQuery struct {
	svc, barber      string // barber "" for any
	after            string // local, "" for now
	limit            int    // 0 for the default
	timeFrom, timeTo string // "" for none
	weekdays         []int  // ISO; nil for all
}

func (q nextQuery) params(e *env) []string {
	kv := []string{"unit_id", e.unit(lisbon), "service_id", e.service(q.svc)}
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k, v)
		}
	}
	if q.barber != "" {
		add("barber_id", e.barber(q.barber))
	}
	add("after", q.after)
	if q.limit != 0 {
		add("limit", strconv.Itoa(q.limit))
	}
	add("time_from", q.timeFrom)
	add("time_to", q.timeTo)
	var days []string
	for _, d := range q.weekdays {
		days = append(days, strconv.Itoa(d))
	}
	add("weekdays", strings.Join(days, ","))
	return kv
}

// next asks REST for the next free times, and checks that GraphQL's
// nextFreeSlots gives the same.
func (e *env) next(t *testing.T, q nextQuery) rest.NextSlots {
	t.Helper()
	r := call(t, e, "GET", query("/availability/next", q.params(e)...), e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	var got rest.NextSlots
	r.Decode(t, &got)
	v, err := e.res.Authenticate(context.Background(), e.keys.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	gq := domain.NextSlotsQuery{UnitID: e.unit(lisbon), ServiceID: e.service(q.svc), Weekdays: q.weekdays}
	if q.barber != "" {
		id := e.barber(q.barber)
		gq.BarberID = &id
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	gq.After, gq.TimeFrom, gq.TimeTo = opt(q.after), opt(q.timeFrom), opt(q.timeTo)
	if q.limit != 0 {
		gq.Limit = &q.limit
	}
	g, err := e.res.Query().NextFreeSlots(domain.WithViewer(context.Background(), v), gq.UnitID, gq.ServiceID, gq.BarberID, gq.After, gq.Limit, gq.TimeFrom, gq.TimeTo, gq.Weekdays)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Slots) != len(got.Slots) || deref(g.Reason) != deref(got.Reason) {
		t.Fatalf("GraphQL: %d slots, reason %q; REST: %d, %q", len(g.Slots), deref(g.Reason), len(got.Slots), deref(got.Reason))
	}
	for i, s := range g.Slots {
		if s.StartsAt != got.Slots[i].StartsAt || s.BarberID != got.Slots[i].BarberID {
			t.Fatalf("slot %d: GraphQL %s with %s, REST %s with %s", i, s.StartsAt, s.BarberID, got.Slots[i].StartsAt, got.Slots[i].BarberID)
		}
	}
	if (len(got.Slots) == 0) != (deref(got.Reason) == graph.ReasonNoneWithinHorizon) {
		t.Fatalf("%d slots with reason %q", len(got.Slots), deref(got.Reason))
	}
	return got
}

// expectedNext works out from single-day answers what a search must
// find: the starts, in order, and for each the barbers free then.
func (e *env) expectedNext(t *testing.T, q nextQuery) (starts []string, free map[string][]string) {
	t.Helper()
	loc, _ := time.LoadLocation("Europe/Lisbon")
	after := testNowOf(e)
	if q.after != "" {
		a, err := time.ParseInLocation("2006-01-02T15:04:05", q.after, loc)
		if err != nil {
			t.Fatal(err)
		}
		if a.After(after) {
			after = a
		}
	}
	limit := q.limit
	if limit == 0 {
		limit = 3
	}
	from, to := q.timeFrom, q.timeTo
	if to == "" {
		to = "24:00"
	}
	var kv []string
	if q.barber != "" {
		kv = []string{"barber_id", e.barber(q.barber)}
	}
	free = map[string][]string{}
	last := after.In(loc).AddDate(0, 0, 370)
	for day := after.In(loc); !day.After(last) && len(starts) < limit; day = day.AddDate(0, 0, 1) {
		iso := (int(day.Weekday())+6)%7 + 1
		if q.weekdays != nil && !slices.Contains(q.weekdays, iso) {
			continue
		}
		for _, s := range availableAt(t, e, q.svc, day.Format(time.DateOnly), kv...).Slots {
			at, _ := time.Parse(time.RFC3339, s.StartsAtUTC)
			clock := s.StartsAt[11:16]
			if at.Before(after) || clock < from || clock >= to {
				continue
			}
			if _, seen := free[s.StartsAt]; !seen {
				if len(starts) == limit {
					break
				}
				starts = append(starts, s.StartsAt)
			}
			free[s.StartsAt] = append(free[s.StartsAt], s.BarberID)
		}
	}
	return starts, free
}

// testNowOf is the env's clock now.
func testNowOf(e *env) time.Time { return e.clock.now() }

// The next free times agree with single-day availability, with daily time
// windows and weekdays, across daylight saving; without a barber each is
// the barber a hold (a booking) at that time gets.
func TestNextFreeSlots(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		// Some of the week taken, so the answers are not just the hours.
		e.timeOff(t, joao, utc("2027-03-04", 0), utc("2027-03-04", 24))
		e.apCreate(e.apBody(haircut, "2027-03-05T17:00:00", miguel))
		e.apCreate(e.apBody(haircut, "2027-03-05T17:30:00", joao))
		e.apHold(haircut, "2027-03-01T09:00:00", joao, nil)

		for _, q := range []nextQuery{
			{svc: haircut},
			{svc: haircut, limit: 20},
			{svc: haircut, barber: joao, limit: 7},
			// "Thursday or Friday after 17:00": João is off Thursday.
			{svc: haircut, weekdays: []int{4, 5}, timeFrom: "17:00", limit: 12},
			{svc: haircut, barber: joao, weekdays: []int{4, 5}, timeFrom: "17:00", limit: 6},
			{svc: cutAndBeard, after: "2027-03-10T12:30:00", timeTo: "12:00", limit: 5},
			// Mornings of the first Monday of summer time (UTC+1).
			{svc: haircut, after: "2027-03-27T00:00:00", weekdays: []int{1}, timeFrom: "09:00", timeTo: "10:00", limit: 10},
			// after in the spring-forward gap (01:00-02:00 does not exist).
			{svc: haircut, after: "2027-03-28T01:30:00", limit: 2},
			// Saturday only: the search runs for weeks.
			{svc: cutAndBeard, weekdays: []int{6}, timeFrom: "13:00", limit: 4},
		} {
			got := e.next(t, q)
			starts, free := e.expectedNext(t, q)
			var gotStarts []string
			for _, s := range got.Slots {
				gotStarts = append(gotStarts, s.StartsAt)
				if !slices.Contains(free[s.StartsAt], s.BarberID) {
					t.Errorf("%+v: %s with %s, who is not free then (free: %v)", q, s.StartsAt, s.BarberID, free[s.StartsAt])
				}
			}
			if !slices.Equal(gotStarts, starts) {
				t.Errorf("%+v: starts %v, want %v", q, gotStarts, starts)
			}
		}

		// Without a barber, each start names the barber a hold without
		// one gets then (the first eligible barber free, by name).
		got := e.next(t, nextQuery{svc: haircut, weekdays: []int{5}, timeFrom: "16:30", timeTo: "18:30", limit: 8})
		barbers := map[string]bool{}
		for _, s := range got.Slots {
			barbers[s.BarberID] = true
			r := e.apPost("/slots/hold", map[string]any{"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "starts_at": s.StartsAt})
			expect(t, r, http.StatusCreated, "")
			h := r.JSON(t)
			if h["barber_id"] != s.BarberID {
				t.Errorf("%s: next names %s, a hold got %v", s.StartsAt, s.BarberID, h["barber_id"])
			}
			expect(t, e.apPost("/slots/hold/"+h["hold_id"].(string)+"/release", nil), http.StatusOK, "")
		}
		if len(barbers) != 2 {
			t.Errorf("Friday 16:30-18:30 should name both barbers (each is booked at some start): %v", barbers)
		}

		// A booking made after a search shows in the next one.
		first := e.next(t, nextQuery{svc: haircut, barber: miguel, after: "2027-03-09T09:00:00", limit: 1}).Slots[0]
		e.apCreate(e.apBody(haircut, first.StartsAt, miguel))
		if again := e.next(t, nextQuery{svc: haircut, barber: miguel, after: "2027-03-09T09:00:00", limit: 1}).Slots[0]; again.StartsAt == first.StartsAt {
			t.Errorf("%s is booked, and still offered", first.StartsAt)
		}
	})
}

// A search that finds nothing says so: none_within_horizon.
func TestNextFreeSlotsNoneWithinHorizon(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		for _, q := range []nextQuery{
			{svc: haircut, weekdays: []int{7}},                      // closed every Sunday
			{svc: haircut, barber: miguel, timeFrom: "19:00"},       // nobody works after 19:00
			{svc: haircut, after: "2028-03-01T00:00:00"},            // past the horizon's last day
			{svc: haircut, after: "2028-02-29T18:45:00", limit: 20}, // after the last start
		} {
			got := e.next(t, q)
			if len(got.Slots) != 0 || deref(got.Reason) != graph.ReasonNoneWithinHorizon {
				t.Errorf("%+v: %d slots, reason %q", q, len(got.Slots), deref(got.Reason))
			}
		}
		// The horizon's last day still counts.
		got := e.next(t, nextQuery{svc: haircut, after: "2028-02-29T18:00:00", limit: 20})
		if len(got.Slots) == 0 || got.Reason != nil || !strings.HasPrefix(got.Slots[len(got.Slots)-1].StartsAt, "2028-02-29T18:30") {
			t.Errorf("the horizon's last evening: %+v", got)
		}
	})
}

// Searches the contract refuses, with the fields to fix.
func TestNextFreeSlotsErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		unit, svc := e.unit(lisbon), e.service(haircut)
		get := func(key string, kv ...string) *response {
			return call(t, e, "GET", query("/availability/next", append([]string{"unit_id", unit, "service_id", svc}, kv...)...), key, nil)
		}
		for _, c := range []struct {
			kv     []string
			fields []string
		}{
			{[]string{"limit", "0"}, []string{"limit"}},
			{[]string{"limit", "21"}, []string{"limit"}},
			{[]string{"limit", "three"}, []string{"limit"}},
			{[]string{"time_from", "17:00", "time_to", "17:00"}, []string{"time_to"}},
			{[]string{"time_from", "17:00", "time_to", "09:00"}, []string{"time_to"}},
			{[]string{"time_from", "7:00", "time_to", "25:00"}, []string{"time_from", "time_to"}},
			{[]string{"weekdays", "0"}, []string{"weekdays"}},
			{[]string{"weekdays", "4,8"}, []string{"weekdays"}},
			{[]string{"weekdays", "thursday"}, []string{"weekdays"}},
			{[]string{"after", "2027-03-01"}, []string{"after"}},
			{[]string{"after", "2027-03-01T09:00:00Z", "limit", "50", "weekdays", ""}, []string{"after", "limit", "weekdays"}},
		} {
			t.Log(c.kv)
			expectFields(t, get(e.keys.APIKey, c.kv...), c.fields...)
		}
		expect(t, get(e.keys.APIKey, "time_to", "24:00", "limit", "20", "weekdays", "1,2,3,4,5,6,7"), http.StatusOK, "")
		expect(t, get(e.keys.APIKey, "barber_id", "brb_nope"), http.StatusNotFound, "barber_not_found")
		expect(t, call(t, e, "GET", query("/availability/next", "unit_id", unit, "service_id", e.service(cutAndBeard), "barber_id", e.barber(miguel)), e.keys.APIKey, nil),
			http.StatusUnprocessableEntity, "barber_not_eligible")
		expect(t, get(e.key("catalog:read")), http.StatusForbidden, "insufficient_scope")
	})
}
