// Package free holds the free slots of a day as barberd keeps and serves
// them: one day of a unit and service for every eligible barber, small
// enough to cache, from which every availability answer of that day (every
// barber's, one barber's, the next free times) is taken.
package free

import (
	"iter"
	"slices"
	"time"

	"barberd/graph/model"
	"barberd/graph/slots"
)

// A Day is one day's free slots of a unit and service, for every eligible
// barber (or, rarely, for the one barber asked for), from which any
// availability answer for that day is taken.
type Day struct {
	// Tag names the day's slots within this process: days with the same
	// nonzero Tag have the same slots, so an adapter may keep what it made
	// of them under it. 0: the day was read for one request only.
	Tag uint64

	unitID, serviceID, date, timezone string
	loc                               *time.Location
	duration                          time.Duration // of every slot
	barbers                           []string      // those with free slots
	rank                              []int32       // of each of barbers among the eligible, in the order creates try them
	base                              int64         // Unix nanoseconds of the first free slot's start
	free                              []freeSlot    // sorted by time, then barber
	inWindow                          bool          // the date was within the booking window
	empty                             []emptyBarber // the other eligible barbers
}

// emptyBarber is an eligible barber without free slots on a Day, and why.
type emptyBarber struct {
	id    string
	stage slots.Stage
}

// Why a day has no slots: the values of Availability.reason.
const (
	ReasonOutsideBookingWindow = "outside_booking_window"
	ReasonClosed               = "closed"
	ReasonTimeOff              = "time_off"
	ReasonFullyBooked          = "fully_booked"
)

// reasons names each stage a set of barbers without slots can end at.
var reasons = [...]string{
	slots.StageClosed:  ReasonClosed,
	slots.StageLead:    ReasonOutsideBookingWindow,
	slots.StageTimeOff: ReasonTimeOff,
	slots.StageBooked:  ReasonFullyBooked,
	slots.StageFree:    ReasonFullyBooked, // not reached: a free barber has slots
}

// freeSlot is a slot of a Day, kept small since days are cached (8 bytes):
// its start, in whole seconds after the Day's base (slot starts lie on a
// grid of whole seconds from the day's midnight, slots.FreeStarts), and its
// barber (an index into Day.barbers).
type freeSlot struct {
	offset uint32
	barber uint32
}

// start is the Unix nanoseconds of s's start.
func (d *Day) start(s freeSlot) int64 { return d.base + int64(s.offset)*int64(time.Second) }

// Of names what a Day is of: a unit (and its zone) and a service (and the
// duration of its slots).
type Of struct {
	UnitID, ServiceID, Timezone string
	Location                    *time.Location
	Duration                    time.Duration
}

// NewDay is the Day of date, with its free slots (slots.FreeStarts of a
// day whose barbers are order) and the stages of its eligible barbers
// without any; order lists the eligible barbers as a create without a
// barber tries them.
func NewDay(of Of, date slots.Date, order []string, free slots.Free, inWindow bool, empty []slots.BarberStage) *Day {
	d := &Day{
		unitID: of.UnitID, serviceID: of.ServiceID, date: date.String(), timezone: of.Timezone,
		loc: of.Location, duration: of.Duration, free: make([]freeSlot, len(free.Starts)),
		base: free.Base * int64(time.Second), inWindow: inWindow, empty: make([]emptyBarber, len(empty)),
	}
	for i, b := range empty {
		d.empty[i] = emptyBarber{b.ID, b.Stage}
	}
	index := make([]int32, len(order)) // each barber's in d.barbers, plus one (0: not yet there)
	for i, s := range free.Starts {
		b := index[s.Barber]
		if b == 0 {
			d.barbers = append(d.barbers, order[s.Barber])
			d.rank = append(d.rank, int32(s.Barber))
			b = int32(len(d.barbers))
			index[s.Barber] = b
		}
		d.free[i] = freeSlot{offset: s.Offset, barber: uint32(b - 1)}
	}
	return d
}

// Of is what the day is of.
func (d *Day) Of() Of {
	return Of{UnitID: d.unitID, ServiceID: d.serviceID, Timezone: d.timezone, Location: d.loc, Duration: d.duration}
}

// Barbers are the barbers with free slots, as Slots numbers them.
func (d *Day) Barbers() []string { return d.barbers }

// Slots are the day's free slots, sorted by time, then barber: each slot's
// start (Unix nanoseconds) and its barber's index in Barbers. For adapters
// that encode the day themselves, without a model.Slot per slot.
func (d *Day) Slots() iter.Seq2[int64, int] {
	return func(yield func(int64, int) bool) {
		for _, s := range d.free {
			if !yield(d.start(s), int(s.barber)) {
				return
			}
		}
	}
}

// Date is the day, YYYY-MM-DD in the unit's zone.
func (d *Day) Date() string { return d.date }

// Timezone is the unit's zone.
func (d *Day) Timezone() string { return d.timezone }

// Availability is the day's answer for every barber (barberID nil) or one.
func (d *Day) Availability(barberID *string) *model.Availability {
	a := &model.Availability{
		UnitID: d.unitID, ServiceID: d.serviceID, BarberID: barberID,
		Date: d.date, Timezone: d.timezone, Slots: make([]*model.Slot, 0, len(d.free)),
	}
	for _, s := range d.free {
		id := d.barbers[s.barber]
		if barberID == nil || id == *barberID {
			start := time.Unix(0, d.start(s))
			a.Slots = append(a.Slots, SlotModel(slots.Slot{Start: start, End: start.Add(d.duration), BarberID: id}, d.loc))
		}
	}
	if r := d.Reason(barberID); r != "" {
		a.Reason = &r
	}
	return a
}

// Reason is why the day has no slots for every barber (barberID nil) or
// one, as Availability.reason tells it: "" when it has some.
func (d *Day) Reason(barberID *string) string {
	if !d.inWindow {
		return ReasonOutsideBookingWindow
	}
	if barberID == nil {
		if len(d.barbers) > 0 {
			return ""
		}
		stage := slots.StageClosed // also when no barber is eligible
		for _, b := range d.empty {
			stage = max(stage, b.stage)
		}
		return reasons[stage]
	}
	if slices.Contains(d.barbers, *barberID) {
		return ""
	}
	for _, b := range d.empty {
		if b.id == *barberID {
			return reasons[b.stage]
		}
	}
	return ReasonClosed
}

// Size is about what the day costs to keep, in bytes.
func (d *Day) Size() int { return 256 + 8*cap(d.free) + 20*len(d.barbers) + 24*len(d.empty) }

// AppendNext appends the day's free slots of barberID (nil: any) that start
// at or after after, from..to seconds past local midnight, until dst holds
// limit: without a barber, one per start, with the first eligible barber
// free then.
func (d *Day) AppendNext(dst []*model.Slot, barberID *string, after time.Time, from, to, limit int) []*model.Slot {
	for i := 0; i < len(d.free) && len(dst) < limit; i++ {
		f := d.free[i]
		if barberID != nil && d.barbers[f.barber] != *barberID {
			continue
		}
		start := time.Unix(0, d.start(f)).In(d.loc)
		if start.Before(after) {
			continue
		}
		if sec := start.Hour()*3600 + start.Minute()*60 + start.Second(); sec < from || sec >= to {
			continue
		}
		if barberID == nil {
			// The slots of one start are together: take the one a
			// create would, the first of the eligible barbers.
			for ; i+1 < len(d.free) && d.free[i+1].offset == f.offset; i++ {
				if d.rank[d.free[i+1].barber] < d.rank[f.barber] {
					f = d.free[i+1]
				}
			}
		}
		dst = append(dst, SlotModel(slots.Slot{Start: start, End: start.Add(d.duration), BarberID: d.barbers[f.barber]}, d.loc))
	}
	return dst
}

// SlotModel is a free slot as GraphQL (and the adapters) show it, in the
// unit's zone loc.
func SlotModel(s slots.Slot, loc *time.Location) *model.Slot {
	return &model.Slot{
		StartsAt: slots.Local(s.Start, loc), EndsAt: slots.Local(s.End, loc),
		StartsAtUtc: s.Start.UTC(), EndsAtUtc: s.End.UTC(),
		BarberID: s.BarberID,
	}
}
