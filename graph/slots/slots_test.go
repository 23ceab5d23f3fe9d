package slots_test

import (
	"slices"
	"testing"
	"time"

	"barberd/graph/slots"
)

// barber is a test barber whose busy and time-off intervals are written as
// local wall times "YYYY-MM-DDTHH:MM:SS" pairs.
type barber struct {
	id      string
	hours   []string
	breaks  []string
	busy    [][2]string
	timeOff [][2]string
}

func (b barber) build(t testing.TB, loc *time.Location) slots.Barber {
	t.Helper()
	intervals := func(pairs [][2]string) []slots.Interval {
		var out []slots.Interval
		for _, p := range pairs {
			out = append(out, slots.Interval{Start: at(t, loc, p[0]), End: at(t, loc, p[1])})
		}
		return out
	}
	return slots.Barber{
		ID:      b.id,
		Hours:   spans(t, b.hours...),
		Breaks:  spans(t, b.breaks...),
		Busy:    intervals(b.busy),
		TimeOff: intervals(b.timeOff),
	}
}

func TestFreeSlots(t *testing.T) {
	const (
		monday = "2026-06-15"
		sunday = "2026-06-14"
	)
	half := 30 * time.Minute
	defaultPolicy := slots.Policy{Step: half, HorizonDays: 30}
	ana := func(hours ...string) barber { return barber{id: "ana", hours: hours} }

	tests := []struct {
		name     string
		date     string
		now      string // local wall time; default: the day before at 08:00
		policy   *slots.Policy
		duration time.Duration // default 30m
		buffer   time.Duration
		barbers  []barber
		want     []string
	}{
		{
			name:    "plain day",
			barbers: []barber{ana("09:00-11:00")},
			want:    []string{"09:00 ana", "09:30 ana", "10:00 ana", "10:30 ana"},
		},
		{
			name:    "break",
			barbers: []barber{{id: "ana", hours: []string{"09:00-13:00"}, breaks: []string{"10:00-11:30"}}},
			want:    []string{"09:00 ana", "09:30 ana", "11:30 ana", "12:00 ana", "12:30 ana"},
		},
		{
			name:    "break overlapping the end of the hours",
			barbers: []barber{{id: "ana", hours: []string{"09:00-12:00"}, breaks: []string{"11:00-13:00"}}},
			want:    []string{"09:00 ana", "09:30 ana", "10:00 ana", "10:30 ana"},
		},
		{
			name:     "step and must end inside the span",
			policy:   &slots.Policy{Step: 20 * time.Minute, HorizonDays: 30},
			duration: 45 * time.Minute,
			barbers:  []barber{ana("09:00-10:30")},
			want:     []string{"09:00 ana", "09:20 ana", "09:40 ana"},
		},
		{
			name:     "grid restarts at each span",
			policy:   &slots.Policy{Step: 45 * time.Minute, HorizonDays: 30},
			barbers:  []barber{{id: "ana", hours: []string{"09:00-13:00"}, breaks: []string{"10:00-10:10"}}},
			duration: half,
			want:     []string{"09:00 ana", "10:10 ana", "10:55 ana", "11:40 ana", "12:25 ana"},
		},
		{
			name:     "adjacent hours merge into one grid",
			policy:   &slots.Policy{Step: 45 * time.Minute, HorizonDays: 30},
			barbers:  []barber{ana("10:00-11:00", "09:00-10:00")},
			duration: half,
			want:     []string{"09:00 ana", "09:45 ana", "10:30 ana"},
		},
		{
			name:    "hours until midnight",
			barbers: []barber{ana("22:00-24:00")},
			want:    []string{"22:00 ana", "22:30 ana", "23:00 ana", "23:30 ana"},
		},
		{
			name:    "lead time",
			date:    monday,
			now:     monday + "T09:10:00",
			policy:  &slots.Policy{Step: half, MinLead: time.Hour, HorizonDays: 30},
			barbers: []barber{ana("09:00-12:00")},
			want:    []string{"10:30 ana", "11:00 ana", "11:30 ana"},
		},
		{
			name:    "start exactly at now plus lead time",
			now:     monday + "T09:00:00",
			policy:  &slots.Policy{Step: half, MinLead: half, HorizonDays: 30},
			barbers: []barber{ana("09:00-11:00")},
			want:    []string{"09:30 ana", "10:00 ana", "10:30 ana"},
		},
		{
			name:    "today after closing",
			now:     monday + "T19:00:00",
			barbers: []barber{ana("09:00-11:00")},
			want:    []string{},
		},
		{
			name:    "past day",
			now:     "2026-06-16T08:00:00",
			barbers: []barber{ana("09:00-11:00")},
			want:    []string{},
		},
		{
			name:    "last day of the horizon",
			date:    "2026-06-22",
			now:     monday + "T23:30:00",
			policy:  &slots.Policy{Step: half, HorizonDays: 7},
			barbers: []barber{ana("09:00-10:00")},
			want:    []string{"09:00 ana", "09:30 ana"},
		},
		{
			name:    "day after the horizon",
			date:    "2026-06-23",
			now:     monday + "T23:30:00",
			policy:  &slots.Policy{Step: half, HorizonDays: 7},
			barbers: []barber{ana("09:00-10:00")},
			want:    []string{},
		},
		{
			name:   "busy with buffer: touching edges allowed",
			buffer: 10 * time.Minute,
			barbers: []barber{{id: "ana", hours: []string{"09:00-12:00"}, busy: [][2]string{
				{monday + "T08:30:00", monday + "T09:00:00"},
				{monday + "T10:40:00", monday + "T11:00:00"},
			}}},
			want: []string{"09:00 ana", "09:30 ana", "10:00 ana", "11:00 ana", "11:30 ana"},
		},
		{
			name:   "busy with buffer: overlap by one minute refused",
			buffer: 10 * time.Minute,
			barbers: []barber{{id: "ana", hours: []string{"09:00-12:00"}, busy: [][2]string{
				{monday + "T08:30:00", monday + "T09:01:00"},
				{monday + "T10:39:00", monday + "T11:00:00"},
			}}},
			want: []string{"09:30 ana", "11:00 ana", "11:30 ana"},
		},
		{
			name:   "nested and unsorted busy intervals",
			buffer: 0,
			barbers: []barber{{id: "ana", hours: []string{"09:00-13:00"}, busy: [][2]string{
				{monday + "T09:15:00", monday + "T09:20:00"},
				{monday + "T09:00:00", monday + "T11:00:00"},
				{monday + "T12:00:00", monday + "T12:00:00"},
			}}},
			want: []string{"11:00 ana", "11:30 ana", "12:00 ana", "12:30 ana"},
		},
		{
			name:    "buffer may spill past the end of the span",
			buffer:  15 * time.Minute,
			barbers: []barber{ana("09:00-10:00")},
			want:    []string{"09:00 ana", "09:30 ana"},
		},
		{
			name:   "time off blocks the service but not the buffer",
			buffer: 10 * time.Minute,
			barbers: []barber{{id: "ana", hours: []string{"09:00-12:00"}, timeOff: [][2]string{
				{monday + "T09:30:00", monday + "T10:30:00"},
				{monday + "T11:30:00", monday + "T18:00:00"},
			}}},
			want: []string{"09:00 ana", "10:30 ana", "11:00 ana"},
		},
		{
			name: "multiple barbers sorted by start then id",
			barbers: []barber{
				{id: "carl", hours: []string{"10:00-11:00"}},
				ana("09:30-10:30"),
				{id: "bea", hours: []string{"09:00-10:30"}, busy: [][2]string{{monday + "T09:30:00", monday + "T10:00:00"}}},
			},
			want: []string{"09:00 bea", "09:30 ana", "10:00 ana", "10:00 bea", "10:00 carl", "10:30 carl"},
		},
		{
			name:    "Sunday closed",
			date:    sunday,
			now:     "2026-06-13T08:00:00",
			barbers: []barber{ana()},
			want:    []string{},
		},
		{
			name:    "no barbers",
			barbers: nil,
			want:    []string{},
		},
		{
			name:    "zero step gives no slots",
			policy:  &slots.Policy{HorizonDays: 30},
			barbers: []barber{ana("09:00-11:00")},
			want:    []string{},
		},
		{
			name:     "negative duration gives no slots",
			duration: -time.Minute,
			barbers:  []barber{ana("09:00-11:00")},
			want:     []string{},
		},
		{
			name:     "service longer than the span",
			duration: 3 * time.Hour,
			barbers:  []barber{ana("09:00-11:00")},
			want:     []string{},
		},
	}
	loc := mustLoad(t, "Europe/Lisbon")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			day := slots.Day{
				Date:     mustDate(t, monday),
				Location: loc,
				Policy:   defaultPolicy,
				Duration: half,
				Buffer:   tt.buffer,
			}
			if tt.date != "" {
				day.Date = mustDate(t, tt.date)
			}
			day.Now = at(t, loc, day.Date.AddDays(-1).String()+"T08:00:00")
			if tt.now != "" {
				day.Now = at(t, loc, tt.now)
			}
			if tt.policy != nil {
				day.Policy = *tt.policy
			}
			if tt.duration != 0 {
				day.Duration = tt.duration
			}
			for _, b := range tt.barbers {
				day.Barbers = append(day.Barbers, b.build(t, loc))
			}
			got := slots.FreeSlots(day)
			if d := describe(got, loc, false); !slices.Equal(d, tt.want) {
				t.Errorf("FreeSlots =\n  %q\nwant\n  %q", d, tt.want)
			}
			checkSlots(t, day, got)
		})
	}
}

// checkSlots asserts what holds for every result: services last Duration of
// elapsed time, starts fall on the requested day, each start is its wall
// time's first occurrence, no barber is offered the same start twice, and
// the order is by start, then barber.
func checkSlots(t *testing.T, day slots.Day, got []slots.Slot) {
	t.Helper()
	seen := map[string]bool{}
	for i, s := range got {
		if s.End.Sub(s.Start) != day.Duration {
			t.Errorf("slot %v lasts %v, want %v", s, s.End.Sub(s.Start), day.Duration)
		}
		if d := slots.DateOf(s.Start, day.Location); d != day.Date {
			t.Errorf("slot %v is on %v, want %v", s, d, day.Date)
		}
		w, err := slots.ParseWallTime(slots.Local(s.Start, day.Location))
		if err != nil {
			t.Fatal(err)
		}
		if first, err := w.In(day.Location); err != nil || !first.Equal(s.Start) {
			t.Errorf("slot %v is not the first occurrence of %v (%v, %v)", s, w, first, err)
		}
		key := w.String() + " " + s.BarberID
		if seen[key] {
			t.Errorf("local start %s offered twice", key)
		}
		seen[key] = true
		if i > 0 {
			prev := got[i-1]
			if prev.Start.After(s.Start) || prev.Start.Equal(s.Start) && prev.BarberID >= s.BarberID {
				t.Errorf("slots %v and %v out of order", prev, s)
			}
		}
	}
}

func TestSlotBlock(t *testing.T) {
	start := utc(t, "2026-06-15T09:00:00Z")
	s := slots.Slot{Start: start, End: start.Add(30 * time.Minute), BarberID: "ana"}
	got := s.Block(10 * time.Minute)
	if !got.Start.Equal(start) || !got.End.Equal(start.Add(40*time.Minute)) {
		t.Errorf("Block = %v, want [09:00, 09:40)", got)
	}
}
