package free

import (
	"testing"
	"time"

	"barberd/graph/slots"
)

// TestDayKeepsSlotsCompact checks that a Day keeps each free slot in 8
// bytes and gives back every start and barber exactly, on a day whose
// clocks change (Lisbon, 2027-03-28: 01:00 becomes 02:00).
func TestDayKeepsSlotsCompact(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	date := slots.Date{Year: 2027, Month: time.March, Day: 28}
	midnight := time.Date(2027, 3, 28, 0, 0, 0, 0, loc)
	order := []string{"brb_b", "brb_a"}
	var free []slots.Slot
	open := slots.Free{Base: midnight.Unix()}
	for i := range 96 { // every 15 minutes of the day's 23 hours, and past it
		start := midnight.Add(time.Duration(i) * 15 * time.Minute)
		for b, id := range []string{"brb_a", "brb_b"} {
			free = append(free, slots.Slot{Start: start, End: start.Add(30 * time.Minute), BarberID: id})
			open.Starts = append(open.Starts, slots.FreeStart{Offset: uint32(i * 15 * 60), Barber: uint32(1 - b)})
		}
	}
	of := Of{UnitID: "unt_1", ServiceID: "svc_1", Timezone: "Europe/Lisbon", Location: loc, Duration: 30 * time.Minute}
	d := NewDay(of, date, order, open, true, nil)
	i := 0
	for start, b := range d.Slots() {
		if want := free[i]; start != want.Start.UnixNano() || d.Barbers()[b] != want.BarberID {
			t.Fatalf("slot %d: %s %s, want %s %s", i, time.Unix(0, start), d.Barbers()[b], want.Start, want.BarberID)
		}
		i++
	}
	if i != len(free) {
		t.Fatalf("%d slots back, want %d", i, len(free))
	}
	if got, most := d.Size(), 256+8*len(free)+20*2; got > most {
		t.Errorf("Size %d, want at most %d (8 bytes a slot)", got, most)
	}
	// Without a barber, one slot per start: the first eligible (brb_b).
	next := d.AppendNext(nil, nil, midnight.Add(2*time.Hour), 0, 86400, 2)
	if len(next) != 2 || next[0].BarberID != "brb_b" || !next[0].StartsAtUtc.Equal(midnight.Add(2*time.Hour)) {
		t.Errorf("next free times %+v", next)
	}
}
