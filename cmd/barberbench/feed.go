package main

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// feedSize bounds how many free slots the feed keeps ready.
const feedSize = 20000

// freeSlot is one bookable (unit, service, barber, start).
type freeSlot struct {
	unitID, serviceID, barberID, startsAt string
}

// slotFeed finds distinct free slots for the create and hot-slot scenarios,
// so their workers book without reading availability first. It walks the
// days ahead, takes for each barber slots that cannot overlap one another,
// hands out the units' slots of a day in turn (so consecutive slots go round
// every barber), and rests while paused (during the floors).
type slotFeed struct {
	b       *bench
	ch      chan freeSlot
	paused  atomic.Bool
	measure atomic.Bool // record requests; only during the scenario phase
	cancel  context.CancelFunc
	done    chan struct{}
	stopped sync.Once
	w       *worker // its requests are recorded as "feed: ..."
}

func startSlotFeed(ctx context.Context, b *bench) *slotFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &slotFeed{b: b, ch: make(chan freeSlot, feedSize), cancel: cancel, done: make(chan struct{})}
	ph := &phase{deadline: time.Now().Add(24 * time.Hour)}
	ph.budget.Store(1 << 62)
	f.w = &worker{b: b, rec: newRecorder(), ph: ph}
	go f.run(ctx)
	return f
}

func (f *slotFeed) run(ctx context.Context) {
	defer close(f.done)
	defer close(f.ch)
	for day := 1; day <= 366; day++ {
		for f.paused.Load() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		// Every unit's slots of the day, taken in turn: consecutive
		// slots go round all the barbers, as the write floor does.
		var units [][]freeSlot
		for _, u := range f.b.cat.units {
			slots, ok := f.day(ctx, u, day)
			if !ok {
				return
			}
			units = append(units, slots)
		}
		for i := 0; len(units) > 0; i++ {
			for j := 0; j < len(units); {
				if i >= len(units[j]) {
					units = slices.Delete(units, j, j+1)
					continue
				}
				select {
				case f.ch <- units[j][i]:
				case <-ctx.Done():
					return
				}
				j++
			}
		}
	}
}

// feedService is the service the feed books at a unit: its shortest.
func feedService(svcs []apiService) apiService {
	return slices.MinFunc(svcs, func(a, b apiService) int { return a.DurationMinutes - b.DurationMinutes })
}

// feedBarbers is how many barbers the feed's slots go round.
func (c *catalog) feedBarbers() int {
	n := 0
	for _, u := range c.units {
		n += len(c.barbers[u.ID+"/"+feedService(c.services[u.ID]).ID])
	}
	return n
}

// day returns the free slots of one unit's day, sorted by time, then
// barber; false when the feed must end.
func (f *slotFeed) day(ctx context.Context, u apiUnit, day int) ([]freeSlot, bool) {
	s := feedService(f.b.cat.services[u.ID])
	var av apiAvailability
	q := "/availability?unit_id=" + u.ID + "&service_id=" + s.ID + "&date=" + f.b.date(u.ID, day)
	w := f.w
	if !f.measure.Load() {
		w = &worker{b: f.b, rec: newRecorder(), ph: f.w.ph}
	}
	if _, err := w.do(ctx, "feed: GET /availability", http.MethodGet, q, nil, &av); err != nil {
		return nil, ctx.Err() == nil
	}
	// Keep a quarter of an hour between a barber's slots, so a buffer after
	// the service does not make two of them collide.
	free := map[string]time.Time{}
	var out []freeSlot
	for _, sl := range av.Slots {
		if sl.StartsAtUTC.Before(free[sl.BarberID]) {
			continue
		}
		free[sl.BarberID] = sl.EndsAtUTC.Add(15 * time.Minute)
		out = append(out, freeSlot{u.ID, s.ID, sl.BarberID, sl.StartsAt})
	}
	return out, true
}

// fill waits until n slots are ready (or the days ahead are exhausted),
// then pauses the feed.
func (f *slotFeed) fill(ctx context.Context, n int) {
	f.paused.Store(false)
	defer f.paused.Store(true)
	deadline := time.Now().Add(time.Minute)
	for len(f.ch) < n && time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-f.done:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// resume lets the feed run, recording its requests when measure is set.
func (f *slotFeed) resume(measure bool) {
	f.measure.Store(measure)
	f.paused.Store(false)
}

// next returns a free slot; false when none is left or none came before
// the deadline.
func (f *slotFeed) next(ctx context.Context, deadline time.Time) (freeSlot, bool) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case s, ok := <-f.ch:
		return s, ok
	case <-t.C:
		return freeSlot{}, false
	case <-ctx.Done():
		return freeSlot{}, false
	}
}

// stopAndMerge ends the feed and adds its measurements to rec (when not
// nil). It is safe to call more than once, and on a nil feed.
func (f *slotFeed) stopAndMerge(rec *recorder) {
	if f == nil {
		return
	}
	f.stopped.Do(func() {
		f.cancel()
		for range f.ch { // unblock a pending send
		}
		<-f.done
	})
	if rec != nil {
		rec.merge(f.w.rec)
	}
}
