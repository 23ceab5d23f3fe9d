package slots_test

import (
	"fmt"
	"testing"
	"time"

	"barberd/graph/slots"
)

// BenchmarkFreeSlots is a busy day at a large unit: 10 barbers working
// 09:00-19:00 with a lunch break, a 15-minute grid, 30-minute services and
// about 20 bookings each.
func BenchmarkFreeSlots(b *testing.B) {
	loc := mustLoad(b, "Europe/Lisbon")
	date := mustDate(b, "2026-06-15")
	open := at(b, loc, "2026-06-15T09:00:00")
	day := slots.Day{
		Date:     date,
		Location: loc,
		Now:      at(b, loc, "2026-06-15T08:00:00"),
		Policy:   slots.Policy{Step: 15 * time.Minute, MinLead: 30 * time.Minute, HorizonDays: 30},
		Duration: 30 * time.Minute,
		Buffer:   5 * time.Minute,
	}
	for i := range 10 {
		barber := slots.Barber{
			ID:     fmt.Sprintf("barber-%02d", i),
			Hours:  spans(b, "09:00-19:00"),
			Breaks: spans(b, "13:00-14:00"),
		}
		for j := range 20 {
			start := open.Add(time.Duration(j*30+i*5) * time.Minute)
			barber.Busy = append(barber.Busy, slots.Interval{Start: start, End: start.Add(20 * time.Minute)})
		}
		day.Barbers = append(day.Barbers, barber)
	}
	if len(slots.FreeSlots(day)) == 0 {
		b.Fatal("benchmark day has no free slots")
	}
	b.ReportAllocs()
	for b.Loop() {
		slots.FreeSlots(day)
	}
}
