package slots_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"barberd/graph/slots"
)

// Fuzz targets for the parsers and the slot engine. Their seed corpora run in
// every `go test`; `go test -fuzz '^FuzzX$'` explores further.

// fzZones are the zones FuzzParseWallTime resolves every wall time in: no
// daylight saving, the usual one-hour changes on both hemispheres, a
// half-hour change (Lord Howe), a 45-minute offset (Chatham) and a change at
// midnight (São Paulo, until 2019).
var fzZones = []string{"UTC", "Europe/Lisbon", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham", "America/Sao_Paulo"}

func fzLoadZones(f *testing.F) []*time.Location {
	var locs []*time.Location
	for _, z := range fzZones {
		locs = append(locs, mustLoad(f, z))
	}
	return locs
}

// fzPeriod is one period of a zone: instants [start, end) in Unix seconds,
// all with the same UTC offset.
type fzPeriod struct{ start, end, off int64 }

// fzTimeline lists the periods of loc that meet the instants [lo, hi]. It is
// the oracle's view of a zone, built from ZoneBounds only, so it shares no
// code with the package's resolution of wall times.
func fzTimeline(loc *time.Location, lo, hi int64) []fzPeriod {
	var out []fzPeriod
	t := time.Unix(lo, 0).In(loc)
	for range 1000 {
		_, off := t.Zone()
		start, end := t.ZoneBounds()
		p := fzPeriod{start: math.MinInt64, end: math.MaxInt64, off: int64(off)}
		if !start.IsZero() {
			p.start = start.Unix()
		}
		if !end.IsZero() {
			p.end = end.Unix()
		}
		out = append(out, p)
		if p.end > hi || p.end <= t.Unix() {
			break
		}
		t = time.Unix(p.end, 0).In(loc)
	}
	return out
}

// fzAround is the timeline of loc near wall time u: no zone is ever more
// than 16 hours from UTC, and no gap is longer than a day.
func fzAround(loc *time.Location, u int64) []fzPeriod {
	return fzTimeline(loc, u-16*3600, u+40*3600)
}

// first returns the earliest instant of the timeline whose wall clock reads
// u (wall seconds, as if UTC), if any: within a period of offset off, the
// only candidate is u-off.
func fzFirst(periods []fzPeriod, u int64) (int64, bool) {
	for _, p := range periods {
		if t := u - p.off; p.start <= t && t < p.end {
			return t, true
		}
	}
	return 0, false
}

// fzAtOrAfter returns the earliest instant whose wall clock reads u or later:
// within a period the wall clock only moves forward.
func fzAtOrAfter(periods []fzPeriod, u int64) (int64, bool) {
	for _, p := range periods {
		if t := max(p.start, u-p.off); t < p.end {
			return t, true
		}
	}
	return 0, false
}

func fzWall(w slots.WallTime) int64 {
	return time.Date(w.Date.Year, w.Date.Month, w.Date.Day, w.Hour, w.Minute, w.Second, 0, time.UTC).Unix()
}

func FuzzParseWallTime(f *testing.F) {
	for _, s := range []string{
		"2026-06-15T09:00:00",
		"2027-03-28T01:30:00", // Lisbon: skipped
		"2026-03-29T01:00:00", // Lisbon: first skipped second
		"2026-03-29T00:59:59",
		"2026-10-25T01:30:00", // Lisbon: happens twice
		"2026-03-08T02:30:00", // New York: skipped
		"2026-11-01T01:30:00", // New York: happens twice
		"2026-10-04T02:15:00", // Lord Howe: skipped (half-hour change)
		"2026-04-05T01:45:00", // Lord Howe: happens twice
		"2026-09-27T03:00:00", // Chatham: skipped (02:45 -> 03:45)
		"2026-04-05T03:15:00", // Chatham: happens twice
		"2018-11-04T00:00:00", // São Paulo: midnight skipped
		"2018-11-04T00:59:59",
		"2019-02-16T23:30:00", // São Paulo: happens twice, on the eve
		"1883-11-18T12:02:00", // New York: local mean time to EST, clocks back 3m58s
		"1911-12-31T23:30:00", // Lisbon: local mean time to WET
		"2024-02-29T12:00:00",
		"2023-02-29T12:00:00",
		"2100-02-29T12:00:00",
		"2000-02-29T12:00:00",
		"2026-04-31T10:00:00",
		"2026-06-15T24:00:00",
		"2026-06-15T23:60:00",
		"2026-06-15T23:59:60",
		"2026-06-15T09:00:00Z",
		"2026-06-15T09:00:00+01:00",
		"2026-06-15T09:00:00.5",
		"2026-06-15T09:00",
		"2026-06-15 09:00:00",
		"2026-06-15t09:00:00",
		"2026-6-15T09:00:00",
		"+026-06-15T09:00:00",
		"-026-06-15T09:00:00",
		"2026-06-15T+9:00:00",
		"２026-06-15T09:00:00",
		"2026-06-15T09:00:0\u00e9",
		"0000-01-01T00:00:00",
		"9999-12-31T23:59:59",
		"2026-06-15",
		"",
	} {
		f.Add(s)
	}
	locs := fzLoadZones(f)
	f.Fuzz(func(t *testing.T, s string) {
		w, err := slots.ParseWallTime(s)
		if err != nil {
			if w != (slots.WallTime{}) {
				t.Fatalf("ParseWallTime(%q) = %+v with error %v", s, w, err)
			}
			return
		}
		if got := w.String(); got != s {
			t.Fatalf("ParseWallTime(%q).String() = %q", s, got)
		}
		u := fzWall(w)
		for _, loc := range locs {
			inst, err := w.In(loc)
			want, exists := fzFirst(fzAround(loc, u), u)
			switch {
			case err != nil && !errors.Is(err, slots.ErrNonexistentTime):
				t.Fatalf("%s in %s: unexpected error %v", s, loc, err)
			case err != nil && exists:
				t.Fatalf("%s in %s: ErrNonexistentTime, but %s reads it", s, loc, time.Unix(want, 0).In(loc))
			case err == nil && !exists:
				t.Fatalf("%s in %s: got %s, but no instant reads it", s, loc, inst)
			case err == nil && slots.Local(inst, loc) != s:
				t.Fatalf("%s in %s: got %s, which reads %s", s, loc, inst, slots.Local(inst, loc))
			case err == nil && inst.Unix() != want:
				t.Fatalf("%s in %s: got %s, but the earlier %s reads the same", s, loc, inst, time.Unix(want, 0).In(loc))
			case err == nil && inst.Nanosecond() != 0:
				t.Fatalf("%s in %s: got %s, not a whole second", s, loc, inst)
			}
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{
		"2026-06-15", "2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2026-04-31",
		"2026-12-31", "2026-13-01", "2026-00-10", "2026-01-00", "0000-01-01", "9999-12-31",
		"2026-6-15", "2026-06-15T00:00:00", "+026-06-15", "-026-06-15", "2026/06/15", "２026-06-15", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := slots.ParseDate(s)
		if err != nil {
			if d != (slots.Date{}) {
				t.Fatalf("ParseDate(%q) = %+v with error %v", s, d, err)
			}
			return
		}
		if got := d.String(); got != s {
			t.Fatalf("ParseDate(%q).String() = %q", s, got)
		}
		y, m, day := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).Date()
		if y != d.Year || m != d.Month || day != d.Day {
			t.Fatalf("ParseDate(%q) = %+v, which the calendar normalises to %d-%d-%d", s, d, y, m, day)
		}
		if back := d.AddDays(1).AddDays(-1); back != d {
			t.Fatalf("%s +1 -1 day = %s", d, back)
		}
	})
}

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{
		"00:00", "09:30", "23:59", "24:00", "24:01", "25:00", "12:60", "9:30", "09:3", "09-30",
		"+9:30", "-1:00", "09:30:00", "０9:30", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := slots.ParseClock(s)
		if err != nil {
			if c != 0 {
				t.Fatalf("ParseClock(%q) = %d with error %v", s, c, err)
			}
			return
		}
		if c < 0 || c > slots.EndOfDay {
			t.Fatalf("ParseClock(%q) = %d, outside the day", s, c)
		}
		if got := c.String(); got != s {
			t.Fatalf("ParseClock(%q).String() = %q", s, got)
		}
	})
}

// fzDays are the days FuzzFreeSlots starts from (then moves a day either
// way): ordinary days and the clock changes of the zones above.
var fzDays = []struct{ zone, date string }{
	{"UTC", "2026-06-15"},
	{"Europe/Lisbon", "2026-06-15"},
	{"Europe/Lisbon", "2026-03-29"},
	{"Europe/Lisbon", "2026-10-25"},
	{"Europe/Lisbon", "2027-03-28"},
	{"America/New_York", "2026-03-08"},
	{"America/New_York", "2026-11-01"},
	{"Australia/Lord_Howe", "2026-04-05"},
	{"Australia/Lord_Howe", "2026-10-04"},
	{"Pacific/Chatham", "2026-04-05"},
	{"Pacific/Chatham", "2026-09-27"},
	{"America/Sao_Paulo", "2018-11-04"},
	{"America/Sao_Paulo", "2019-02-16"},
	{"America/Sao_Paulo", "2026-06-15"},
}

// fzReader hands out the fuzzer's bytes as small numbers; past the end it
// reads zeros, so every input describes some day.
type fzReader []byte

func (r *fzReader) next() int {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return int(b)
}

func (r *fzReader) intn(n int) int    { return r.next() % n }
func (r *fzReader) bigIntn(n int) int { return (r.next()<<8 | r.next()) % n }

// fzSpan is a wall-clock span of up to maxLen minutes, clipped to the day.
func (r *fzReader) span(maxLen int) slots.Span {
	from := r.bigIntn(24*60 + 1)
	if r.intn(2) == 0 {
		from -= from % 15 // mostly on the quarter hour, like real rotas
	}
	return slots.Span{From: slots.Clock(from), To: slots.Clock(min(from+r.bigIntn(maxLen+1), 24*60))}
}

func (r *fzReader) interval(dayStart time.Time) slots.Interval {
	start := dayStart.Add(time.Duration(r.bigIntn(30*60)-3*60) * time.Minute)
	return slots.Interval{Start: start, End: start.Add(time.Duration(r.intn(241)) * time.Minute)}
}

// fzDay builds a small day from the fuzzer's bytes: at most 3 barbers, each
// with at most 3 spans, 2 breaks, 2 time-off and 4 busy intervals, and a
// step of at least 5 minutes, so one call stays cheap.
func fzDay(data []byte, locs map[string]*time.Location) slots.Day {
	r := fzReader(data)
	pick := fzDays[r.intn(len(fzDays))]
	loc := locs[pick.zone]
	d, _ := slots.ParseDate(pick.date)
	d = d.AddDays(r.intn(3) - 1)
	midnight := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC).Unix()
	dayStart, _ := fzAtOrAfter(fzAround(loc, midnight), midnight)

	day := slots.Day{
		Date:     d,
		Location: loc,
		Policy: slots.Policy{
			Step:        time.Duration(5+r.intn(56)) * time.Minute,
			MinLead:     time.Duration(r.intn(241)) * time.Minute,
			HorizonDays: r.intn(31),
		},
		Duration: time.Duration(5+r.intn(176)) * time.Minute,
		Buffer:   time.Duration(r.intn(31)) * time.Minute,
	}
	// Now lies mostly on the day itself, sometimes up to three days before
	// or two after it.
	if r.intn(2) == 0 {
		day.Now = time.Unix(dayStart, 0).Add(time.Duration(r.bigIntn(26*60*60)) * time.Second)
	} else {
		day.Now = time.Unix(dayStart, 0).Add(time.Duration(r.bigIntn(5*24*60)-3*24*60) * time.Minute)
	}
	ids := []string{"carla", "ana", "bruno"} // not in id order, so sorting shows
	for i := range 1 + r.intn(3) {
		b := slots.Barber{ID: ids[i]}
		for range 1 + r.intn(3) {
			b.Hours = append(b.Hours, r.span(12*60))
		}
		for range r.intn(3) {
			b.Breaks = append(b.Breaks, r.span(3*60))
		}
		for range r.intn(3) {
			b.TimeOff = append(b.TimeOff, r.interval(time.Unix(dayStart, 0)))
		}
		for range r.intn(5) {
			b.Busy = append(b.Busy, r.interval(time.Unix(dayStart, 0)))
		}
		day.Barbers = append(day.Barbers, b)
	}
	return day
}

// fzRuns is hours minus breaks as maximal runs of working minutes, from a
// bitmap of the day rather than span arithmetic.
func fzRuns(b slots.Barber) []slots.Span {
	var working [24 * 60]bool
	mark := func(spans []slots.Span, v bool) {
		for _, s := range spans {
			for m := max(int(s.From), 0); m < min(int(s.To), 24*60); m++ {
				working[m] = v
			}
		}
	}
	mark(b.Hours, true)
	mark(b.Breaks, false)
	var runs []slots.Span
	for m := 0; m < 24*60; m++ {
		if !working[m] {
			continue
		}
		from := m
		for m < 24*60 && working[m] {
			m++
		}
		runs = append(runs, slots.Span{From: slots.Clock(from), To: slots.Clock(m)})
	}
	return runs
}

func fzOverlapsAny(start, end time.Time, ivs []slots.Interval) bool {
	for _, iv := range ivs {
		if iv.Start.Before(iv.End) && start.Before(iv.End) && iv.Start.Before(end) {
			return true
		}
	}
	return false
}

func FuzzFreeSlots(f *testing.F) {
	f.Add([]byte{})
	for i := range fzDays {
		// One ordinary barber 09:00-19:00 with a lunch break, now at the
		// start of the day, on each seed day and the days around it.
		for shift := range 3 {
			f.Add([]byte{byte(i), byte(shift), 10, 0, 30, 25, 10, 0, 0, 0,
				0,                            // one barber
				0, 0x02, 0x1c, 0, 0x02, 0x58, // hours 09:00 for 600 min
				1, 0x02, 0xd0, 1, 0, 60, // break 12:00 for 60 min
				1, 0x01, 0x68, 90, // time off 03:00 (+3h offset) for 90 min
				2, 0x02, 0x58, 45, 0x02, 0xd0, 30, // busy
			})
		}
	}
	// Round-the-clock shifts across the São Paulo midnight gap and the
	// Chatham change, with a step that does not divide the hour.
	f.Add([]byte{11, 1, 2, 0, 55, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0x02, 0xd0, 0, 0x02, 0xd0, 0x02, 0xd0})
	f.Add([]byte{10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x78, 0, 0x02, 0xd0})
	f.Add([]byte{3, 1, 19, 0, 7, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0x02, 0xd0, 0x05, 0x46, 0, 0x00, 0xff})

	locs := map[string]*time.Location{}
	for _, d := range fzDays {
		locs[d.zone] = mustLoad(f, d.zone)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		day := fzDay(data, locs)
		free := slots.FreeSlots(day)

		loc := day.Location
		midnight := time.Date(day.Date.Year, day.Date.Month, day.Date.Day, 0, 0, 0, 0, time.UTC).Unix()
		zone := fzTimeline(loc, midnight-16*3600, midnight+3*24*3600)
		step := int64(day.Policy.Step / time.Second)
		today := slots.DateOf(day.Now, loc)
		lastDay := today.AddDays(day.Policy.HorizonDays)
		inWindow := day.Date.Compare(today) >= 0 && day.Date.Compare(lastDay) <= 0

		type key struct {
			start  int64
			barber string
		}
		got := map[key]bool{}
		for i, s := range free {
			if i > 0 {
				p := free[i-1]
				if c := s.Start.Compare(p.Start); c < 0 || c == 0 && s.BarberID <= p.BarberID {
					t.Fatalf("slots out of order or repeated: %v %s before %v %s", p.Start, p.BarberID, s.Start, s.BarberID)
				}
			}
			got[key{s.Start.Unix(), s.BarberID}] = true
		}

		// Completeness and soundness against an independent derivation:
		// every grid time of every working run that exists and passes the
		// rules must be offered, and nothing else.
		want := map[key]bool{}
		for _, b := range day.Barbers {
			for _, run := range fzRuns(b) {
				end, _ := fzAtOrAfter(zone, midnight+int64(run.To)*60)
				for sec := int64(run.From) * 60; sec < int64(run.To)*60; sec += step {
					first, ok := fzFirst(zone, midnight+sec)
					if !ok {
						continue
					}
					start := time.Unix(first, 0)
					stop := start.Add(day.Duration)
					if inWindow && stop.Unix() <= end &&
						!fzOverlapsAny(start, stop, b.TimeOff) &&
						!fzOverlapsAny(start, stop.Add(day.Buffer), b.Busy) &&
						!start.Before(day.Now.Add(day.Policy.MinLead)) && !start.Before(day.Now) &&
						slots.DateOf(start, loc).Compare(lastDay) <= 0 {
						want[key{first, b.ID}] = true
					}
				}
			}
		}
		for _, s := range free {
			if !s.End.Equal(s.Start.Add(day.Duration)) {
				t.Fatalf("slot %v-%v %s does not last %v", s.Start, s.End, s.BarberID, day.Duration)
			}
			if s.Start.Nanosecond() != 0 {
				t.Fatalf("slot %v %s does not start on a whole second", s.Start, s.BarberID)
			}
			if err := day.Policy.Admits(day.Now, s.Start, loc); err != nil {
				t.Fatalf("slot %v %s is not admitted: %v", s.Start, s.BarberID, err)
			}
			i := slices.IndexFunc(day.Barbers, func(b slots.Barber) bool { return b.ID == s.BarberID })
			if i < 0 {
				t.Fatalf("slot %v for unknown barber %q", s.Start, s.BarberID)
			}
			b := day.Barbers[i]
			if fzOverlapsAny(s.Start, s.End.Add(day.Buffer), b.Busy) {
				t.Fatalf("slot %v-%v (+%v) %s overlaps busy %v", s.Start, s.End, day.Buffer, s.BarberID, b.Busy)
			}
			if fzOverlapsAny(s.Start, s.End, b.TimeOff) {
				t.Fatalf("slot %v-%v %s overlaps time off %v", s.Start, s.End, s.BarberID, b.TimeOff)
			}
			if !want[key{s.Start.Unix(), s.BarberID}] {
				t.Fatalf("slot %s %s is offered but is not a free grid time of a working span of %s (step %v, duration %v, day %+v)",
					slots.Local(s.Start, loc), s.BarberID, day.Date, day.Policy.Step, day.Duration, b)
			}
		}
		for k := range want {
			if !got[k] {
				t.Fatalf("free grid time %s %s (%s) missing from %d slots (step %v, duration %v, now %v, lead %v)",
					slots.Local(time.Unix(k.start, 0), loc), k.barber, day.Date, len(free), day.Policy.Step, day.Duration,
					day.Now.In(loc), day.Policy.MinLead)
			}
		}
	})
}
