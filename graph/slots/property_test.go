package slots_test

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"barberd/graph/slots"
)

// The oracle below re-derives the rules of FreeSlots the slow, obvious way:
// working minutes from a bitmap, wall times resolved by scanning instants one
// after another, overlaps by looping over every interval.

// oracleDays mixes ordinary days with the clock-change days of the DST tests.
var oracleDays = []struct{ zone, date string }{
	{"UTC", "2026-06-15"},
	{"Europe/Lisbon", "2026-06-15"},
	{"Europe/Lisbon", "2026-03-29"},
	{"Europe/Lisbon", "2026-10-25"},
	{"America/New_York", "2026-03-08"},
	{"America/New_York", "2026-11-01"},
	{"Australia/Sydney", "2026-04-05"},
	{"Australia/Sydney", "2026-10-04"},
	{"Australia/Lord_Howe", "2026-04-05"},
	{"Australia/Lord_Howe", "2026-10-04"},
	{"Pacific/Chatham", "2026-04-05"},
	{"Pacific/Chatham", "2026-09-27"},
	{"America/Sao_Paulo", "2018-11-04"},
	{"America/Sao_Paulo", "2019-02-16"},
}

// wallOf encodes the wall clock of t in loc as seconds, comparable with
// wallSeconds.
func wallOf(t time.Time, loc *time.Location) int64 {
	_, off := t.In(loc).Zone()
	return t.Unix() + int64(off)
}

func wallSeconds(d slots.Date, sec int) int64 {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, sec, 0, time.UTC).Unix()
}

// scanFirst returns the earliest instant whose wall clock reads u, stepping
// by a quarter hour: every offset and transition of the zones above is a
// multiple of 15 minutes, and u is a whole minute.
func scanFirst(u int64, loc *time.Location) (time.Time, bool) {
	for t := time.Unix(u-16*3600, 0); t.Unix() <= u+16*3600; t = t.Add(15 * time.Minute) {
		if wallOf(t, loc) == u {
			return t, true
		}
	}
	return time.Time{}, false
}

// scanAtOrAfter returns the earliest instant whose wall clock reads u or
// later: the first occurrence of u, or the end of the gap that skips it.
func scanAtOrAfter(u int64, loc *time.Location) time.Time {
	for t := time.Unix(u-16*3600, 0); ; t = t.Add(time.Minute) {
		if wallOf(t, loc) >= u {
			return t
		}
	}
}

func TestWallTimeInMatchesScan(t *testing.T) {
	for _, od := range oracleDays {
		loc := mustLoad(t, od.zone)
		for _, date := range []slots.Date{mustDate(t, od.date).AddDays(-1), mustDate(t, od.date)} {
			for m := 0; m < 24*60; m++ {
				w := slots.WallTime{Date: date, Hour: m / 60, Minute: m % 60}
				got, err := w.In(loc)
				want, exists := scanFirst(wallSeconds(date, m*60), loc)
				switch {
				case !exists && !errors.Is(err, slots.ErrNonexistentTime):
					t.Errorf("%s %v: In = %v, %v; want ErrNonexistentTime", od.zone, w, got, err)
				case exists && (err != nil || !got.Equal(want)):
					t.Errorf("%s %v: In = %v, %v; want %v", od.zone, w, got, err, want)
				}
			}
		}
	}
}

func TestFreeSlotsMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(20260615))
	offered, refused := 0, 0
	for trial := range 300 {
		od := oracleDays[rng.Intn(len(oracleDays))]
		loc := mustLoad(t, od.zone)
		day := randomDay(rng, loc, mustDate(t, od.date))
		t.Run(fmt.Sprintf("trial %d %s %s", trial, od.zone, od.date), func(t *testing.T) {
			got := slots.FreeSlots(day)
			checkSlots(t, day, got)
			returned := map[string]bool{}
			for _, s := range got {
				returned[s.BarberID+" "+slots.Local(s.Start, loc)] = true
			}
			for _, c := range oracleCandidates(day) {
				key := c.slot.BarberID + " " + slots.Local(c.slot.Start, loc)
				switch {
				case returned[key] && len(c.broken) > 0:
					t.Errorf("offered %s, which breaks: %s", key, strings.Join(c.broken, ", "))
				case !returned[key] && len(c.broken) == 0:
					t.Errorf("did not offer %s, which breaks no rule", key)
				}
				if len(c.broken) == 0 {
					offered++
				} else {
					refused++
				}
				delete(returned, key)
			}
			for key := range returned {
				t.Errorf("offered %s, which is not on the wall-clock grid of any working span", key)
			}
			if t.Failed() {
				t.Logf("day: %+v", day)
			}
		})
	}
	t.Logf("grid candidates: %d offered, %d refused", offered, refused)
}

type candidate struct {
	slot   slots.Slot
	broken []string
}

// oracleCandidates lists every existing wall-clock grid start of every
// barber with the rules it breaks.
func oracleCandidates(d slots.Day) []candidate {
	loc := d.Location
	step := int(d.Policy.Step / time.Minute)
	var out []candidate
	for _, b := range d.Barbers {
		var working [24 * 60]bool
		for _, h := range b.Hours {
			for m := max(int(h.From), 0); m < min(int(h.To), 24*60); m++ {
				working[m] = true
			}
		}
		for _, br := range b.Breaks {
			for m := max(int(br.From), 0); m < min(int(br.To), 24*60); m++ {
				working[m] = false
			}
		}
		for from := 0; from < 24*60; from++ {
			if !working[from] || from > 0 && working[from-1] {
				continue
			}
			to := from
			for to < 24*60 && working[to] {
				to++
			}
			spanEnd := scanAtOrAfter(wallSeconds(d.Date, to*60), loc)
			for m := from; m < to; m += step {
				start, exists := scanFirst(wallSeconds(d.Date, m*60), loc)
				if !exists {
					continue
				}
				c := candidate{slot: slots.Slot{Start: start, End: start.Add(d.Duration), BarberID: b.ID}}
				c.broken = brokenRules(d, b, c.slot, spanEnd)
				out = append(out, c)
			}
		}
	}
	return out
}

func brokenRules(d slots.Day, b slots.Barber, s slots.Slot, spanEnd time.Time) []string {
	var broken []string
	if s.End.After(spanEnd) {
		broken = append(broken, "ends after the working span")
	}
	for _, off := range b.TimeOff {
		if (slots.Interval{Start: s.Start, End: s.End}).Overlaps(off) {
			broken = append(broken, "overlaps time off")
		}
	}
	block := slots.Interval{Start: s.Start, End: s.End.Add(d.Buffer)}
	for _, busy := range b.Busy {
		if block.Overlaps(busy) {
			broken = append(broken, "overlaps a booking")
		}
	}
	if s.Start.Before(d.Now) {
		broken = append(broken, "in the past")
	}
	if s.Start.Before(d.Now.Add(d.Policy.MinLead)) {
		broken = append(broken, "inside the lead time")
	}
	today := d.Now.In(d.Location)
	lastDay := time.Date(today.Year(), today.Month(), today.Day()+d.Policy.HorizonDays, 0, 0, 0, 0, time.UTC)
	start := s.Start.In(d.Location)
	if time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC).After(lastDay) {
		broken = append(broken, "beyond the horizon")
	}
	return broken
}

func randomDay(rng *rand.Rand, loc *time.Location, date slots.Date) slots.Day {
	pick := func(options ...int) int { return options[rng.Intn(len(options))] }
	minutes := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	clock := func() slots.Clock { return slots.Clock(5 * rng.Intn(24*12+1)) }
	randomSpans := func(n int) []slots.Span {
		var out []slots.Span
		for range n {
			a, b := clock(), clock()
			out = append(out, slots.Span{From: min(a, b), To: max(a, b)})
		}
		return out
	}
	midnight := scanAtOrAfter(wallSeconds(date, 0), loc)
	randomIntervals := func(n, maxLen int) []slots.Interval {
		var out []slots.Interval
		for range n {
			start := midnight.Add(minutes(5*rng.Intn(26*12) - 60))
			out = append(out, slots.Interval{Start: start, End: start.Add(minutes(5 + 5*rng.Intn(maxLen/5)))})
		}
		return out
	}
	d := slots.Day{
		Date:     date,
		Location: loc,
		Now:      midnight.Add(minutes(5*rng.Intn(3*24*12) - 2*24*60)),
		Policy: slots.Policy{
			Step:        minutes(pick(5, 10, 15, 20, 30, 45, 60)),
			MinLead:     minutes(pick(0, 0, 30, 120)),
			HorizonDays: pick(0, 1, 2, 7),
		},
		Duration: minutes(pick(15, 30, 45, 60, 90)),
		Buffer:   minutes(pick(0, 0, 5, 10, 15)),
	}
	for i := range 1 + rng.Intn(3) {
		d.Barbers = append(d.Barbers, slots.Barber{
			ID:      string(rune('a' + i)),
			Hours:   randomSpans(1 + rng.Intn(3)),
			Breaks:  randomSpans(rng.Intn(3)),
			TimeOff: randomIntervals(rng.Intn(3), 240),
			Busy:    randomIntervals(rng.Intn(8), 120),
		})
	}
	return d
}
