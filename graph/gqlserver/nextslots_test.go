package gqlserver_test

import (
	"slices"
	"testing"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// availabilityRange and nextFreeSlots over HTTP: answers, and refusals
// naming the REST field to fix, on both databases.
func TestRangeAndNextOverGraphQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		unit, haircut := bookSome(t, s) // Tuesday 10:00 and 11:00 taken by both barbers
		vars := map[string]any{"u": unit, "s": haircut}

		week := s.Query(t, s.Keys.APIKey, `query($u: ID!, $s: ID!) { availabilityRange(unitId: $u, serviceId: $s, from: "2027-03-01", to: "2027-03-07") {
			timezone from to days { date reason slots { startsAt barberId } } } }`, vars).OK(t)["availabilityRange"].(map[string]any)
		days := week["days"].([]any)
		if week["timezone"] != "Europe/Lisbon" || len(days) != 7 {
			t.Fatalf("a week: %v", week)
		}
		sunday := days[6].(map[string]any)
		if sunday["date"] != "2027-03-07" || sunday["reason"] != graph.ReasonClosed || len(sunday["slots"].([]any)) != 0 {
			t.Errorf("Sunday: %v", sunday)
		}
		for _, sl := range days[1].(map[string]any)["slots"].([]any) {
			if at := sl.(map[string]any)["startsAt"]; at == "2027-03-02T10:00:00" || at == "2027-03-02T11:00:00" {
				t.Errorf("Tuesday offers %s, which both barbers have booked", at)
			}
		}

		next := s.Query(t, s.Keys.APIKey, `query($u: ID!, $s: ID!) { nextFreeSlots(unitId: $u, serviceId: $s, after: "2027-03-02T09:30:00", timeTo: "12:00", weekdays: [2], limit: 4) {
			reason slots { startsAt } } }`, vars).OK(t)["nextFreeSlots"].(map[string]any)
		var starts []string
		for _, sl := range next["slots"].([]any) {
			starts = append(starts, sl.(map[string]any)["startsAt"].(string))
		}
		if want := []string{"2027-03-02T09:30:00", "2027-03-02T10:30:00", "2027-03-02T11:30:00", "2027-03-09T09:00:00"}; !slices.Equal(starts, want) || next["reason"] != nil {
			t.Errorf("next Tuesday mornings: %v (reason %v), want %v", starts, next["reason"], want)
		}

		for _, c := range []struct {
			doc    string
			fields []string
		}{
			{`query($u: ID!, $s: ID!) { availabilityRange(unitId: $u, serviceId: $s, from: "2027-03-01", to: "2027-04-01") { from } }`, []string{"to"}},
			{`query($u: ID!, $s: ID!) { availabilityRange(unitId: $u, serviceId: $s, from: "2027-03-01", to: "2027-02-28") { from } }`, []string{"to"}},
			{`query($u: ID!, $s: ID!) { nextFreeSlots(unitId: $u, serviceId: $s, limit: 21, weekdays: [0, 3], timeFrom: "18:00", timeTo: "09:00") { reason } }`, []string{"limit", "time_to", "weekdays"}},
			{`query($u: ID!, $s: ID!) { nextFreeSlots(unitId: $u, serviceId: $s, after: "2027-03-02") { reason } }`, []string{"after"}},
		} {
			a := s.Query(t, s.Keys.APIKey, c.doc, vars)
			got := slices.Sorted(slices.Values(a.Fields()))
			if a.Code() != domain.CodeValidationFailed || !slices.Equal(got, c.fields) {
				t.Errorf("%s: %q naming %v, want validation_failed naming %v", c.doc, a.Code(), got, c.fields)
			}
		}
	})
}
