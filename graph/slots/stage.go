package slots

import "time"

// Stage is how far a barber's starts of a day get through the rules of
// FreeSlots, which apply in the order below: a barber's stage is the last
// rule that leaves any of them.
type Stage int8

// The stages, in order.
const (
	StageClosed  Stage = iota // the hours allow no start (no hours that weekday)
	StageLead                 // every start the hours allow is outside the booking window (before now + minimum lead)
	StageTimeOff              // time off removes every start that is left
	StageBooked               // busy intervals take every start that is left
	StageFree                 // the barber has free slots
)

// BarberStage is a barber's stage on a day, and until when the passing of
// time alone leaves it so (zero: until the day's window moves, at midnight).
type BarberStage struct {
	ID    string
	Stage Stage
	Until time.Time
}

// InWindow reports whether d.Date lies within the booking window at d.Now:
// not before today in d.Location and not after the horizon's last day.
func (d Day) InWindow() bool { return d.withinWindow() }

// Stages gives every barber of d its stage, in the order of d.Barbers. It
// runs FreeStarts on d with parts of its input left out: busy intervals, time
// off and the booking window. A stage other than StageClosed and StageLead
// holds until the last start it rests on comes closer than the minimum lead.
func Stages(d Day) []BarberStage {
	out := make([]BarberStage, len(d.Barbers))
	for i, b := range d.Barbers {
		out[i].ID = b.ID
	}
	// Every start the hours allow, whatever the time: the day seen from its
	// own first instant, without lead or horizon.
	hours := d.without(true, true)
	hours.Now = wallAt(d.Date, 0).atOrAfterGap(d.Location)
	hours.Policy.MinLead, hours.Policy.HorizonDays = 0, 0
	runs := []Day{hours, d.without(true, true), d.without(true, false), d}
	for i, run := range runs {
		last := make([]time.Time, len(d.Barbers))
		free := FreeStarts(run) // its barbers are d's, in order
		for _, s := range free.Starts {
			last[s.Barber] = free.Start(s).In(d.Location) // sorted by start
		}
		for b, t := range last {
			if !t.IsZero() {
				out[b].Stage = Stage(i) + 1
				if i > 0 {
					// The run's last start keeps the barber at its stage
					// until it comes closer than the lead.
					out[b].Until = t.Add(-d.Policy.MinLead)
				}
			}
		}
	}
	return out
}

// without is d with every barber's busy intervals, time off, or both, left out.
func (d Day) without(busy, timeOff bool) Day {
	bs := make([]Barber, len(d.Barbers))
	for i, b := range d.Barbers {
		if busy {
			b.Busy = nil
		}
		if timeOff {
			b.TimeOff = nil
		}
		bs[i] = b
	}
	d.Barbers = bs
	return d
}
