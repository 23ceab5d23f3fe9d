package slots

import (
	"cmp"
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
// offered, and when a day has none).
func FreeSlots(d Day) []Slot {
	step := d.Policy.Step / time.Second * time.Second
	if step <= 0 || d.Duration <= 0 || d.Location == nil {
		return nil
	}
	if !d.withinWindow() {
		return nil
	}
	buffer := max(d.Buffer, 0)
	grid := newGrid(d.Date, d.Location, step)
	// Policy.Admits, once for the day: a start is neither past nor sooner
	// than the lead, and its local date (d.Date's, as every grid time's)
	// is within the horizon: it starts before the day after the last.
	earliest := d.Now
	if lead := d.Now.Add(d.Policy.MinLead); lead.After(earliest) {
		earliest = lead
	}
	beyond := d.Policy.lastDay(d.Now, d.Location).AddDays(1).Start(d.Location)

	var out []Slot
	for i, b := range d.Barbers {
		if i == 1 { // barbers of a unit mostly work alike: room for as many as the first
			out = slices.Grow(out, len(out)*(len(d.Barbers)-1))
		}
		timeOff, busy := newBlockers(b.TimeOff), newBlockers(b.Busy)
		for _, span := range workingSpans(b.Hours, b.Breaks) {
			resolved := grid.resolve(span)
			for _, start := range resolved.starts {
				if start.Before(earliest) || !start.Before(beyond) {
					continue
				}
				s := Slot{Start: start, End: start.Add(d.Duration), BarberID: b.ID}
				if s.End.After(resolved.end) ||
					timeOff.hit(Interval{Start: s.Start, End: s.End}) ||
					busy.hit(s.Block(buffer)) {
					continue
				}
				out = append(out, s)
			}
		}
	}
	return sortSlots(out)
}

// sortSlots sorts slots by start, then barber id, as compareSlots does:
// by small keys (a start, a barber's rank), then moves each slot once.
func sortSlots(ss []Slot) []Slot {
	if len(ss) < 2 {
		return ss
	}
	ids := make([]string, 0, 16)
	for _, s := range ss {
		if len(ids) == 0 || ids[len(ids)-1] != s.BarberID { // a barber's slots are together
			ids = append(ids, s.BarberID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ranks := make([]uint64, len(ss)) // a barber's slots are together: one search each
	for i, s := range ss {
		if i > 0 && s.BarberID == ss[i-1].BarberID {
			ranks[i] = ranks[i-1]
			continue
		}
		r, _ := slices.BinarySearch(ids, s.BarberID)
		ranks[i] = uint64(r)
	}
	order, ok := packedOrder(ss, len(ids), ranks)
	if !ok {
		order = keyedOrder(ss, ranks)
	}
	// ss[i] is to become ss[order[i]]: follow each cycle of moves.
	for i := range order {
		if int(order[i]) == i {
			continue
		}
		held, j := ss[i], i
		for {
			k := int(order[j])
			order[j] = uint64(j)
			if k == i {
				ss[j] = held
				break
			}
			ss[j], j = ss[k], k
		}
	}
	return ss
}

// Packed keys: a start's whole seconds after the day's first start, a
// barber's rank and the slot's index, in one integer that sorts as the
// slots do.
const (
	packedSlotBits = 20
	packedRankBits = 12
)

// packedOrder is the sorted order of ss (the index of the slot that goes
// at each place) by packed keys, which sort fastest; false when a start
// has a fraction of a second or the day is too large for them (barbers'
// slots are on a grid of whole seconds). ranks[i] is ss[i]'s barber's;
// the order is written over them.
func packedOrder(ss []Slot, barbers int, ranks []uint64) ([]uint64, bool) {
	if len(ss) >= 1<<packedSlotBits || barbers >= 1<<packedRankBits {
		return nil, false
	}
	first, last := ss[0].Start.Unix(), ss[0].Start.Unix()
	for _, s := range ss {
		if s.Start.Nanosecond() != 0 {
			return nil, false
		}
		first, last = min(first, s.Start.Unix()), max(last, s.Start.Unix())
	}
	if last-first >= 1<<(64-packedSlotBits-packedRankBits) {
		return nil, false
	}
	keys := ranks // reused: each rank is read before its key is written
	for i, s := range ss {
		keys[i] = uint64(s.Start.Unix()-first)<<(packedSlotBits+packedRankBits) | ranks[i]<<packedSlotBits | uint64(i)
	}
	slices.Sort(keys)
	for i := range keys {
		keys[i] &= 1<<packedSlotBits - 1
	}
	return keys, true
}

// keyedOrder is packedOrder for any day, written over ranks too.
func keyedOrder(ss []Slot, ranks []uint64) []uint64 {
	type key struct {
		start      int64
		rank, slot int32
	}
	keys := make([]key, len(ss))
	for i, s := range ss {
		keys[i] = key{s.Start.UnixNano(), int32(ranks[i]), int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
	for i, k := range keys {
		ranks[i] = uint64(k.slot)
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
}

type resolvedSpan struct {
	starts []time.Time // existing grid times, in order
	end    time.Time
}

func newGrid(date Date, loc *time.Location, step time.Duration) *grid {
	return &grid{date: date, loc: loc, step: int(step / time.Second), spans: map[Span]resolvedSpan{}}
}

// resolve lists the grid times of span that exist on the day, leaving out
// those skipped by a spring-forward gap, and the instant the span ends.
func (g *grid) resolve(span Span) resolvedSpan {
	if r, ok := g.spans[span]; ok {
		return r
	}
	r := resolvedSpan{end: span.bounds(g.date, g.loc).End}
	for sec := int(span.From) * 60; sec < int(span.To)*60; sec += g.step {
		w := WallTime{Date: g.date, Hour: sec / 3600, Minute: sec / 60 % 60, Second: sec % 60}
		if t, err := w.In(g.loc); err == nil {
			r.starts = append(r.starts, t)
		}
	}
	g.spans[span] = r
	return r
}
