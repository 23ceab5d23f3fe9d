package slots

import (
	"cmp"
	"math/bits"
	"slices"
	"time"
)

// Barber is one barber's input for one day.
type Barber struct {
	ID      string
	Hours   []Span     // working spans of this weekday at this unit (e.g. 09:00-12:00, 13:00-19:00)
	Breaks  []Span     // wall-clock breaks to subtract from Hours (e.g. 12:00-13:00); may overlap Hours partially
	TimeOff []Interval // instants when the barber is away (holidays, sick, ...)
	Busy    []Interval // existing blocking bookings (confirmed appointments, active holds), each already including its own buffer
}

// Day is everything needed to compute one local day's slots.
type Day struct {
	Date     Date
	Location *time.Location
	Now      time.Time
	Policy   Policy
	Duration time.Duration // service duration
	Buffer   time.Duration // cleanup time after the service; blocks the barber but may spill past the end of a working span
	Barbers  []Barber
}

// Slot is a bookable appointment: one barber, one service interval.
type Slot struct {
	Start, End time.Time // End = Start + Duration (elapsed time)
	BarberID   string
}

// Block is the time the slot keeps the barber from other bookings: the
// service plus the cleanup buffer after it.
func (s Slot) Block(buffer time.Duration) Interval {
	return Interval{Start: s.Start, End: s.End.Add(buffer)}
}

// FreeSlots returns the free slots of the day, sorted by start, then barber
// id; nil when there are none (see the package doc for when a slot is
// offered, and when a day has none). It is FreeStarts as slots.
func FreeSlots(d Day) []Slot {
	f := FreeStarts(d)
	if len(f.Starts) == 0 {
		return nil
	}
	out := make([]Slot, len(f.Starts))
	for i, s := range f.Starts {
		start := f.Start(s).In(d.Location)
		out[i] = Slot{Start: start, End: start.Add(d.Duration), BarberID: d.Barbers[s.Barber].ID}
	}
	return out
}

// Free is a day's free slots as FreeStarts finds them, in 8 bytes each:
// what an availability answer is made of, without a Slot per slot.
type Free struct {
	// Base is the Unix seconds of the first free slot's start (slot
	// starts are whole seconds: the grid's wall times, resolved).
	Base int64
	// Starts are the free slots, sorted by start, then barber id.
	Starts []FreeStart
}

// FreeStart is a free slot: its start, in seconds after Free.Base, and its
// barber, an index into the Day's Barbers.
type FreeStart struct {
	Offset, Barber uint32
}

// Start is the instant s starts (in UTC).
func (f Free) Start(s FreeStart) time.Time { return time.Unix(f.Base+int64(s.Offset), 0) }

// FreeStarts is FreeSlots in the compact form: the same slots, in the
// same order.
func FreeStarts(d Day) Free {
	step := d.Policy.Step / time.Second * time.Second
	if step <= 0 || d.Duration <= 0 || d.Location == nil {
		return Free{}
	}
	if !d.withinWindow() {
		return Free{}
	}
	duration, block := int64(d.Duration), int64(d.Duration+max(d.Buffer, 0))
	grid := newGrid(d.Date, d.Location, step)
	// Policy.Admits, once for the day: a start is neither past nor sooner
	// than the lead, and its local date (d.Date's, as every grid time's)
	// is within the horizon: it starts before the day after the last.
	earliest := d.Now
	if lead := d.Now.Add(d.Policy.MinLead); lead.After(earliest) {
		earliest = lead
	}
	from := nanos(earliest)
	beyond := nanos(d.Policy.lastDay(d.Now, d.Location).AddDays(1).Start(d.Location))

	// Each barber's free starts, as keys that sort as the slots do: the
	// start's Unix seconds above the barber's rank by id. The grid's
	// starts are whole seconds, a day's fewer than 2^32 from the first.
	ranks := idRanks(d.Barbers)
	shift := uint(bits.Len(uint(len(d.Barbers))))
	var keys []int64
	runs := make([]int, 0, len(d.Barbers)) // where each barber's keys end
	for i, b := range d.Barbers {
		if i == 1 { // barbers of a unit mostly work alike: room for as many as the first
			keys = slices.Grow(keys, len(keys)*(len(d.Barbers)-1))
		}
		timeOff, busy := newBlockers(b.TimeOff), newBlockers(b.Busy)
		for _, span := range workingSpans(b.Hours, b.Breaks) {
			resolved := grid.resolve(span)
			for _, sec := range resolved.starts {
				start := sec * int64(time.Second)
				if start < from || start >= beyond || start+duration > resolved.end ||
					timeOff.hit(start, start+duration) || busy.hit(start, start+block) {
					continue
				}
				keys = append(keys, sec<<shift|int64(ranks[i]))
			}
		}
		if len(runs) == 0 || runs[len(runs)-1] < len(keys) {
			runs = append(runs, len(keys))
		}
	}
	if len(keys) == 0 {
		return Free{}
	}
	keys = mergeRuns(keys, runs)
	byRank := make([]uint32, len(ranks))
	for i, r := range ranks {
		byRank[r] = uint32(i)
	}
	first := keys[0] >> shift
	f := Free{Base: first, Starts: make([]FreeStart, len(keys))}
	mask := int64(1)<<shift - 1
	for i, k := range keys {
		f.Starts[i] = FreeStart{Offset: uint32(k>>shift - first), Barber: byRank[k&mask]}
	}
	return f
}

// mergeRuns sorts keys made of runs (runs[i] is where the i-th ends), each
// sorted as a barber's starts are (its spans are disjoint and in order):
// merged two by two, a few passes over the keys, where sorting them would
// compare each many times. A run out of order sorts them instead.
func mergeRuns(keys []int64, runs []int) []int64 {
	from := 0
	for _, to := range runs {
		if !slices.IsSorted(keys[from:to]) {
			slices.Sort(keys)
			return keys
		}
		from = to
	}
	buf := make([]int64, len(keys))
	for len(runs) > 1 {
		next, from := runs[:0], 0
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				copy(buf[from:runs[i]], keys[from:runs[i]])
				next = append(next, runs[i])
				break
			}
			mid, to := runs[i], runs[i+1]
			mergeTwo(buf[from:to], keys[from:mid], keys[mid:to])
			next, from = append(next, to), to
		}
		keys, buf, runs = buf, keys, next
	}
	return keys
}

// mergeTwo merges sorted a and b into dst (len(a)+len(b) long).
func mergeTwo(dst, a, b []int64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[k], j = b[j], j+1
		} else {
			dst[k], i = a[i], i+1
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// idRanks is each barber's place in the order of their ids (ties in the
// order given).
func idRanks(bs []Barber) []int {
	order := make([]int, len(bs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bs[a].ID, bs[b].ID) })
	ranks := make([]int, len(bs))
	for r, i := range order {
		ranks[i] = r
	}
	return ranks
}

// withinWindow is a shortcut for whole days the policy rules out: every
// slot start lies on d.Date, so a past day or one beyond the horizon has none.
func (d Day) withinWindow() bool {
	today := DateOf(d.Now, d.Location)
	return d.Date.Compare(today) >= 0 && d.Date.Compare(d.Policy.lastDay(d.Now, d.Location)) <= 0
}

func compareSlots(a, b Slot) int {
	if c := a.Start.Compare(b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.BarberID, b.BarberID)
}

// grid resolves the wall-clock slot starts of working spans on one day to
// instants. Barbers of a unit mostly share their hours, so each span is
// resolved once per call.
type grid struct {
	date  Date
	loc   *time.Location
	step  int // seconds
	spans map[Span]resolvedSpan
	// fixed: one offset of loc (offset, seconds east of UTC) holds from
	// two days before the date to two days after it, so each wall time
	// of the day names exactly one instant, its wall seconds less the
	// offset (no zone has changed its offset by two days or more).
	fixed  bool
	offset int64
}

type resolvedSpan struct {
	starts []int64 // existing grid times, in order (Unix seconds)
	end    int64   // Unix nanoseconds
}

func newGrid(date Date, loc *time.Location, step time.Duration) *grid {
	g := &grid{date: date, loc: loc, step: int(step / time.Second), spans: map[Span]resolvedSpan{}}
	const margin = 2 * 24 * 60 * 60
	noon := time.Date(date.Year, date.Month, date.Day, 12, 0, 0, 0, loc)
	from, to := noon.ZoneBounds()
	_, off := noon.Zone()
	midnight := date.utcMidnight().Unix() - int64(off) // were the offset the day's
	g.fixed = (from.IsZero() || from.Unix() <= midnight-margin) && (to.IsZero() || to.Unix() >= midnight+margin)
	g.offset = int64(off)
	return g
}

// resolve lists the grid times of span that exist on the day, leaving out
// those skipped by a spring-forward gap, and the instant the span ends.
func (g *grid) resolve(span Span) resolvedSpan {
	if r, ok := g.spans[span]; ok {
		return r
	}
	r := resolvedSpan{end: nanos(span.bounds(g.date, g.loc).End)}
	r.starts = make([]int64, 0, (int(span.To-span.From)*60+g.step-1)/g.step)
	midnight := g.date.utcMidnight().Unix() // in wall seconds
	for sec := int(span.From) * 60; sec < int(span.To)*60; sec += g.step {
		if g.fixed {
			r.starts = append(r.starts, midnight+int64(sec)-g.offset)
			continue
		}
		w := WallTime{Date: g.date, Hour: sec / 3600, Minute: sec / 60 % 60, Second: sec % 60}
		if t, err := w.In(g.loc); err == nil {
			r.starts = append(r.starts, t.Unix())
		}
	}
	g.spans[span] = r
	return r
}
