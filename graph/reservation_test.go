package graph_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/catalog"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// freedLog collects what timeFreed passes, once each transaction commits.
type freedLog struct {
	mu    sync.Mutex
	freed []graph.Freed
}

func (l *freedLog) add(f graph.Freed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.freed = append(l.freed, f)
}

// take returns what was freed since the last take.
func (l *freedLog) take() []graph.Freed {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.freed
	l.freed = nil
	return out
}

// freedSpan is what a test expects of a Freed: whose time, when, why.
type freedSpan struct {
	barber     string
	start, end time.Time
	cause      graph.FreeCause
	of         string // the appointment's or hold's id
}

func spanOf(f graph.Freed) freedSpan {
	of := ""
	switch {
	case f.AppointmentID != nil:
		of = *f.AppointmentID
	case f.HoldID != nil:
		of = *f.HoldID
	}
	return freedSpan{f.BarberID, f.StartsAt, f.EndsAt, f.Cause, of}
}

// TestEveryFreeingPassesTimeFreed checks that each way time becomes free
// (cancel, reschedule, hold release, completed and no-show marks, pruning,
// hold expiry by the job and by a booking) tells timeFreed exactly once,
// with the reservation's span, buffer included, and that taking or handing
// over time (a create, a hold, a hold used by a create) frees nothing.
func TestEveryFreeingPassesTimeFreed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock, res, s := openJobShop(t, db, "Freeing", 2)
		bg := context.Background()
		// A 10-minute buffer after each appointment: the freed span has it.
		const buffer = 10 * time.Minute
		if err := db.Service.UpdateOne(s.svc).SetBufferMinutes(int(buffer / time.Minute)).Exec(tenant.WithAccount(bg, s.acc.ID)); err != nil {
			t.Fatal(err)
		}
		var log freedLog
		s.ctx = graph.ObserveFreed(s.ctx, log.add)
		jobs := graph.ObserveFreed(bg, log.add)
		b0, b1 := s.barbers[0].ID, s.barbers[1].ID
		tomorrow := jobsMonday.Add(24 * time.Hour)
		expect := func(what string, want ...freedSpan) {
			t.Helper()
			got := log.take()
			if len(got) != len(want) {
				t.Fatalf("%s: freed %v, want %v", what, got, want)
			}
			for i := range got {
				g, w := spanOf(got[i]), want[i]
				if g.barber != w.barber || !g.start.Equal(w.start) || !g.end.Equal(w.end) || g.cause != w.cause || g.of != w.of {
					t.Errorf("%s: freed %+v, want %+v", what, g, w)
				}
				if got[i].AccountID != s.acc.ID {
					t.Errorf("%s: freed in account %s, want %s", what, got[i].AccountID, s.acc.ID)
				}
			}
		}
		m := res.Mutation()

		// Taking time frees none.
		at10 := tomorrow.Add(time.Hour)
		a := s.book(0, at10)
		h := s.mustHold(1, at10, 600)
		expect("a create and a hold")
		p, err := m.CreateAppointment(s.ctx, model.CreateAppointmentInput{UnitID: s.unit.ID, ServiceID: s.svc.ID,
			StartsAt: at(at10), HoldID: &h.ID, Client: &model.ClientInput{Name: "Held Client", Phone: "+351910000001"}})
		if err != nil {
			t.Fatal(err)
		}
		expect("a create with a hold")

		// A cancel frees the appointment's time and buffer.
		if _, err := m.CancelAppointment(s.ctx, a.ID, "ill"); err != nil {
			t.Fatal(err)
		}
		expect("a cancel", freedSpan{b0, at10, at10.Add(40 * time.Minute), graph.FreedCancelled, a.ID})
		if _, err := m.CancelAppointment(s.ctx, a.ID, "again"); err != nil {
			t.Fatal(err)
		}
		expect("a cancel repeated")

		// A reschedule frees the old time, to a time or to a hold's.
		moved := p.Appointment
		at12 := tomorrow.Add(3 * time.Hour)
		if _, err := m.RescheduleAppointment(s.ctx, moved.ID, model.RescheduleAppointmentInput{StartsAt: at(at12)}); err != nil {
			t.Fatal(err)
		}
		expect("a reschedule", freedSpan{b1, at10, at10.Add(40 * time.Minute), graph.FreedRescheduled, moved.ID})
		at14 := tomorrow.Add(5 * time.Hour)
		h = s.mustHold(0, at14, 600)
		if _, err := m.RescheduleAppointment(s.ctx, moved.ID, model.RescheduleAppointmentInput{StartsAt: at(at14), HoldID: &h.ID}); err != nil {
			t.Fatal(err)
		}
		expect("a reschedule with a hold", freedSpan{b1, at12, at12.Add(40 * time.Minute), graph.FreedRescheduled, moved.ID})

		// A release frees the hold's time; releasing all frees each.
		h = s.mustHold(1, at14, 600)
		if _, err := m.ReleaseHold(s.ctx, h.ID); err != nil {
			t.Fatal(err)
		}
		expect("a release", freedSpan{b1, at14, at14.Add(40 * time.Minute), graph.FreedReleased, h.ID})
		h1, h2 := s.mustHold(0, at12, 600), s.mustHold(1, at12, 600)
		if _, err := m.ReleaseAllHolds(s.ctx); err != nil {
			t.Fatal(err)
		}
		got := log.take()
		if len(got) != 2 || got[0].Cause != graph.FreedReleased || got[1].Cause != graph.FreedReleased ||
			*got[0].HoldID == *got[1].HoldID || (*got[0].HoldID != h1.ID && *got[0].HoldID != h2.ID) {
			t.Fatalf("releasing all freed %v, want holds %s and %s", got, h1.ID, h2.ID)
		}

		// Marks free what is left of the appointment's time.
		at930, at1030 := jobsMonday.Add(30*time.Minute), jobsMonday.Add(90*time.Minute)
		done, gone := s.book(0, at930), s.book(1, at1030)
		clock.set(jobsMonday.Add(2 * time.Hour))
		if _, err := m.MarkAppointmentCompleted(s.ctx, done.ID); err != nil {
			t.Fatal(err)
		}
		expect("completed", freedSpan{b0, at930, at930.Add(40 * time.Minute), graph.FreedCompleted, done.ID})
		if _, err := m.MarkAppointmentNoShow(s.ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		expect("no-show", freedSpan{b1, at1030, at1030.Add(40 * time.Minute), graph.FreedNoShow, gone.ID})

		// Pruning frees the time of appointments that ended an hour ago.
		at1130 := jobsMonday.Add(150 * time.Minute)
		ended := s.book(0, at1130)
		clock.set(at1130.Add(40*time.Minute + time.Hour + time.Second))
		if n, err := res.PruneReservations(jobs, 10); err != nil || n != 1 {
			t.Fatalf("PruneReservations = %d, %v; want 1", n, err)
		}
		expect("pruning", freedSpan{b0, at1130, at1130.Add(40 * time.Minute), graph.FreedPruned, ended.ID})

		// An expired hold is freed once: by the job, or by a booking.
		now := clock.now()
		h1, h2 = s.mustHold(0, at10, 10), s.mustHold(1, at10, 10)
		clock.set(now.Add(10 * time.Second))
		if n, err := res.ExpireHolds(jobs, 10); err != nil || n != 2 {
			t.Fatalf("ExpireHolds = %d, %v; want 2", n, err)
		}
		got = log.take()
		if len(got) == 2 && spanOf(got[0]).of == h2.ID {
			got[0], got[1] = got[1], got[0]
		}
		for i, want := range []freedSpan{{b0, at10, at10.Add(40 * time.Minute), graph.FreedExpired, h1.ID},
			{b1, at10, at10.Add(40 * time.Minute), graph.FreedExpired, h2.ID}} {
			if len(got) != 2 || spanOf(got[i]) != want {
				t.Fatalf("ExpireHolds freed %v, want %+v and the other hold", got, want)
			}
		}
		if n, err := res.ExpireHolds(jobs, 10); err != nil || n != 0 {
			t.Fatalf("ExpireHolds again = %d, %v; want 0", n, err)
		}
		expect("expiry again")
		// The booking's time over the expired hold's: a guarded booking
		// (PostgreSQL) frees the expired holds under its own time only.
		h = s.mustHold(1, at12, 10)
		clock.set(clock.now().Add(10 * time.Second))
		s.book(1, at12)
		expect("a booking after an expiry", freedSpan{b1, at12, at12.Add(40 * time.Minute), graph.FreedExpired, h.ID})
		checkHolds(t, db, hold.StatusExpired, h)
		if n, err := res.ExpireHolds(jobs, 10); err != nil || n != 0 {
			t.Fatalf("ExpireHolds after the booking = %d, %v; want 0", n, err)
		}
		expect("expiry after the booking")
	})
}

// TestHoldExpiryJob checks that RunJobs frees an expired hold within
// seconds, however long its jobs interval, on the wall clock.
func TestHoldExpiryJob(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res := graph.New(graph.Settings{DB: db})
		start := time.Now().UTC().Truncate(24 * time.Hour).Add(48 * time.Hour)
		s := newJobShop(t, res, "Expiry", 1)
		var log freedLog
		h := s.mustHold(0, start.Add(10*time.Hour), 10)
		ctx, cancel := context.WithCancel(graph.ObserveFreed(context.Background(), log.add))
		done := make(chan struct{})
		go func() {
			defer close(done)
			res.RunJobs(ctx, time.Hour, 0, 0)
		}()
		defer func() {
			cancel()
			<-done
		}()
		deadline := h.ExpiresAt.Add(10 * time.Second)
		for {
			if got := log.take(); len(got) > 0 {
				if len(got) != 1 || *got[0].HoldID != h.ID || got[0].Cause != graph.FreedExpired {
					t.Fatalf("freed %v, want hold %s expired", got, h.ID)
				}
				if late := time.Since(h.ExpiresAt); late > 5*time.Second {
					t.Errorf("freed %s after expiry, want within seconds", late)
				}
				checkHolds(t, db, hold.StatusExpired, h)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("hold %s not freed 10 s after it expired", h.ID)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestStartDayOffersAsTheDay checks the narrow read a writer checks a
// start with (catalog.Offer.StartDay: only the time off and reservations
// that overlap the start's slot and buffer) against the whole day's read:
// for every start of the day, on and off the grid, with bookings, a hold
// and time off around, each barber is offered it by one exactly when by
// the other.
func TestStartDayOffersAsTheDay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, _, s := openJobShop(t, db, "StartDay", 2)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		long := s.service("Cut and wash", 45, 10, 0, 1)
		// A 5-minute grid, so that a booking can sit in another start's
		// buffer alone.
		if err := db.Unit.UpdateOne(s.unit).SetSlotStepMinutes(5).Exec(actx); err != nil {
			t.Fatal(err)
		}
		day := jobsTuesday
		for _, h := range []time.Duration{9*time.Hour + 45*time.Minute, 11 * time.Hour, 14*time.Hour + 30*time.Minute} {
			s.book(0, day.Add(h))
		}
		s.mustHold(0, day.Add(16*time.Hour), 600)
		if err := db.TimeOff.Create().SetAccountID(s.acc.ID).SetBarberID(s.barbers[1].ID).
			SetStartsAt(day.Add(12 * time.Hour)).SetEndsAt(day.Add(13*time.Hour + 20*time.Minute)).Exec(actx); err != nil {
			t.Fatal(err)
		}
		o, err := catalog.Lookup(actx, db.Client, s.unit.ID, long.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		offered, refused := 0, 0
		for at := day.Add(7 * time.Hour); at.Before(day.Add(21 * time.Hour)); at = at.Add(5 * time.Minute) {
			o.Start, o.Date = at, slots.DateOf(at, o.Loc)
			whole, err := o.Day(actx, db.Client, db.Dialect, jobsMonday, s.barbers)
			if err != nil {
				t.Fatal(err)
			}
			narrow, err := o.StartDay(actx, db.Client, db.Dialect, jobsMonday, s.barbers)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range s.barbers {
				want := catalog.Offers(whole, b.ID, at)
				if got := catalog.Offers(narrow, b.ID, at); got != want {
					t.Errorf("%s with %s: the start's read offers it %v, the day's %v", at.Format("15:04"), b.Name, got, want)
				}
				if want {
					offered++
				} else {
					refused++
				}
			}
		}
		if offered == 0 || refused == 0 {
			t.Fatalf("%d starts offered, %d not: the day tells nothing", offered, refused)
		}
	})
}

// TestDaySpanReachesPastMidnight checks that a day's read (catalog's
// DaySpan) reaches past the next midnight by a slot and its buffer: the
// day's last start, whose buffer spills past midnight, is not offered
// while a reservation just after midnight keeps its barber.
func TestDaySpanReachesPastMidnight(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, _, s := openJobShop(t, db, "Midnight", 1)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		if _, err := db.WorkingHours.Update().SetClosesAt("24:00").Save(actx); err != nil {
			t.Fatal(err)
		}
		long := s.service("Late cut", 60, 20, 0)
		day := jobsTuesday
		late, next := day.Add(23*time.Hour), day.Add(24*time.Hour)
		if err := db.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(s.barbers[0].ID).
			SetStartsAt(next.Add(10 * time.Minute)).SetEndsAt(next.Add(40 * time.Minute)).Exec(actx); err != nil {
			t.Fatal(err)
		}
		o, err := catalog.Lookup(actx, db.Client, s.unit.ID, long.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Date = slots.DateOf(day, o.Loc)
		d, err := o.Day(actx, db.Client, db.Dialect, jobsMonday, s.barbers)
		if err != nil {
			t.Fatal(err)
		}
		if catalog.Offers(d, s.barbers[0].ID, late) {
			t.Errorf("23:00 offered: its buffer reaches the reservation at 00:10")
		}
		if !catalog.Offers(d, s.barbers[0].ID, late.Add(-time.Hour)) {
			t.Errorf("22:00 not offered: the day tells nothing")
		}
	})
}
