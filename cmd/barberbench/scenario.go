package main

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// scenarioFunc is what each worker does in a round of the chosen scenario.
func (b *bench) scenarioFunc() func(*worker, context.Context) error {
	switch b.c.scenario {
	case "availability":
		return (*worker).availabilityOnly
	case "cold":
		return (*worker).coldOnly
	case "range":
		return (*worker).rangeOnly
	case "next":
		return (*worker).nextOnly
	case "create", "hotslot":
		return (*worker).createOnly
	case "waitlist":
		return (*worker).cancelOne
	case "hold", "cancel", "reschedule":
		return b.writeFunc()
	}
	return (*worker).conversation
}

func pick[T any](rng *mrand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

func (w *worker) phone() string { return fmt.Sprintf("+4917%09d", w.rng.IntN(1_000_000_000)) }

// reference is a fresh external reference, unique across the run's phases.
func (w *worker) reference() string {
	return fmt.Sprintf("bench-%s-%d", w.b.runID, w.b.refs.Add(1))
}

// conversation is one chatbot's booking, as the README walks through it:
// context, catalog, availability, hold, create, and sometimes a
// reschedule or a cancellation, then a notifications poll.
func (w *worker) conversation(ctx context.Context) error {
	if _, err := w.do(ctx, "GET /context", http.MethodGet, "/context", nil, nil); errors.Is(err, errStop) {
		return err
	}
	var units apiList[apiUnit]
	if _, err := w.do(ctx, "GET /units", http.MethodGet, "/units", nil, &units); err != nil || len(units.Data) == 0 {
		return stopOr(err)
	}
	u := pick(w.rng, units.Data)
	if w.b.cat.locs[u.ID] == nil {
		return nil // a unit that appeared after the start
	}
	var svcs apiList[apiService]
	if _, err := w.do(ctx, "GET /services", http.MethodGet, "/services?unit_id="+u.ID, nil, &svcs); err != nil || len(svcs.Data) == 0 {
		return stopOr(err)
	}
	s := pick(w.rng, svcs.Data)
	var barbers apiList[apiBarber]
	if _, err := w.do(ctx, "GET /barbers", http.MethodGet, "/barbers?unit_id="+u.ID+"&service_id="+s.ID, nil, &barbers); err != nil || len(barbers.Data) == 0 {
		return stopOr(err)
	}
	q := "/availability?unit_id=" + u.ID + "&service_id=" + s.ID
	withBarber := w.rng.IntN(10) < 3
	if withBarber {
		q += "&barber_id=" + pick(w.rng, barbers.Data).ID
	}
	var av apiAvailability
	day := 1 + w.rng.IntN(w.b.c.days)
	for try := 0; try < 3 && len(av.Slots) == 0; try++ {
		if _, err := w.do(ctx, "GET /availability", http.MethodGet, q+"&date="+w.b.date(u.ID, day+try), nil, &av); err != nil {
			return stopOr(err)
		}
	}
	if len(av.Slots) == 0 {
		return nil
	}
	slot := pick(w.rng, av.Slots)
	book := map[string]any{
		"unit_id": u.ID, "service_id": s.ID, "starts_at": slot.StartsAt,
		"external_reference": w.reference(),
		"client":             map[string]any{"name": pick(w.rng, firstNames) + " " + pick(w.rng, lastNames), "phone": w.phone()},
	}
	hold := map[string]any{"unit_id": u.ID, "service_id": s.ID, "starts_at": slot.StartsAt}
	if withBarber || w.rng.IntN(2) == 0 {
		hold["barber_id"], book["barber_id"] = slot.BarberID, slot.BarberID
	}
	var h apiHold
	ex, err := w.do(ctx, "POST /slots/hold", http.MethodPost, "/slots/hold", hold, &h)
	if errors.Is(err, errStop) {
		return err
	}
	if ex.status == http.StatusCreated {
		book["hold_id"] = h.HoldID
	} else {
		// Someone else took it meanwhile: book another slot without a hold.
		other := pick(w.rng, av.Slots)
		book["starts_at"] = other.StartsAt
		if _, ok := book["barber_id"]; ok {
			book["barber_id"] = other.BarberID
		}
	}
	var a apiAppointment
	w.b.receiver.sending(book["external_reference"].(string))
	ex, err = w.do(ctx, "POST /appointments", http.MethodPost, "/appointments", book, &a)
	if err != nil || ex.status != http.StatusCreated {
		if id, held := book["hold_id"].(string); held {
			w.releaseHold(ctx, id)
		}
		return stopOr(err)
	}
	if w.rng.IntN(10) == 0 {
		// A chatbot that lost the response sends the same create again.
		if _, err := w.do(ctx, "POST /appointments (replay)", http.MethodPost, "/appointments", book, nil); errors.Is(err, errStop) {
			return err
		}
	}
	if w.rng.IntN(2) == 0 {
		if _, err := w.do(ctx, "GET /appointments/{id}", http.MethodGet, "/appointments/"+a.ID, nil, nil); errors.Is(err, errStop) {
			return err
		}
	}
	switch r := w.rng.IntN(100); {
	case r < 15:
		var to string
		for _, sl := range av.Slots {
			if sl.BarberID == a.BarberID && sl.StartsAt != a.StartsAt && (to == "" || w.rng.IntN(3) == 0) {
				to = sl.StartsAt
			}
		}
		if to != "" {
			if _, err := w.do(ctx, "POST /appointments/{id}/reschedule", http.MethodPost, "/appointments/"+a.ID+"/reschedule",
				map[string]any{"starts_at": to}, nil); errors.Is(err, errStop) {
				return err
			}
		}
	case r < 25:
		if _, err := w.do(ctx, "POST /appointments/{id}/cancel", http.MethodPost, "/appointments/"+a.ID+"/cancel",
			map[string]any{"reason": "Client changed plans"}, nil); errors.Is(err, errStop) {
			return err
		}
	}
	_, err = w.do(ctx, "GET /notifications/pending", http.MethodGet, "/notifications/pending?limit=50", nil, nil)
	return stopOr(err)
}

// releaseHold frees, unmeasured, the hold of a conversation cut off before
// its booking (the phase ended, or the create failed), as a chatbot whose
// user walked away should: left active, it would count against the key's
// hold cap in the phases after this one until it expired.
func (w *worker) releaseHold(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ex, err := w.b.cl.send(ctx, newRecorder(), "release", http.MethodPost, "/slots/hold/"+id+"/release", nil, nil)
	if err == nil && ex.status == http.StatusOK {
		w.b.released.Add(1)
	}
}

// stopOr passes errStop on and drops other errors: they are recorded, and
// the chatbot starts a new conversation.
func stopOr(err error) error {
	if errors.Is(err, errStop) {
		return err
	}
	return nil
}

// availabilityOnly asks for one day's free slots of a unit and service,
// with every eligible barber or, with --one-barber, one of them.
func (w *worker) availabilityOnly(ctx context.Context) error {
	_, err := w.do(ctx, "GET /availability", http.MethodGet, w.availabilityPath(), nil, nil)
	return stopOr(err)
}

// availabilityPath is the request of availabilityOnly.
func (w *worker) availabilityPath() string {
	q, unitID := w.availabilityQuery("/availability")
	return q + "&date=" + w.b.date(unitID, 1+w.rng.IntN(w.b.c.days))
}

// rangeOnly asks for a week's free slots (GET /availability/range), as
// availabilityOnly does for a day.
func (w *worker) rangeOnly(ctx context.Context) error {
	_, err := w.do(ctx, "GET /availability/range", http.MethodGet, w.rangePath(), nil, nil)
	return stopOr(err)
}

// rangePath is the request of rangeOnly.
func (w *worker) rangePath() string {
	q, unitID := w.availabilityQuery("/availability/range")
	from := 1 + w.rng.IntN(w.b.c.days)
	return q + "&from=" + w.b.date(unitID, from) + "&to=" + w.b.date(unitID, from+rangeDays-1)
}

// rangeDays is how many days the range scenario asks for at once.
const rangeDays = 7

// nextOnly asks for the next three free times from now
// (GET /availability/next): seeded with --full-days, the search crosses
// that many fully booked days first.
func (w *worker) nextOnly(ctx context.Context) error {
	_, err := w.do(ctx, "GET /availability/next", http.MethodGet, w.nextPath(), nil, nil)
	return stopOr(err)
}

// nextPath is the request of nextOnly.
func (w *worker) nextPath() string {
	q, _ := w.availabilityQuery("/availability/next")
	return q
}

// availabilityQuery is path with a random unit and service (and, with
// --one-barber, one of its barbers) as query parameters, and the unit.
func (w *worker) availabilityQuery(path string) (q, unitID string) {
	u := pick(w.rng, w.b.cat.units)
	s := pick(w.rng, w.b.cat.services[u.ID])
	q = path + "?unit_id=" + u.ID + "&service_id=" + s.ID
	if barbers := w.b.cat.barbers[u.ID+"/"+s.ID]; w.b.c.oneBarber && len(barbers) > 0 {
		q += "&barber_id=" + pick(w.rng, barbers).ID
	}
	return q, u.ID
}

// createOnly books a distinct free slot, without a hold.
func (w *worker) createOnly(ctx context.Context) error {
	sl, ok := w.b.feed.next(ctx, w.ph.deadline)
	if !ok || !w.b.pace.wait(w.ph.deadline) {
		return errStop
	}
	body := w.bookBody(sl)
	w.b.receiver.sending(body["external_reference"].(string))
	_, err := w.do(ctx, "POST /appointments", http.MethodPost, "/appointments", body, nil)
	return stopOr(err)
}

func (w *worker) bookBody(sl freeSlot) map[string]any {
	return map[string]any{
		"unit_id": sl.unitID, "service_id": sl.serviceID, "barber_id": sl.barberID, "starts_at": sl.startsAt,
		"external_reference": w.reference(),
		"client":             map[string]any{"name": pick(w.rng, firstNames) + " " + pick(w.rng, lastNames), "phone": w.phone()},
	}
}

// hotSlot runs rounds in which every worker books the same slot at once:
// exactly one may win, every other must get 409 slot_unavailable.
func (b *bench) hotSlot(ctx context.Context, rep *Report) (*recorder, time.Duration) {
	ph := &phase{deadline: time.Now().Add(b.c.duration)}
	ph.budget.Store(b.c.maxRequests)
	workers := make([]*worker, b.c.concurrency)
	for i := range workers {
		workers[i] = &worker{b: b, id: i, rec: newRecorder(), ph: ph, rng: mrand.New(mrand.NewPCG(b.c.seed, uint64(i)))}
	}
	start := time.Now()
	for ctx.Err() == nil && time.Now().Before(ph.deadline) {
		sl, ok := b.feed.next(ctx, ph.deadline)
		if !ok {
			break
		}
		var won atomic.Int32
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				body := w.bookBody(sl)
				b.receiver.sending(body["external_reference"].(string))
				ex, _ := w.do(ctx, "POST /appointments (hot slot)", http.MethodPost, "/appointments", body, nil)
				if ex.status == http.StatusCreated {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		rep.Rounds++
		switch won.Load() {
		case 1:
		case 0:
			rep.EmptyRounds++
		default:
			rep.DoubleBooked++
		}
	}
	wall := time.Since(start)
	all := newRecorder()
	for _, w := range workers {
		all.merge(w.rec)
	}
	return all, wall
}

// firstFreeDay is how many days ahead the first free time of any unit and
// service lies (-1: none within the horizon): what the next scenario's
// searches cross, and the waitlist scenario's fully booked days.
func (b *bench) firstFreeDay(ctx context.Context) (int, error) {
	nearest := -1
	for _, u := range b.cat.units {
		today, _ := time.Parse(time.DateOnly, b.date(u.ID, 0))
		for _, s := range b.cat.services[u.ID] {
			var next apiAvailability
			ex, err := b.cl.send(ctx, newRecorder(), "next", http.MethodGet, "/availability/next?limit=1&unit_id="+u.ID+"&service_id="+s.ID, nil, &next)
			if err != nil {
				return 0, fmt.Errorf("GET /availability/next: %w", err)
			}
			if ex.status != http.StatusOK || len(next.Slots) == 0 {
				continue
			}
			first, _ := time.Parse(time.DateOnly, next.Slots[0].StartsAt[:10])
			if days := int(first.Sub(today).Hours()/24 + 0.5); nearest < 0 || days < nearest {
				nearest = days
			}
		}
	}
	return nearest, nil
}

// noteNextAhead notes how far ahead the first free time lies.
func (b *bench) noteNextAhead(ctx context.Context, rep *Report) error {
	nearest, err := b.firstFreeDay(ctx)
	if err == nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("next: the nearest first free time is %d days ahead (seed --full-days sets it)", nearest))
	}
	return err
}
