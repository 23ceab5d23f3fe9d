package graph_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/delivery"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/reservation"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// jobsMonday is the fixed "now" the job tests start from: a Monday, 09:00 UTC.
var jobsMonday = time.Date(2030, 3, 4, 9, 0, 0, 0, time.UTC)

// jobsTuesday is the midnight after jobsMonday's day (UTC).
var jobsTuesday = jobsMonday.Truncate(24 * time.Hour).Add(24 * time.Hour)

type jobClock struct{ t atomic.Int64 }

func (c *jobClock) now() time.Time  { return time.Unix(0, c.t.Load()).UTC() }
func (c *jobClock) set(t time.Time) { c.t.Store(t.UnixNano()) }

// jobShop is one account with a unit (in UTC, open 08:00-20:00 every day),
// a 30-minute service, some barbers and two keys: one with every scope and
// one without notifications:read.
type jobShop struct {
	t       testing.TB
	res     *graph.Resolver
	acc     *ent.Account
	ctx     context.Context // acting as the key with every scope
	keyID   string          // the key with every scope
	otherID string          // the key without notifications:read
	unit    *ent.Unit
	svc     *ent.Service
	barbers []*ent.Barber
}

func newJobShop(t testing.TB, res *graph.Resolver, name string, barbers int) *jobShop {
	t.Helper()
	db, bg := res.Settings().DB, context.Background()
	acc, err := db.Account.Create().SetName(name).Save(tenant.System(bg))
	if err != nil {
		t.Fatal(err)
	}
	actx := tenant.WithAccount(bg, acc.ID)
	u, err := db.Unit.Create().SetAccountID(acc.ID).SetName(name + " unit").SetTimezone("UTC").
		SetSlotStepMinutes(30).SetMinLeadMinutes(0).SetHorizonDays(60).Save(actx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := db.Service.Create().SetAccountID(acc.ID).SetName("Cut").SetDurationMinutes(30).
		SetPriceAmount(1500).SetPriceCurrency("EUR").AddUnits(u).Save(actx)
	if err != nil {
		t.Fatal(err)
	}
	s := &jobShop{t: t, res: res, acc: acc, unit: u, svc: svc}
	for i := range barbers {
		b, err := db.Barber.Create().SetAccountID(acc.ID).SetName(fmt.Sprintf("Barber %d", i)).
			AddUnits(u).AddServices(svc).Save(actx)
		if err != nil {
			t.Fatal(err)
		}
		for wd := range 7 {
			err := db.WorkingHours.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetUnitID(u.ID).
				SetWeekday(wd).SetOpensAt("08:00").SetClosesAt("20:00").Exec(actx)
			if err != nil {
				t.Fatal(err)
			}
		}
		s.barbers = append(s.barbers, b)
	}
	secret, key, err := res.CreateAPIKey(bg, acc.ID, "all", domain.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := res.Authenticate(bg, secret)
	if err != nil {
		t.Fatal(err)
	}
	s.ctx, s.keyID = domain.WithViewer(bg, viewer), key.ID
	_, other, err := res.CreateAPIKey(bg, acc.ID, "catalog only", []string{domain.ScopeCatalogRead})
	if err != nil {
		t.Fatal(err)
	}
	s.otherID = other.ID
	return s
}

// openJobShop makes a resolver on db with a clock at jobsMonday, and a
// shop of its own.
func openJobShop(t testing.TB, db *store.DB, name string, barbers int) (*jobClock, *graph.Resolver, *jobShop) {
	t.Helper()
	clock := &jobClock{}
	clock.set(jobsMonday)
	res := newJobResolver(db, clock)
	return clock, res, newJobShop(t, res, name, barbers)
}

// service adds a service of the given minutes and buffer at the shop's
// unit, performed by the given barbers (indexes into s.barbers).
func (s *jobShop) service(name string, minutes, buffer int, barbers ...int) *ent.Service {
	s.t.Helper()
	db := s.res.Settings().DB
	actx := tenant.WithAccount(context.Background(), s.acc.ID)
	svc, err := db.Service.Create().SetAccountID(s.acc.ID).SetName(name).SetDurationMinutes(minutes).
		SetBufferMinutes(buffer).SetPriceAmount(3000).SetPriceCurrency("EUR").AddUnits(s.unit).Save(actx)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, b := range barbers {
		if err := db.Barber.UpdateOne(s.barbers[b]).AddServices(svc).Exec(actx); err != nil {
			s.t.Fatal(err)
		}
	}
	return svc
}

// at is a local (= UTC) time in the form requests take.
func at(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05") }

func (s *jobShop) hold(res *graph.Resolver, barber int, start time.Time, ttl int) (*ent.Hold, error) {
	return res.Mutation().HoldSlot(s.ctx, model.HoldSlotInput{
		UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: &s.barbers[barber].ID,
		StartsAt: at(start), TTLSeconds: &ttl,
	})
}

func (s *jobShop) mustHold(barber int, start time.Time, ttl int) *ent.Hold {
	s.t.Helper()
	h, err := s.hold(s.res, barber, start, ttl)
	if err != nil {
		s.t.Fatalf("hold %s with barber %d: %v", at(start), barber, err)
	}
	return h
}

func (s *jobShop) book(barber int, start time.Time) *ent.Appointment {
	s.t.Helper()
	p, err := s.res.Mutation().CreateAppointment(s.ctx, model.CreateAppointmentInput{
		UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: &s.barbers[barber].ID, StartsAt: at(start),
		Client: &model.ClientInput{Name: "Job Client", Phone: fmt.Sprintf("+3519100%05d", start.Unix()/60%100000)},
	})
	if err != nil {
		s.t.Fatalf("book %s with barber %d: %v", at(start), barber, err)
	}
	return p.Appointment
}

func newJobResolver(db *store.DB, clock *jobClock) *graph.Resolver {
	return limitedResolver(db, clock, func(l *graph.Limits) {
		l.ActiveHoldsPerKey = 0 // the shops' one key holds whole days here
	})
}

// limitedResolver makes a resolver on db with clock and the default
// limits as set changes them.
func limitedResolver(db *store.DB, clock *jobClock, set func(*graph.Limits)) *graph.Resolver {
	limits := graph.DefaultLimits
	set(&limits)
	return graph.New(graph.Settings{DB: db, Now: clock.now, Limits: limits})
}

// checkHolds checks that each hold has the given status in the database, and
// a reservation exactly while active.
func checkHolds(t *testing.T, db *store.DB, want hold.Status, holds ...*ent.Hold) {
	t.Helper()
	sys := tenant.System(context.Background())
	for _, h := range holds {
		got, err := db.Hold.Get(sys, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want {
			t.Errorf("hold %s (expires %s) is %s, want %s", h.ID, h.ExpiresAt, got.Status, want)
		}
		n, err := db.Reservation.Query().Where(reservation.HoldID(h.ID)).Count(sys)
		if err != nil {
			t.Fatal(err)
		}
		if wantN := map[bool]int{true: 1, false: 0}[want == hold.StatusActive]; n != wantN {
			t.Errorf("hold %s (%s) has %d reservations, want %d", h.ID, want, n, wantN)
		}
	}
}

func TestExpireHolds(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := &jobClock{}
		clock.set(jobsMonday)
		res := newJobResolver(db, clock)
		a, b := newJobShop(t, res, "Shop A", 2), newJobShop(t, res, "Shop B", 1)
		tomorrow := jobsMonday.Add(24 * time.Hour)

		var due, live []*ent.Hold
		for i := range 3 {
			due = append(due, a.mustHold(i%2, tomorrow.Add(time.Duration(i)*time.Hour), 10))
			live = append(live, a.mustHold(i%2, tomorrow.Add(time.Duration(i)*time.Hour+30*time.Minute), 1800))
		}
		due = append(due, b.mustHold(0, tomorrow, 60), b.mustHold(0, tomorrow.Add(time.Hour), 60))
		live = append(live, b.mustHold(0, tomorrow.Add(2*time.Hour), 600))
		released := a.mustHold(0, tomorrow.Add(5*time.Hour), 10)
		if _, err := res.Mutation().ReleaseHold(a.ctx, released.ID); err != nil {
			t.Fatal(err)
		}

		// Nothing is due yet.
		if n, err := res.ExpireHolds(context.Background(), 2); err != nil || n != 0 {
			t.Fatalf("ExpireHolds before any expiry = %d, %v; want 0", n, err)
		}
		// Exactly at a 60-second hold's expiry it counts as expired.
		clock.set(jobsMonday.Add(60 * time.Second))
		n, err := res.ExpireHolds(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(due) {
			t.Fatalf("ExpireHolds expired %d holds, want %d", n, len(due))
		}
		checkHolds(t, db, hold.StatusExpired, due...)
		checkHolds(t, db, hold.StatusActive, live...)
		checkHolds(t, db, hold.StatusReleased, released)
		if n, err := res.ExpireHolds(context.Background(), 2); err != nil || n != 0 {
			t.Fatalf("ExpireHolds again = %d, %v; want 0", n, err)
		}
	})
}

// TestExpireHoldsConcurrently runs ExpireHolds from 8 goroutines over two
// database handles (two processes, as it were) while other goroutines hold
// slots of another barber: each expired hold is freed exactly once.
func TestExpireHoldsConcurrently(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			db1, db2 := twoHandles(t, d)
			clock := &jobClock{}
			clock.set(jobsMonday)
			res1, res2 := newJobResolver(db1, clock), newJobResolver(db2, clock)
			s := newJobShop(t, res1, "Concurrent", 4) // barbers 0-2: due holds; 3: new holds
			tomorrow := jobsMonday.Add(24 * time.Hour)
			var due []*ent.Hold
			for b := range 3 {
				for i := range 8 {
					due = append(due, s.mustHold(b, tomorrow.Add(time.Duration(i)*30*time.Minute), 10))
				}
			}
			clock.set(jobsMonday.Add(time.Minute))

			var wg sync.WaitGroup
			var expired atomic.Int64
			var log freedLog
			errs := make(chan error, 64)
			newHolds := make(chan *ent.Hold, 64)
			for g := range 8 {
				res := []*graph.Resolver{res1, res2}[g%2]
				wg.Go(func() {
					n, err := res.ExpireHolds(graph.ObserveFreed(context.Background(), log.add), 3)
					expired.Add(int64(n))
					if err != nil {
						errs <- fmt.Errorf("ExpireHolds: %w", err)
					}
				})
			}
			for g := range 4 {
				res := []*graph.Resolver{res1, res2}[g%2]
				wg.Go(func() {
					for i := range 5 {
						h, err := s.hold(res, 3, tomorrow.Add(time.Duration(g*5+i)*30*time.Minute), 600)
						if err != nil {
							errs <- fmt.Errorf("hold: %w", err)
							continue
						}
						newHolds <- h
					}
				})
			}
			wg.Wait()
			close(errs)
			close(newHolds)
			for err := range errs {
				t.Error(err)
			}
			if got := expired.Load(); got != int64(len(due)) {
				t.Errorf("the 8 runs expired %d holds in all, want %d", got, len(due))
			}
			freed := map[string]int{}
			for _, f := range log.take() {
				if f.Cause == graph.FreedExpired && f.HoldID != nil {
					freed[*f.HoldID]++
				}
			}
			for _, h := range due {
				if freed[h.ID] != 1 {
					t.Errorf("hold %s freed %d times, want once", h.ID, freed[h.ID])
				}
			}
			var made []*ent.Hold
			for h := range newHolds {
				made = append(made, h)
			}
			if len(made) != 20 {
				t.Errorf("%d new holds, want 20", len(made))
			}
			checkHolds(t, db1, hold.StatusExpired, due...)
			checkHolds(t, db1, hold.StatusActive, made...)
			if n, err := res2.ExpireHolds(context.Background(), 3); err != nil || n != 0 {
				t.Errorf("ExpireHolds afterwards = %d, %v; want 0", n, err)
			}
		})
	}
}

// twoHandles opens one fresh database twice, as two processes would.
func twoHandles(t *testing.T, d string) (*store.DB, *store.DB) {
	t.Helper()
	url := storetest.URL(t, d)
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := store.Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dbs[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return dbs[0], dbs[1]
}

// reminders returns the appointment.reminder notifications of an
// appointment.
func reminders(t *testing.T, db *store.DB, appointmentID string) []*ent.Notification {
	t.Helper()
	ns, err := db.Notification.Query().
		Where(notification.AppointmentID(appointmentID), notification.Type(domain.EventReminder)).
		All(tenant.System(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestSendReminders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := &jobClock{}
		clock.set(jobsMonday.Add(-time.Hour)) // 08:00, to book one for 08:30 today
		res := newJobResolver(db, clock)
		s := newJobShop(t, res, "Reminders", 1)
		other := newJobShop(t, res, "Another account", 1)

		started := s.book(0, jobsMonday.Add(-30*time.Minute))
		clock.set(jobsMonday)
		soon := s.book(0, jobsMonday.Add(23*time.Hour))
		cancelled := s.book(0, jobsMonday.Add(23*time.Hour+30*time.Minute))
		if _, err := res.Mutation().CancelAppointment(s.ctx, cancelled.ID, "changed plans"); err != nil {
			t.Fatal(err)
		}
		edge := s.book(0, jobsMonday.Add(24*time.Hour)) // exactly at the lead: due
		later := s.book(0, jobsMonday.Add(25*time.Hour))
		theirs := other.book(0, jobsMonday.Add(23*time.Hour))
		// What each key with notifications:read had pending before.
		pending := func(sh *jobShop) []*ent.Notification {
			t.Helper()
			limit := 200
			ns, err := res.Query().PendingNotifications(sh.ctx, &limit)
			if err != nil {
				t.Fatal(err)
			}
			return ns
		}
		before, theirsBefore := len(pending(s)), len(pending(other))

		n, err := res.SendReminders(context.Background(), 24*time.Hour, 1)
		if err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("SendReminders sent %d, want 3 (two appointments of one account, one of another)", n)
		}
		for _, a := range []*ent.Appointment{soon, edge, theirs} {
			ns := reminders(t, db, a.ID)
			if len(ns) != 1 {
				t.Fatalf("appointment %s at %s: %d reminders, want 1", a.ID, a.StartsAt, len(ns))
			}
			if ns[0].Appointment["id"] != a.ID || ns[0].Appointment["status"] != "confirmed" {
				t.Errorf("reminder snapshot %v, want appointment %s, confirmed", ns[0].Appointment, a.ID)
			}
			if ns[0].AccountID != a.AccountID {
				t.Errorf("reminder of %s in account %s, want %s", a.ID, ns[0].AccountID, a.AccountID)
			}
			// Owed to the account's key with notifications:read, and no other.
			ds, err := db.Delivery.Query().Where(delivery.NotificationID(ns[0].ID)).All(tenant.System(context.Background()))
			if err != nil {
				t.Fatal(err)
			}
			want := s.keyID
			if a.AccountID == other.acc.ID {
				want = other.keyID
			}
			if len(ds) != 1 || ds[0].APIKeyID != want {
				t.Errorf("reminder of %s delivered to %v, want only key %s", a.ID, ds, want)
			}
			got, err := db.Appointment.Get(tenant.System(context.Background()), a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.RemindedAt == nil || !got.RemindedAt.Equal(jobsMonday) {
				t.Errorf("appointment %s reminded_at %v, want %s", a.ID, got.RemindedAt, jobsMonday)
			}
		}
		for _, a := range []*ent.Appointment{started, cancelled, later} {
			if ns := reminders(t, db, a.ID); len(ns) != 0 {
				t.Errorf("appointment %s (%s at %s): %d reminders, want none", a.ID, a.Status, a.StartsAt, len(ns))
			}
		}
		// The keys see them as pending notifications.
		ns := pending(s)
		if len(ns) != before+2 {
			t.Errorf("%d pending notifications, want %d", len(ns), before+2)
		}
		var types []string
		for _, n := range ns[before:] {
			types = append(types, n.Type+" "+*n.AppointmentID)
		}
		if want := []string{domain.EventReminder + " " + soon.ID, domain.EventReminder + " " + edge.ID}; !slices.Equal(types, want) {
			t.Errorf("new pending notifications %v, want %v", types, want)
		}
		if got := len(pending(other)); got != theirsBefore+1 {
			t.Errorf("the other account has %d pending, want %d", got, theirsBefore+1)
		}

		// Again: nothing new.
		if n, err := res.SendReminders(context.Background(), 24*time.Hour, 1); err != nil || n != 0 {
			t.Fatalf("SendReminders again = %d, %v; want 0", n, err)
		}
		// An hour later the 25-hour one is due, once.
		clock.set(jobsMonday.Add(time.Hour))
		if n, err := res.SendReminders(context.Background(), 24*time.Hour, 10); err != nil || n != 1 {
			t.Fatalf("SendReminders an hour later = %d, %v; want 1", n, err)
		}
		if ns := reminders(t, db, later.ID); len(ns) != 1 {
			t.Errorf("appointment 25 hours ahead: %d reminders an hour later, want 1", len(ns))
		}
		// A reminded appointment moved to another time is reminded again.
		moved := at(jobsMonday.Add(23*time.Hour + 30*time.Minute)) // freed by the cancellation
		if _, err := res.Mutation().RescheduleAppointment(s.ctx, soon.ID, model.RescheduleAppointmentInput{StartsAt: moved}); err != nil {
			t.Fatal(err)
		}
		if n, err := res.SendReminders(context.Background(), 24*time.Hour, 10); err != nil || n != 1 {
			t.Fatalf("SendReminders after a reschedule = %d, %v; want 1", n, err)
		}
		if ns := reminders(t, db, soon.ID); len(ns) != 2 {
			t.Errorf("rescheduled appointment: %d reminders, want 2", len(ns))
		}
	})
}

// TestSendRemindersConcurrently runs SendReminders from 8 goroutines over
// two database handles (two processes, as it were): each appointment gets
// exactly one reminder.
func TestSendRemindersConcurrently(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			db1, db2 := twoHandles(t, d)
			clock := &jobClock{}
			clock.set(jobsMonday)
			res1, res2 := newJobResolver(db1, clock), newJobResolver(db2, clock)
			s := newJobShop(t, res1, "Concurrent", 3)
			var booked []*ent.Appointment
			for day := range 2 {
				for b := range 3 {
					for i := range 5 {
						start := jobsMonday.Add(time.Duration(24*(day+1))*time.Hour - time.Hour + time.Duration(i)*time.Hour)
						booked = append(booked, s.book(b, start))
					}
				}
			}

			var wg sync.WaitGroup
			var sent atomic.Int64
			errs := make(chan error, 8)
			for g := range 8 {
				res := []*graph.Resolver{res1, res2}[g%2]
				wg.Go(func() {
					n, err := res.SendReminders(context.Background(), 72*time.Hour, 4)
					sent.Add(int64(n))
					if err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if got := sent.Load(); got != int64(len(booked)) {
				t.Errorf("the 8 runs sent %d reminders in all, want %d", got, len(booked))
			}
			for _, a := range booked {
				if ns := reminders(t, db1, a.ID); len(ns) != 1 {
					t.Errorf("appointment %s: %d reminders, want 1", a.ID, len(ns))
				}
			}
			sys := tenant.System(context.Background())
			if n, err := db2.Appointment.Query().Where(appointment.RemindedAtIsNil()).Count(sys); err != nil || n != 0 {
				t.Errorf("%d appointments without reminded_at (%v), want 0", n, err)
			}
			owed, err := db1.Delivery.Query().Where(delivery.APIKeyID(s.keyID)).
				QueryNotification().Where(notification.Type(domain.EventReminder)).Count(sys)
			if err != nil || owed != len(booked) {
				t.Errorf("%d reminders owed to the key (%v), want %d", owed, err, len(booked))
			}
			if n, err := res2.SendReminders(context.Background(), 72*time.Hour, 4); err != nil || n != 0 {
				t.Errorf("SendReminders afterwards = %d, %v; want 0", n, err)
			}
		})
	}
}

// TestRunJobs runs the loop briefly and checks it does both jobs and stops
// when its context ends.
func TestRunJobs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock, res, s := openJobShop(t, db, "Loop", 1)
		h := s.mustHold(0, jobsMonday.Add(48*time.Hour), 10)
		a := s.book(0, jobsMonday.Add(2*time.Hour))
		clock.set(jobsMonday.Add(time.Minute))

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			res.RunJobs(ctx, 20*time.Millisecond, 24*time.Hour, graph.DefaultRetention)
		}()
		sys := tenant.System(context.Background())
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := db.Hold.Get(sys, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status == hold.StatusExpired && len(reminders(t, db, a.ID)) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s: hold %s, %d reminders", got.Status, len(reminders(t, db, a.ID)))
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("RunJobs did not return after its context ended")
		}
		if ns := reminders(t, db, a.ID); len(ns) != 1 {
			t.Errorf("%d reminders after the loop ran many times, want 1", len(ns))
		}
	})
}

// TestPruneReservations removes the reservations of appointments that
// ended over an hour ago, and nothing else: not the appointments, not the
// reservations of appointments yet to end or of holds, and no answer
// changes.
func TestPruneReservations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock, res, s := openJobShop(t, db, "Prune", 2)
		sys := tenant.System(context.Background())
		tuesday := jobsMonday.Add(24 * time.Hour)
		past := []*ent.Appointment{s.book(0, jobsMonday.Add(time.Hour)), s.book(1, jobsMonday.Add(2*time.Hour))}
		later := s.book(0, tuesday.Add(time.Hour))
		held := s.mustHold(1, tuesday.Add(3*time.Hour), 1800)
		reservations := func() []string {
			t.Helper()
			var ids []string
			rs, err := db.Reservation.Query().All(sys)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				switch {
				case r.HoldID != nil:
					ids = append(ids, *r.HoldID)
				case r.AppointmentID != nil:
					ids = append(ids, *r.AppointmentID)
				}
			}
			slices.Sort(ids)
			return ids
		}
		want := func(ids ...string) {
			t.Helper()
			slices.Sort(ids)
			if got := reservations(); !slices.Equal(got, ids) {
				t.Fatalf("reservations of %v, want %v", got, ids)
			}
		}
		free := func() []string {
			t.Helper()
			av, err := res.Query().Availability(s.ctx, s.unit.ID, s.svc.ID, nil, at(tuesday)[:10])
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, sl := range av.Slots {
				out = append(out, sl.BarberID+" "+sl.StartsAt)
			}
			return out
		}
		prune := func(wantN int) {
			t.Helper()
			if n, err := res.PruneReservations(context.Background(), 1); err != nil || n != wantN {
				t.Fatalf("PruneReservations = %d, %v; want %d", n, err, wantN)
			}
		}
		all := []string{past[0].ID, past[1].ID, later.ID, held.ID}

		prune(0)
		want(all...)
		// The 10:00 appointment ended at 10:30: kept until 11:30, gone after.
		clock.set(jobsMonday.Add(2*time.Hour + 30*time.Minute))
		prune(0)
		want(all...)
		clock.set(jobsMonday.Add(2*time.Hour + 31*time.Minute))
		prune(1)
		want(past[1].ID, later.ID, held.ID)
		clock.set(tuesday)
		tuesdayFree := free()
		prune(1)
		want(later.ID, held.ID)
		prune(0)
		if got := free(); !slices.Equal(got, tuesdayFree) {
			t.Fatalf("tuesday after pruning offers %v, before %v", got, tuesdayFree)
		}
		for _, a := range past {
			got, err := db.Appointment.Get(sys, a.ID)
			if err != nil || got.Status != appointment.StatusConfirmed {
				t.Fatalf("appointment %s after pruning: %v, %v", a.ID, got, err)
			}
		}
	})
}

// BenchmarkExpireHolds measures the job that frees expired holds: each
// round, four barbers each have twelve holds expire at once (a chatbot
// that held a day's afternoon and went away), and ExpireHolds frees them.
// An op is one round of 48 holds.
func BenchmarkExpireHolds(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			clock := &jobClock{}
			clock.set(jobsMonday)
			res := newJobResolver(storetest.Open(b, d), clock)
			s := newJobShop(b, res, "Expiring", 4)
			for b.Loop() {
				b.StopTimer()
				clock.set(jobsMonday)
				for barber := range s.barbers {
					for i := range 12 {
						s.mustHold(barber, jobsTuesday.Add(14*time.Hour+time.Duration(i)*30*time.Minute), 10)
					}
				}
				clock.set(jobsMonday.Add(time.Minute))
				b.StartTimer()
				if n, err := res.ExpireHolds(context.Background(), 0); err != nil || n != 48 {
					b.Fatalf("ExpireHolds = %d, %v; want 48", n, err)
				}
			}
		})
	}
}
