package rest

// An internal test: encodedDay is unexported.

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/model"
)

// dayOf is an availability answer with barbers' slots every step minutes
// from 09:00 local, sorted by time, then barber, as the resolver makes them.
func dayOf(t testing.TB, zone, date string, barbers []string, slots int, step time.Duration) *model.Availability {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	day, err := time.ParseInLocation(time.DateOnly, date, loc)
	if err != nil {
		t.Fatal(err)
	}
	a := &model.Availability{UnitID: "unt_1", ServiceID: "svc_<&>", Date: date, Timezone: zone}
	if slots == 0 {
		a.Reason = ptr(graph.ReasonFullyBooked)
	}
	for i := range slots {
		start := day.Add(9*time.Hour + time.Duration(i)*step)
		for j, b := range barbers {
			if (i+j)%3 == 2 { // barbers are busy at different times
				continue
			}
			end := start.Add(30 * time.Minute)
			a.Slots = append(a.Slots, &model.Slot{
				StartsAt: start.In(loc).Format("2006-01-02T15:04:05"), EndsAt: end.In(loc).Format("2006-01-02T15:04:05"),
				StartsAtUtc: start.UTC(), EndsAtUtc: end.UTC(), BarberID: b,
			})
		}
	}
	return a
}

func ptr(s string) *string { return &s }

// only is a's answer for one barber.
func only(a *model.Availability, barber string) *model.Availability {
	b := *a
	b.BarberID = &barber
	b.Slots = nil
	for _, s := range a.Slots {
		if s.BarberID == barber {
			b.Slots = append(b.Slots, s)
		}
	}
	if b.Slots == nil && b.Reason == nil {
		b.Reason = ptr(graph.ReasonTimeOff)
	}
	return &b
}

// Every answer put together from a prepared day is byte for byte what
// encoding the answer itself gives.
func TestEncodedDayAnswers(t *testing.T) {
	barbers := []string{"brb_b", "brb_a", `brb_"quoted"\`, "brb_\u2028<&>"}
	for _, c := range []struct {
		name, zone, date string
		slots            int
	}{
		{"ordinary day", "Europe/Lisbon", "2027-03-02", 20},
		{"spring forward", "America/New_York", "2027-03-14", 40},
		{"past midnight", "Asia/Tokyo", "2027-03-02", 70},
		{"no slots", "UTC", "2027-03-02", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := dayOf(t, c.zone, c.date, barbers, c.slots, 15*time.Minute)
			d := prepareDay(a)
			check := func(want *model.Availability, barber *string) {
				t.Helper()
				wantBody := encodeJSON(AvailabilityOf(want))
				var reason string
				if want.Reason != nil {
					reason = *want.Reason
				}
				got := d.answer([]byte("stale bytes"[:0]), barber, reason)
				if !bytes.Equal(got, wantBody) {
					t.Fatalf("barber %v:\n got %s\nwant %s", barber, got, wantBody)
				}
			}
			check(a, nil)
			for _, b := range append(barbers, "brb_without_slots") {
				check(only(a, b), &b)
			}
		})
	}
}

// A dozen barbers' day keeps their slots' times once: it costs a fraction
// of its every-barber answer in the cache.
func TestEncodedDaySize(t *testing.T) {
	a, barbers := twelveBarberDay(t)
	d := prepareDay(a)
	full := len(encodeJSON(AvailabilityOf(a)))
	if d.Size() <= 0 || d.Size()*4 > full {
		t.Fatalf("a prepared day takes %d bytes, its every-barber answer %d: want under a quarter", d.Size(), full)
	}
	t.Logf("prepared day %d bytes, every-barber answer %d bytes, one barber's %d bytes",
		d.Size(), full, len(encodeJSON(AvailabilityOf(only(a, barbers[0])))))
}

func twelveBarberDay(tb testing.TB) (*model.Availability, []string) {
	barbers := make([]string, 12)
	for i := range barbers {
		barbers[i] = fmt.Sprintf("brb_01KAB3Y7W3QZ0000000000%04d", i)
	}
	return dayOf(tb, "Europe/Lisbon", "2027-03-02", barbers, 36, 15*time.Minute), barbers
}

// Preparing a 12-barber day, as a cache miss does.
func BenchmarkPrepareDay(b *testing.B) {
	a, _ := twelveBarberDay(b)
	for b.Loop() {
		prepareDay(a)
	}
}

// Putting answers together from a prepared day, as a cache hit does.
func BenchmarkEncodedDayAnswer(b *testing.B) {
	a, barbers := twelveBarberDay(b)
	d := prepareDay(a)
	var buf []byte
	b.Run("every barber", func(b *testing.B) {
		for b.Loop() {
			buf = d.answer(buf[:0], nil, "")
		}
		b.SetBytes(int64(len(buf)))
	})
	b.Run("one barber", func(b *testing.B) {
		for b.Loop() {
			buf = d.answer(buf[:0], &barbers[3], "")
		}
		b.SetBytes(int64(len(buf)))
	})
}
