// Package slots computes the free appointment slots of one local day for the
// barbers of a unit, from their working hours, breaks, time off, existing
// bookings and the unit's booking policy.
//
// Two clocks meet here. Working hours, breaks and the slot grid are wall-clock
// times in the unit's zone ("09:00", every 15 minutes), because that is how a
// barbershop thinks about its day. Durations, bookings and time off are
// elapsed time between instants, because a 30-minute haircut lasts 30 minutes
// even across a daylight saving change. Converting from the first to the
// second is where the care goes:
//
//   - a wall time inside a spring-forward gap does not exist: it is never
//     offered as a slot start (see ErrNonexistentTime);
//   - a wall time inside a fall-back overlap happens twice: it always means
//     its first occurrence, so a day never offers the same local time twice.
//
// # Slots
//
// FreeSlots returns nil for a day in the past, beyond the horizon, without
// working hours, and when Policy.Step or Duration is not positive. Step
// counts in whole seconds; a negative Buffer counts as zero. A slot is
// offered when:
//   - its start lies on the wall-clock grid From, From+Step, ... of a working
//     span (Hours minus Breaks) and exists on that day; an ambiguous start is
//     taken at its first occurrence only;
//   - its service [Start, Start+Duration), in elapsed time, ends by the end of
//     the span, so across a daylight saving change a shift may hold one hour
//     more or less of slots than its wall-clock length suggests;
//   - the service does not overlap the barber's time off, and the service plus
//     Buffer does not overlap the barber's busy intervals;
//   - Policy.Admits accepts its start.
//
// The package has no database access and uses only the standard library.
package slots
