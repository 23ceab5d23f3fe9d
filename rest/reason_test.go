package rest_test

import (
	"context"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/domain"
)

// reasonOf asks REST and GraphQL why a Lisbon day has no slots for a
// service (with a barber, or every eligible one when barberName is ""),
// checks that they agree, and returns REST's reason ("" for null).
func (e *env) reasonOf(t *testing.T, svc, date, barberName string) string {
	t.Helper()
	var kv []string
	var barberID *string
	if barberName != "" {
		id := e.barber(barberName)
		kv, barberID = []string{"barber_id", id}, &id
	}
	a := availableAt(t, e, svc, date, kv...)
	v, err := e.res.Authenticate(context.Background(), e.keys.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.res.Query().Availability(domain.WithViewer(context.Background(), v), e.unit(lisbon), e.service(svc), barberID, date)
	if err != nil {
		t.Fatal(err)
	}
	rest, gql := deref(a.Reason), deref(g.Reason)
	if rest != gql || len(a.Slots) != len(g.Slots) {
		t.Fatalf("%s %s %q: REST says %q with %d slots, GraphQL %q with %d", svc, date, barberName, rest, len(a.Slots), gql, len(g.Slots))
	}
	if (rest == "") != (len(a.Slots) > 0) {
		t.Fatalf("%s %s %q: reason %q with %d slots", svc, date, barberName, rest, len(a.Slots))
	}
	return rest
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func wantReason(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: reason %q, want %q", what, got, want)
	}
}

// timeOff gives a Lisbon barber time off from one UTC instant to another.
func (e *env) timeOff(t testing.TB, barberName string, from, to time.Time) {
	t.Helper()
	_, err := e.db.TimeOff.Create().SetAccountID(e.keys.AccountID).SetBarberID(e.barber(barberName)).
		SetStartsAt(from).SetEndsAt(to).SetReason("holiday").Save(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
}

func utc(date string, hour int) time.Time {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(hour) * time.Hour)
}

// Every reason a day can have no slots, through REST and GraphQL alike.
// The clock stands at Monday 2027-03-01 06:00 in Lisbon (UTC+0 until
// 2027-03-28, then UTC+1).
func TestAvailabilityReason(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		const (
			wednesday = "2027-03-03"
			thursday  = "2027-03-04"
			saturday  = "2027-03-06"
			dstSunday = "2027-03-28" // clocks go forward in Lisbon
			dstMonday = "2027-03-29" // the first weekday on UTC+1
		)
		// Written before any day is read, so no cache has them yet.
		e.timeOff(t, joao, utc(wednesday, 0), utc(wednesday, 24))
		e.timeOff(t, miguel, utc(wednesday, 0), utc(wednesday, 24))
		e.timeOff(t, joao, utc(thursday, 8), utc(thursday, 20))
		e.timeOff(t, joao, utc(dstMonday, 8), utc(dstMonday, 18)) // 09:00-19:00 local

		t.Run("a day with slots", func(t *testing.T) {
			wantReason(t, "Tuesday", e.reasonOf(t, haircut, tuesday, ""), "")
			wantReason(t, "Tuesday with João", e.reasonOf(t, haircut, tuesday, joao), "")
		})
		t.Run("outside the booking window", func(t *testing.T) {
			wantReason(t, "yesterday", e.reasonOf(t, haircut, "2027-02-28", ""), graph.ReasonOutsideBookingWindow)
			wantReason(t, "a past Tuesday with João", e.reasonOf(t, haircut, "2027-02-23", joao), graph.ReasonOutsideBookingWindow)
			wantReason(t, "the horizon's last day", e.reasonOf(t, haircut, "2028-02-29", ""), "")
			wantReason(t, "past the horizon", e.reasonOf(t, haircut, "2028-03-01", ""), graph.ReasonOutsideBookingWindow)
		})
		t.Run("closed", func(t *testing.T) {
			wantReason(t, "Sunday", e.reasonOf(t, haircut, "2027-03-07", ""), graph.ReasonClosed)
			wantReason(t, "Sunday with Miguel", e.reasonOf(t, haircut, "2027-03-07", miguel), graph.ReasonClosed)
			wantReason(t, "the spring-forward Sunday", e.reasonOf(t, haircut, dstSunday, ""), graph.ReasonClosed)
			wantReason(t, "the fall-back Sunday", e.reasonOf(t, haircut, "2027-10-31", joao), graph.ReasonClosed)
		})
		t.Run("time off", func(t *testing.T) {
			wantReason(t, "both barbers off", e.reasonOf(t, haircut, wednesday, ""), graph.ReasonTimeOff)
			wantReason(t, "João off", e.reasonOf(t, haircut, thursday, joao), graph.ReasonTimeOff)
			wantReason(t, "Miguel while João is off", e.reasonOf(t, haircut, thursday, miguel), "")
			wantReason(t, "either while João is off", e.reasonOf(t, haircut, thursday, ""), "")
			// 08:00-18:00 UTC is the whole day only on UTC+1.
			wantReason(t, "João off on the first day of summer time", e.reasonOf(t, haircut, dstMonday, joao), graph.ReasonTimeOff)
			wantReason(t, "either on the first day of summer time", e.reasonOf(t, haircut, dstMonday, ""), "")
		})
		t.Run("fully booked", func(t *testing.T) {
			// Saturday 09:00-14:00: five hours of João's 60-minute service.
			e.apCreate(e.apBody(cutAndBeard, saturday+"T09:00:00", joao))
			e.apCreate(e.apBody(cutAndBeard, saturday+"T10:00:00", joao))
			e.apCreate(e.apBody(cutAndBeard, saturday+"T11:00:00", joao))
			e.apHold(cutAndBeard, saturday+"T12:00:00", joao, nil)
			wantReason(t, "one hour left", e.reasonOf(t, cutAndBeard, saturday, joao), "")
			wantReason(t, "one hour left, every barber", e.reasonOf(t, cutAndBeard, saturday, ""), "")
			// The day is cached now: the last booking must show.
			e.apCreate(e.apBody(cutAndBeard, saturday+"T13:00:00", joao))
			wantReason(t, "every hour taken", e.reasonOf(t, cutAndBeard, saturday, joao), graph.ReasonFullyBooked)
			wantReason(t, "every hour taken, every barber", e.reasonOf(t, cutAndBeard, saturday, ""), graph.ReasonFullyBooked)
			wantReason(t, "Miguel's haircuts", e.reasonOf(t, haircut, saturday, miguel), "")
		})
		t.Run("today, as time passes", func(t *testing.T) {
			today := "2027-03-01"
			e.timeOff(t, joao, utc(today, 13), utc(today, 20))
			e.timeOff(t, miguel, utc(today, 13), utc(today, 20))
			e.wroteSQL()
			wantReason(t, "06:00", e.reasonOf(t, haircut, today, ""), "")
			// 11:10: the morning's starts are within the lead, the
			// afternoon is time off.
			e.clock.advance(5*time.Hour + 10*time.Minute)
			wantReason(t, "11:10", e.reasonOf(t, haircut, today, ""), graph.ReasonTimeOff)
			wantReason(t, "11:10 with João", e.reasonOf(t, haircut, today, joao), graph.ReasonTimeOff)
			// 17:45: every start left is within the lead; the day cached
			// at 11:10 must not say time_off any more.
			e.clock.advance(6*time.Hour + 35*time.Minute)
			wantReason(t, "17:45", e.reasonOf(t, haircut, today, ""), graph.ReasonOutsideBookingWindow)
			wantReason(t, "17:45 with Miguel", e.reasonOf(t, haircut, today, miguel), graph.ReasonOutsideBookingWindow)
		})
	})
}
