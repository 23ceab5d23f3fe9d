package rest_test

import (
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"barberd/graph"
	"barberd/graph/domain"
	"barberd/rest"
)

// availabilityRange asks for a Lisbon service's range of days, with a
// barber or every eligible one (barberName ""), and checks that every day
// is exactly its single-day answer, and that GraphQL's availabilityRange
// says the same.
func (e *env) availabilityRange(t *testing.T, svc, from, to, barberName string) rest.AvailabilityRange {
	t.Helper()
	kv := []string{"unit_id", e.unit(lisbon), "service_id", e.service(svc), "from", from, "to", to}
	var barberID *string
	if barberName != "" {
		id := e.barber(barberName)
		kv, barberID = append(kv, "barber_id", id), &id
	}
	r := call(t, e, "GET", query("/availability/range", kv...), e.keys.APIKey, nil)
	expect(t, r, http.StatusOK, "")
	var got rest.AvailabilityRange
	r.Decode(t, &got)
	if got.From != from || got.To != to || got.Timezone != "Europe/Lisbon" || !reflect.DeepEqual(got.BarberID, barberID) {
		t.Fatalf("range head: %s", r.Body)
	}
	v, err := e.res.Authenticate(context.Background(), e.keys.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.res.Query().AvailabilityRange(domain.WithViewer(context.Background(), v), e.unit(lisbon), e.service(svc), barberID, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Days) != len(got.Days) {
		t.Fatalf("GraphQL has %d days, REST %d", len(g.Days), len(got.Days))
	}
	for i, d := range got.Days {
		var bkv []string
		if barberID != nil {
			bkv = []string{"barber_id", *barberID}
		}
		single := availableAt(t, e, svc, d.Date, bkv...)
		if d.Date != single.Date || !reflect.DeepEqual(d.Slots, single.Slots) || deref(d.Reason) != deref(single.Reason) {
			t.Fatalf("%s in the range: %d slots, reason %q; alone: %d slots, reason %q", d.Date, len(d.Slots), deref(d.Reason), len(single.Slots), deref(single.Reason))
		}
		if gd := g.Days[i]; gd.Date != d.Date || len(gd.Slots) != len(d.Slots) || deref(gd.Reason) != deref(d.Reason) {
			t.Fatalf("%s: GraphQL %d slots, reason %q; REST %d, %q", d.Date, len(gd.Slots), deref(gd.Reason), len(d.Slots), deref(d.Reason))
		}
	}
	return got
}

// reasonsOf lists a range's reasons by date ("" for a day with slots).
func reasonsOf(r rest.AvailabilityRange) map[string]string {
	out := map[string]string{}
	for _, d := range r.Days {
		out[d.Date] = deref(d.Reason)
	}
	return out
}

// A range of days is each day's single answer, whatever the day's reason,
// across a daylight saving change and across the horizon's end. The clock
// stands at Monday 2027-03-01 06:00 in Lisbon (UTC+0 until 2027-03-28,
// then UTC+1); the horizon's last day is 2028-02-29.
func TestAvailabilityRange(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		const (
			wednesday = "2027-03-03"
			saturday  = "2027-03-06"
			dstMonday = "2027-03-29"
		)
		e.timeOff(t, joao, utc(wednesday, 0), utc(wednesday, 24))
		e.timeOff(t, joao, utc(dstMonday, 8), utc(dstMonday, 18)) // 09:00-19:00 local
		for _, at := range []string{"T09:00:00", "T10:00:00", "T11:00:00", "T12:00:00", "T13:00:00"} {
			e.apCreate(e.apBody(cutAndBeard, saturday+at, joao))
		}
		// 31 days, from yesterday through the first days of summer time.
		r := e.availabilityRange(t, cutAndBeard, "2027-02-28", "2027-03-30", joao)
		if len(r.Days) != 31 || r.Days[0].Date != "2027-02-28" || r.Days[30].Date != "2027-03-30" {
			t.Fatalf("%d days, %s to %s", len(r.Days), r.Days[0].Date, r.Days[len(r.Days)-1].Date)
		}
		reasons := reasonsOf(r)
		for date, want := range map[string]string{
			"2027-02-28": graph.ReasonOutsideBookingWindow,
			"2027-03-01": "",
			tuesday:      "",
			wednesday:    graph.ReasonTimeOff,
			saturday:     graph.ReasonFullyBooked,
			"2027-03-07": graph.ReasonClosed,
			"2027-03-28": graph.ReasonClosed, // the spring-forward Sunday
			dstMonday:    graph.ReasonTimeOff,
			"2027-03-30": "",
		} {
			wantReason(t, date, reasons[date], want)
		}
		// Every barber, and the other barber alone, agree day by day too.
		e.availabilityRange(t, cutAndBeard, "2027-02-28", "2027-03-30", "")
		e.availabilityRange(t, haircut, "2027-03-01", "2027-03-31", miguel)

		// A month of every barber's haircuts is large enough to be sent as
		// it is made (past 256 KiB), and still each day's single answer.
		big := call(t, e, "GET", query("/availability/range", "unit_id", e.unit(lisbon), "service_id", e.service(haircut), "from", "2027-03-01", "to", "2027-03-31"), e.keys.APIKey, nil)
		if len(big.Body) < 256<<10 || big.Header.Get("Content-Length") != "" {
			t.Fatalf("a month of haircuts: %d bytes, Content-Length %q; want a streamed answer over 256 KiB", len(big.Body), big.Header.Get("Content-Length"))
		}
		e.availabilityRange(t, haircut, "2027-03-01", "2027-03-31", "")

		// Across the horizon: its last day has slots, the days after are
		// outside the booking window.
		r = e.availabilityRange(t, haircut, "2028-02-25", "2028-03-03", "")
		reasons = reasonsOf(r)
		wantReason(t, "the horizon's last day", reasons["2028-02-29"], "")
		for _, date := range []string{"2028-03-01", "2028-03-02", "2028-03-03"} {
			wantReason(t, date+", past the horizon", reasons[date], graph.ReasonOutsideBookingWindow)
		}

		// A day the range cached shows a booking made after it.
		e.apCreate(e.apBody(haircut, tuesday+"T09:00:00", miguel))
		r = e.availabilityRange(t, haircut, tuesday, tuesday, miguel)
		if slices.ContainsFunc(r.Days[0].Slots, func(s rest.Slot) bool { return s.StartsAt == tuesday+"T09:00:00" }) {
			t.Error("the range still offers a slot booked after it was read")
		}
	})
}

// Range requests the contract refuses, with the field to fix.
func TestAvailabilityRangeErrors(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		unit, svc := e.unit(lisbon), e.service(cutAndBeard)
		get := func(key string, kv ...string) *response {
			return call(t, e, "GET", query("/availability/range", kv...), key, nil)
		}
		for _, c := range []struct {
			name   string
			kv     []string
			fields []string
		}{
			{"nothing", nil, []string{"unit_id", "service_id", "from", "to"}},
			{"no to", []string{"unit_id", unit, "service_id", svc, "from", tuesday}, []string{"to"}},
			{"to before from", []string{"unit_id", unit, "service_id", svc, "from", tuesday, "to", "2027-03-01"}, []string{"to"}},
			{"32 days", []string{"unit_id", unit, "service_id", svc, "from", "2027-03-01", "to", "2027-04-01"}, []string{"to"}},
			{"dates with times", []string{"unit_id", unit, "service_id", svc, "from", "2027-03-01T00:00:00", "to", "2027-03-02Z"}, []string{"from", "to"}},
		} {
			t.Log(c.name)
			expectFields(t, get(e.keys.APIKey, c.kv...), c.fields...)
		}
		expect(t, get(e.keys.APIKey, "unit_id", unit, "service_id", svc, "from", "2027-03-01", "to", "2027-03-31"), http.StatusOK, "")
		expect(t, get(e.keys.APIKey, "unit_id", unit, "service_id", svc, "barber_id", e.barber(miguel), "from", tuesday, "to", tuesday),
			http.StatusUnprocessableEntity, "barber_not_eligible")
		expect(t, get(e.keys.APIKey, "unit_id", "unt_nope", "service_id", svc, "from", tuesday, "to", tuesday), http.StatusNotFound, "unit_not_found")
		expect(t, get(e.key("catalog:read"), "unit_id", unit, "service_id", svc, "from", tuesday, "to", tuesday), http.StatusForbidden, "insufficient_scope")
	})
}
