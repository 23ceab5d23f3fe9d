package rest

// An internal test: encodedDay is unexported.

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"barberd/graph"
	"barberd/graph/free"
	"barberd/graph/model"
	"barberd/graph/slots"
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

// dayFrom is a's slots as graph keeps them, for every one of barbers: those
// without a slot have time off (are fully booked when a says so).
func dayFrom(tb testing.TB, a *model.Availability, barbers []string) *graph.Day {
	tb.Helper()
	loc, err := time.LoadLocation(a.Timezone)
	if err != nil {
		tb.Fatal(err)
	}
	date, err := slots.ParseDate(a.Date)
	if err != nil {
		tb.Fatal(err)
	}
	var open slots.Free
	has := map[string]bool{}
	for _, s := range a.Slots {
		if len(open.Starts) == 0 {
			open.Base = s.StartsAtUtc.Unix()
		}
		open.Starts = append(open.Starts, slots.FreeStart{Offset: uint32(s.StartsAtUtc.Unix() - open.Base), Barber: uint32(slices.Index(barbers, s.BarberID))})
		has[s.BarberID] = true
	}
	var empty []slots.BarberStage
	stage := slots.StageTimeOff
	if a.Reason != nil && *a.Reason == graph.ReasonFullyBooked {
		stage = slots.StageBooked
	}
	for _, b := range barbers {
		if !has[b] {
			empty = append(empty, slots.BarberStage{ID: b, Stage: stage})
		}
	}
	of := free.Of{UnitID: a.UnitID, ServiceID: a.ServiceID, Timezone: a.Timezone, Location: loc, Duration: 30 * time.Minute}
	return free.NewDay(of, date, barbers, open, true, empty)
}

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
			day := dayFrom(t, a, barbers)
			d := prepareDay(day)
			check := func(want *model.Availability, barber *string) {
				t.Helper()
				wantBody := encodeJSON(AvailabilityOf(want))
				if kept := encodeJSON(AvailabilityOf(day.Availability(barber))); !bytes.Equal(kept, wantBody) {
					t.Fatalf("barber %v: the day as graph keeps it:\n got %s\nwant %s", barber, kept, wantBody)
				}
				got := d.answer([]byte("stale bytes"[:0]), barber, day.Reason(barber))
				if !bytes.Equal(got, wantBody) {
					t.Fatalf("barber %v:\n got %s\nwant %s", barber, got, wantBody)
				}
			}
			check(a, nil)
			for _, b := range barbers {
				check(only(a, b), &b)
			}
			none := "brb_without_slots"
			check(day.Availability(&none), &none)
		})
	}
}

// A dozen barbers' day keeps their slots' times once: it costs a fraction
// of its every-barber answer in the cache.
func TestEncodedDaySize(t *testing.T) {
	a, barbers := twelveBarberDay(t)
	d := prepareDay(dayFrom(t, a, barbers))
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
	a, barbers := twelveBarberDay(b)
	day := dayFrom(b, a, barbers)
	for b.Loop() {
		prepareDay(day)
	}
}

// Putting answers together from a prepared day, as a cache hit does.
func BenchmarkEncodedDayAnswer(b *testing.B) {
	a, barbers := twelveBarberDay(b)
	d := prepareDay(dayFrom(b, a, barbers))
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
