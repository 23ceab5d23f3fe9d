package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"barberd/cmd/barberbench/floor"
)

// The hold, cancel and reschedule scenarios: each drives one write alone,
// as create does, on the feed's distinct free slots, and is compared with
// a floor of its own made the same way (package floor: the essential SQL of
// that write, one transaction, at the same concurrency on the scratch
// account's distinct slots).
//
//   - hold: POST /slots/hold of a free slot with its barber (start the
//     server with --max-holds-per-key 0: one key takes them all).
//   - cancel: POST /appointments/{id}/cancel of appointments booked over
//     POST /appointments before the phase, unmeasured, for --duration (the
//     floor's likewise, for --floor-duration); a phase that spends its pool
//     before its end has its rate over its own time.
//   - reschedule: POST /appointments/{id}/reschedule of a few booked
//     appointments, each to the next free slot of its barber, again and
//     again (a move to another barber locks two, and moves the other way
//     at once deadlock; chatbots mostly keep the barber).

// writeScenarios are the scenarios of this file; like create, they book
// the feed's slots.
var writeScenarios = []string{"hold", "cancel", "reschedule"}

// usesFeed says whether a scenario books the feed's free slots.
func usesFeed(scenario string) bool {
	return scenario == "create" || scenario == "hotslot" || slices.Contains(writeScenarios, scenario)
}

// errPoolSpent ends a floor phase whose pool of bookings is spent.
var errPoolSpent = errors.New("the floor's bookings are spent")

// writeFunc is what each worker does in a round of a write scenario.
func (b *bench) writeFunc() func(*worker, context.Context) error {
	switch b.c.scenario {
	case "hold":
		return (*worker).holdOne
	case "cancel":
		return (*worker).cancelBooked
	case "reschedule":
		return (*worker).rescheduleBooked
	}
	return nil
}

// holdOne holds a distinct free slot with its barber.
func (w *worker) holdOne(ctx context.Context) error {
	sl, ok := w.b.feed.next(ctx, w.ph.deadline)
	if !ok {
		return errStop
	}
	body := map[string]any{"unit_id": sl.unitID, "service_id": sl.serviceID, "barber_id": sl.barberID, "starts_at": sl.startsAt}
	_, err := w.do(ctx, "POST /slots/hold", http.MethodPost, "/slots/hold", body, nil)
	return stopOr(err)
}

// booked is the scenario's appointments: those to cancel, or, by barber,
// those to move again and again.
type booked struct {
	cancel   chan string
	mu       sync.Mutex
	byBarber map[string][]string
}

// cancelBooked cancels a booked appointment.
func (w *worker) cancelBooked(ctx context.Context) error {
	select {
	case id := <-w.b.booked.cancel:
		_, err := w.do(ctx, "POST /appointments/{id}/cancel", http.MethodPost, "/appointments/"+id+"/cancel",
			map[string]any{"reason": "Client cannot make it"}, nil)
		return stopOr(err)
	default:
		return errStop // the pool, not the phase, ran out
	}
}

// rescheduleBooked moves a booked appointment of the next free slot's
// barber to that slot, and puts it back to be moved again.
func (w *worker) rescheduleBooked(ctx context.Context) error {
	sl, ok := w.b.feed.next(ctx, w.ph.deadline)
	if !ok {
		return errStop
	}
	bk := w.b.booked
	bk.mu.Lock()
	ids := bk.byBarber[sl.barberID]
	if len(ids) == 0 {
		bk.mu.Unlock()
		return nil // the barber has none, or each is being moved
	}
	id := ids[len(ids)-1]
	bk.byBarber[sl.barberID] = ids[:len(ids)-1]
	bk.mu.Unlock()
	defer func() {
		bk.mu.Lock()
		bk.byBarber[sl.barberID] = append(bk.byBarber[sl.barberID], id)
		bk.mu.Unlock()
	}()
	_, err := w.do(ctx, "POST /appointments/{id}/reschedule", http.MethodPost, "/appointments/"+id+"/reschedule",
		map[string]any{"starts_at": sl.startsAt}, nil)
	return stopOr(err)
}

// prepareWrites books, unmeasured, what the cancel and reschedule
// scenarios change: appointments to cancel, over --duration, or to
// reschedule, a few per worker.
func (b *bench) prepareWrites(ctx context.Context, rep *Report) error {
	b.booked = &booked{cancel: make(chan string, 1<<20), byBarber: map[string][]string{}}
	if b.c.scenario != "cancel" && b.c.scenario != "reschedule" {
		return nil
	}
	b.feed.resume(false)
	defer b.feed.fill(ctx, b.feedTarget())
	d, want := b.c.duration, -1
	if b.c.scenario == "reschedule" {
		d, want = time.Minute, 2*b.c.concurrency
	}
	fmt.Fprintf(b.logOut, "barberbench: booking what the %s scenario changes\n", b.c.scenario)
	var mu sync.Mutex
	n := 0
	rec, _ := b.runPhase(ctx, b.c.concurrency, d, func(w *worker, ctx context.Context) error {
		mu.Lock()
		done := want >= 0 && n >= want
		n++
		mu.Unlock()
		if done {
			return errStop
		}
		sl, ok := b.feed.next(ctx, w.ph.deadline)
		if !ok {
			return errStop
		}
		var a apiAppointment
		ex, err := w.do(ctx, "setup: POST /appointments", http.MethodPost, "/appointments", w.bookBody(sl), &a)
		if ex.status == http.StatusCreated {
			if b.c.scenario == "cancel" {
				b.booked.cancel <- a.ID
			} else {
				b.booked.mu.Lock()
				b.booked.byBarber[sl.barberID] = append(b.booked.byBarber[sl.barberID], a.ID)
				b.booked.mu.Unlock()
			}
		}
		return stopOr(err)
	})
	if s := rec.series["setup: POST /appointments"]; s != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("setup: %d appointments booked for the %s scenario (%d requests)", len(b.booked.cancel)+b.booked.count(), b.c.scenario, len(s.lat)))
	}
	return nil
}

func (bk *booked) count() int {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	n := 0
	for _, ids := range bk.byBarber {
		n += len(ids)
	}
	return n
}

// floorOp is the write whose floor a scenario is compared with.
func floorOp(scenario string) string {
	if slices.Contains(writeScenarios, scenario) {
		return scenario
	}
	return "create"
}

// prepare books, unmeasured, what the floor's cancels or reschedules
// change: for d with n workers, or n of them.
func (f *dbFloor) prepare(ctx context.Context, n int, d time.Duration) error {
	f.pool = make(chan floor.Booking, 1<<20)
	if f.op != "cancel" && f.op != "reschedule" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				bk, err := f.floor.Book(ctx)
				if err != nil {
					if ctx.Err() == nil {
						once.Do(func() { first = err })
					}
					return
				}
				f.pool <- bk
				if f.op == "reschedule" && len(f.pool) >= 2*n {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(f.pool) == 0 && first != nil {
		return fmt.Errorf("floor: booking: %w", first)
	}
	return nil
}

// write is one write of the floor's kind.
func (f *dbFloor) write(ctx context.Context) error {
	switch f.op {
	case "hold":
		return f.floor.Hold(ctx)
	case "cancel":
		select {
		case bk := <-f.pool:
			return f.floor.Cancel(ctx, bk)
		default:
			return errPoolSpent
		}
	case "reschedule":
		var bk floor.Booking
		select {
		case bk = <-f.pool:
		case <-ctx.Done():
			return ctx.Err()
		}
		moved, err := f.floor.Reschedule(ctx, bk)
		f.pool <- moved
		return err
	}
	return f.floor.Create(ctx)
}

// floorLabel names the floor in the table.
func floorLabel(op string) string {
	return "floor: db write (a " + op + "'s SQL, 1 tx)"
}
