package graph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/ent/waitlistentry"
	"barberd/ent/workinghours"
	"barberd/graph"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/graph/waitlist"
)

// fullDay books every slot of the shop's one barber on day (08:00-20:00).
func (s *jobShop) fullDay(day time.Time) []*ent.Appointment {
	s.t.Helper()
	var out []*ent.Appointment
	for t := day.Add(8 * time.Hour); t.Before(day.Add(20 * time.Hour)); t = t.Add(30 * time.Minute) {
		out = append(out, s.book(0, t))
	}
	return out
}

func (s *jobShop) join(phone, day string, extra func(*model.JoinWaitlistInput)) (*ent.WaitlistEntry, error) {
	in := model.JoinWaitlistInput{
		UnitID: s.unit.ID, ServiceID: s.svc.ID, From: day, To: day,
		Client: &model.ClientInput{Name: "Waiting " + phone, Phone: phone},
	}
	if extra != nil {
		extra(&in)
	}
	p, err := s.res.Mutation().JoinWaitlist(s.ctx, in)
	if err != nil {
		return nil, err
	}
	return p.Entry, nil
}

// probe runs the freeings' probe (store.DB.InsertOpenings) for the first
// barber's time from start to end, at jobsMonday, in a transaction it rolls
// back, and says whether it would write an opening. It runs it again as
// one of several spans probed in one statement (a barber's expired holds),
// beside a span no entry can want, and fails the test when the two
// disagree.
func (s *jobShop) probe(start, end time.Time) bool {
	s.t.Helper()
	alone := s.probeSpans(store.OpeningSpan{ID: "opn_probe", Start: start, End: end})
	far := start.AddDate(0, 0, 300) // beyond any entry's reach
	together := s.probeSpans(store.OpeningSpan{ID: "opn_far", Start: far, End: far.Add(end.Sub(start))},
		store.OpeningSpan{ID: "opn_probe", Start: start, End: end})
	if !slices.Equal(together, alone) {
		s.t.Errorf("the probe of %s-%s with another span wrote %v, alone %v", start, end, together, alone)
	}
	return len(alone) > 0
}

// probeSpans runs the freeings' probe of the first barber's spans, at
// jobsMonday, in a transaction it rolls back, and returns the ids of the
// openings it would write.
func (s *jobShop) probeSpans(spans ...store.OpeningSpan) []string {
	s.t.Helper()
	db := s.res.Settings().DB
	actx := tenant.WithAccount(context.Background(), s.acc.ID)
	tx, err := db.Tx(actx)
	if err != nil {
		s.t.Fatal(err)
	}
	defer tx.Rollback()
	wrote, err := db.InsertOpenings(actx, tx, s.acc.ID, s.barbers[0].ID, spans, jobsMonday)
	if err != nil {
		s.t.Fatal(err)
	}
	return wrote
}

// take runs an offer pass's take of the opening id (store.TakeOpenings)
// at jobsMonday, in a transaction it rolls back, and says whether the
// opening came back and whether a waiting entry still wants it.
func (s *jobShop) take(id string) (found, wanted bool) {
	s.t.Helper()
	db := s.res.Settings().DB
	sys := tenant.System(context.Background())
	tx, err := db.Tx(sys)
	if err != nil {
		s.t.Fatal(err)
	}
	defer tx.Rollback()
	ops, err := store.TakeOpenings(sys, tx, db.Dialect, id, 10, jobsMonday)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(ops) == 0 || ops[0].ID != id {
		return false, false
	}
	return true, ops[0].Wanted
}

func (s *jobShop) entry(id string) *ent.WaitlistEntry {
	s.t.Helper()
	e, err := s.res.Query().WaitlistEntry(s.ctx, id)
	if err != nil {
		s.t.Fatal(err)
	}
	return e
}

// TestWaitlistOfferChain walks the waitlist's main path on both databases:
// joins are refused while a matching start is free and when the client
// already waits; a cancellation offers its start to the oldest entry, held
// for the entry's key and told on its feed; leaving passes the start to the
// next entry, and booking with the offer's hold books the entry.
func TestWaitlistOfferChain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Waitlist", 1)
		day := jobsTuesday
		date := day.Format("2006-01-02")
		if _, err := s.join("+351910000001", date, nil); domain.ErrorCode(err) != domain.CodeSlotAvailable {
			t.Fatalf("join with the day free: %v, want slot_available", err)
		} else if e, _ := domain.AsError(err); len(e.Alternatives) != 3 {
			t.Errorf("slot_available names %d alternatives, want 3", len(e.Alternatives))
		}
		booked := s.fullDay(day)
		first, err := s.join("+351910000001", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		if first.Status != waitlistentry.StatusWaiting || first.OfferHoldSeconds != waitlist.DefaultOfferHoldSeconds {
			t.Fatalf("joined entry %+v", first)
		}
		if _, err := s.join("+351910000001", date, nil); domain.ErrorCode(err) != domain.CodeAlreadyWaiting {
			t.Fatalf("second join of the client: %v, want already_waiting", err)
		}
		second, err := s.join("+351910000002", date, func(in *model.JoinWaitlistInput) {
			from := "17:00"
			in.TimeFrom = &from
		})
		if err != nil {
			t.Fatal(err)
		}
		// 17:30 frees: the oldest entry gets it, held.
		freed := booked[19]
		if _, err := res.Mutation().CancelAppointment(s.ctx, freed.ID, "client ill"); err != nil {
			t.Fatal(err)
		}
		got := s.entry(first.ID)
		if got.Status != waitlistentry.StatusOffered || got.OfferStartsAt == nil || !got.OfferStartsAt.Equal(freed.StartsAt) || got.OfferHoldID == nil {
			t.Fatalf("first entry after the cancel: %s offer %v hold %v", got.Status, got.OfferStartsAt, got.OfferHoldID)
		}
		if s.entry(second.ID).Status != waitlistentry.StatusWaiting {
			t.Fatal("the second entry was offered too")
		}
		ns, err := res.Query().PendingNotifications(s.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := ns[len(ns)-1]
		if last.Type != "slot.available" || last.AppointmentID != nil || last.Offer["waitlist_entry"].(map[string]any)["id"] != first.ID {
			t.Errorf("last notification %s %v %v", last.Type, last.AppointmentID, last.Offer)
		}
		// Leaving releases the hold: the second entry (17:00 on) gets it.
		if _, err := res.Mutation().LeaveWaitlist(s.ctx, first.ID); err != nil {
			t.Fatal(err)
		}
		checkHolds(t, db, hold.StatusReleased, &ent.Hold{ID: *got.OfferHoldID})
		got2 := s.entry(second.ID)
		if got2.Status != waitlistentry.StatusOffered || !got2.OfferStartsAt.Equal(freed.StartsAt) {
			t.Fatalf("second entry after the first left: %s %v", got2.Status, got2.OfferStartsAt)
		}
		p, err := res.Mutation().CreateAppointment(s.ctx, model.CreateAppointmentInput{
			UnitID: s.unit.ID, ServiceID: s.svc.ID, StartsAt: at(freed.StartsAt), HoldID: got2.OfferHoldID,
			Client: &model.ClientInput{Name: "Waiting 2", Phone: "+351910000002"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if e := s.entry(second.ID); e.Status != waitlistentry.StatusBooked || e.AppointmentID == nil || *e.AppointmentID != p.Appointment.ID {
			t.Fatalf("second entry after booking: %s %v", e.Status, e.AppointmentID)
		}
		if e := s.entry(first.ID); e.Status != waitlistentry.StatusCancelled {
			t.Fatalf("first entry after leaving: %s", e.Status)
		}
	})
}

// TestWaitlistCap checks the per-key cap of waiting entries.
func TestWaitlistCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := &jobClock{}
		clock.set(jobsMonday)
		res := limitedResolver(db, clock, func(l *graph.Limits) { l.ActiveHoldsPerKey, l.WaitlistPerKey = 0, 2 })
		s := newJobShop(t, res, "Capped", 1)
		day := jobsTuesday
		s.fullDay(day)
		for i := range 3 {
			_, err := s.join(fmt.Sprintf("+35191000010%d", i), day.Format("2006-01-02"), nil)
			if want := ""; i == 2 {
				want = domain.CodeTooManyWaitlist
				if domain.ErrorCode(err) != want {
					t.Fatalf("join %d: %v, want %s", i, err, want)
				}
			} else if err != nil {
				t.Fatalf("join %d: %v", i, err)
			}
		}
	})
}

// TestWaitlistOtherFreeings checks the freeings besides a cancel: time off
// removed offers its span, an offer hold that expires passes its start to
// the next entry through the expiry job, and entries whose last day is over
// are expired and, past the retention, pruned.
func TestWaitlistOtherFreeings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock, res, s := openJobShop(t, db, "Freeings", 1)
		bg := context.Background()
		day := jobsTuesday
		date := day.Format("2006-01-02")
		booked := s.fullDay(day)
		// Cancel 10:00, then take it away with time off: nothing is free.
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[4].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		off, err := res.Mutation().AddTimeOff(s.ctx, model.AddTimeOffInput{
			BarberID: s.barbers[0].ID, StartsAt: day.Add(10 * time.Hour), EndsAt: day.Add(10*time.Hour + 30*time.Minute),
		})
		if err != nil {
			t.Fatal(err)
		}
		hold := 10
		first, err := s.join("+351910000201", date, func(in *model.JoinWaitlistInput) { in.OfferHoldSeconds = &hold })
		if err != nil {
			t.Fatal(err)
		}
		second, err := s.join("+351910000202", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Mutation().RemoveTimeOff(s.ctx, off.ID); err != nil {
			t.Fatal(err)
		}
		got := s.entry(first.ID)
		if got.Status != waitlistentry.StatusOffered || !got.OfferStartsAt.Equal(day.Add(10*time.Hour)) || got.OfferHoldID == nil {
			t.Fatalf("first entry after the time off went: %s %v %v", got.Status, got.OfferStartsAt, got.OfferHoldID)
		}
		// Its 10-second hold expires: the job frees it, the second entry gets it.
		clock.set(jobsMonday.Add(11 * time.Second))
		if _, err := res.ExpireHolds(bg, 0); err != nil {
			t.Fatal(err)
		}
		if e := s.entry(second.ID); e.Status != waitlistentry.StatusOffered || !e.OfferStartsAt.Equal(day.Add(10*time.Hour)) {
			t.Fatalf("second entry after the first's hold expired: %s %v", e.Status, e.OfferStartsAt)
		}
		// A third waits in vain; after its day it is expired, then pruned.
		third, err := s.join("+351910000203", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		clock.set(day.Add(49 * time.Hour))
		if e := s.entry(third.ID); e.Status != waitlistentry.StatusExpired {
			t.Fatalf("third entry after its day: %s", e.Status)
		}
		if n, err := res.Waitlist().Expire(bg, 0); err != nil || n != 1 {
			t.Fatalf("expired %d, %v; want 1", n, err)
		}
		if n, err := res.PruneWaitlist(bg, day.Add(48*time.Hour), 0); err != nil || n != 3 {
			t.Fatalf("pruned %d, %v; want the 3 ended entries", n, err)
		}
	})
}

// TestWaitlistScheduleChanges checks the schedule changes that free time:
// hours widened offer the new time, and a barber newly given the service
// offers theirs.
func TestWaitlistScheduleChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Schedules", 1)
		day := jobsTuesday
		date := day.Format("2006-01-02")
		s.fullDay(day)
		evening, err := s.join("+351910000301", date, func(in *model.JoinWaitlistInput) {
			from, to := "20:00", "21:00"
			in.TimeFrom, in.TimeTo = &from, &to
		})
		if err != nil {
			t.Fatal(err)
		}
		anyTime, err := s.join("+351910000302", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Open until 21:00 on the day's weekday: 20:00 goes to the evening
		// entry (the older of the two that want it), 20:30 to the other.
		wd := int(day.Weekday())
		if _, err := res.Mutation().SetWorkingHours(s.ctx, model.SetWorkingHoursInput{
			BarberID: s.barbers[0].ID, UnitID: s.unit.ID,
			Days: []*model.WorkingDayInput{{Weekday: wd, OpensAt: "08:00", ClosesAt: "21:00"}},
		}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]time.Time{evening.ID: day.Add(20 * time.Hour), anyTime.ID: day.Add(20*time.Hour + 30*time.Minute)} {
			if e := s.entry(id); e.Status != waitlistentry.StatusOffered || !e.OfferStartsAt.Equal(want) {
				t.Errorf("entry %s after the hours widened: %s %v, want offered %s", id, e.Status, e.OfferStartsAt, want)
			}
		}
		// A new barber with hours at the unit but not the service: given
		// the service, their morning is offered.
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		b, err := db.Barber.Create().SetAccountID(s.acc.ID).SetName("New").AddUnits(s.unit).Save(actx)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.WorkingHours.Create().SetAccountID(s.acc.ID).SetBarberID(b.ID).SetUnitID(s.unit.ID).
			SetWeekday(wd).SetOpensAt("08:00").SetClosesAt("09:00").Exec(actx); err != nil {
			t.Fatal(err)
		}
		morning, err := s.join("+351910000303", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Mutation().UpdateBarber(s.ctx, b.ID, model.UpdateBarberInput{ServiceIds: []string{s.svc.ID}}); err != nil {
			t.Fatal(err)
		}
		if e := s.entry(morning.ID); e.Status != waitlistentry.StatusOffered || !e.OfferStartsAt.Equal(day.Add(8*time.Hour)) || *e.OfferBarberID != b.ID {
			t.Errorf("entry after the barber got the service: %s %v", e.Status, e.OfferStartsAt)
		}
	})
}

// TestWaitlistOpeningGap checks the probe that decides whether freed time
// is worth an offer pass: a start freed between bookings is not, for an
// entry whose service is longer than the gap; once the gap fits it, the
// time is offered.
func TestWaitlistOpeningGap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Gap", 1)
		long := s.service("Long cut", 60, 0, 0)
		day := jobsTuesday
		booked := s.fullDay(day)
		e, err := s.join("+351910000301", day.Format("2006-01-02"), func(in *model.JoinWaitlistInput) { in.ServiceID = long.ID })
		if err != nil {
			t.Fatal(err)
		}
		// 10:00 frees between 09:30 and 10:30: 30 minutes, no 60-minute cut.
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[4].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if s.probe(booked[4].StartsAt, booked[4].EndsAt) {
			t.Error("the probe wants a 30-minute gap for a 60-minute service")
		}
		if got := s.entry(e.ID); got.Status != waitlistentry.StatusWaiting {
			t.Fatalf("entry after the first cancel: %s", got.Status)
		}
		// 10:30 frees too: the gap is an hour, and the entry gets 10:00.
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[5].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		got := s.entry(e.ID)
		if got.Status != waitlistentry.StatusOffered || !got.OfferStartsAt.Equal(booked[4].StartsAt) {
			t.Fatalf("entry after the second cancel: %s %v", got.Status, got.OfferStartsAt)
		}
		// With the day's last booking gone, no reservation ends the gap:
		// the hours do. 19:30 leaves no hour before 20:00. PostgreSQL's
		// probe reads the hours and refuses; SQLite's lets the gap decide
		// (its pass then finds no start).
		last := booked[len(booked)-1]
		if _, err := res.Mutation().CancelAppointment(s.ctx, last.ID, "moved"); err != nil {
			t.Fatal(err)
		}
		late, err := s.join("+351910000302", day.Format("2006-01-02"), func(in *model.JoinWaitlistInput) { in.ServiceID = long.ID })
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.probe(last.StartsAt, last.EndsAt), db.Dialect != dialect.Postgres; got != want {
			t.Errorf("the probe of 19:30 with the day's end after it: %v, want %v", got, want)
		}
		// 19:00 frees too: an hour before closing, offered.
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[len(booked)-2].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if got := s.entry(late.ID); got.Status != waitlistentry.StatusOffered || !got.OfferStartsAt.Equal(booked[len(booked)-2].StartsAt) {
			t.Fatalf("entry after 19:00 freed: %s %v", got.Status, got.OfferStartsAt)
		}
	})
}

// TestWaitlistOpeningHours checks that PostgreSQL's probe reads the
// barber's hours where the gap between reservations runs into a break:
// 11:30 freed before a 12:00-13:00 break leaves a 90-minute gap to the
// 13:00 booking, but no hour of working time that could touch 11:30. On
// SQLite the gap alone decides. Starts the hours allow are wanted on both.
func TestWaitlistOpeningHours(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Hours", 1)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		long := s.service("Long cut", 60, 0, 0)
		day := jobsTuesday
		booked := s.fullDay(day) // 08:00, 08:30, ..., 19:30
		// The day's hours gain a break over two of its bookings, which
		// then go.
		n, err := db.WorkingHours.Update().Where(workinghours.BarberID(s.barbers[0].ID), workinghours.Weekday(int(day.Weekday()))).
			SetBreaks([]string{"12:00-13:00"}).Save(actx)
		if err != nil || n != 1 {
			t.Fatalf("break: %d rows, %v", n, err)
		}
		for _, a := range booked[8:10] {
			if _, err := res.Mutation().CancelAppointment(s.ctx, a.ID, "break"); err != nil {
				t.Fatal(err)
			}
		}
		e, err := s.join("+351910000321", day.Format("2006-01-02"), func(in *model.JoinWaitlistInput) { in.ServiceID = long.ID })
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.probe(booked[7].StartsAt, booked[7].EndsAt), db.Dialect != dialect.Postgres; got != want {
			t.Errorf("the probe of 11:30 before the break: %v, want %v", got, want)
		}
		// 13:00 after the break, with 13:30 free too: an hour that fits.
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[11].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if !s.probe(booked[10].StartsAt, booked[10].EndsAt) {
			t.Error("the probe of 13:00, with 13:00-14:00 free of bookings and break, wants nothing")
		}
		// Without the break 11:30 has its hour; breaks written behind
		// barberd's back that it cannot read refuse nothing (and fail
		// nothing).
		for _, breaks := range []string{`NULL`, `'null'`, `'[]'`, `'["noon"]'`, `'[1200]'`, `'"12:00-13:00"'`, `'{"from": "12:00"}'`} {
			if _, err := db.SQL.ExecContext(actx, `UPDATE working_hours SET breaks = `+breaks+` WHERE barber_id = $1`, s.barbers[0].ID); err != nil {
				t.Fatal(err)
			}
			if !s.probe(booked[7].StartsAt, booked[7].EndsAt) {
				t.Errorf("the probe of 11:30 with breaks %s wants nothing", breaks)
			}
		}
		for _, hours := range []string{`'8:00'`, `'25:00'`, `' 08:00'`} {
			if _, err := db.SQL.ExecContext(actx, `UPDATE working_hours SET breaks = '["12:00-13:00"]', opens_at = `+hours+` WHERE barber_id = $1`, s.barbers[0].ID); err != nil {
				t.Fatal(err)
			}
			if !s.probe(booked[7].StartsAt, booked[7].EndsAt) {
				t.Errorf("the probe of 11:30 with the break, opening at %s, wants nothing", hours)
			}
		}
		// A unit's time zone PostgreSQL does not know (its zone database
		// older than Go's) refuses nothing either.
		if _, err := db.SQL.ExecContext(actx, `UPDATE working_hours SET opens_at = '08:00' WHERE barber_id = $1`, s.barbers[0].ID); err != nil {
			t.Fatal(err)
		}
		if got, want := s.probe(booked[7].StartsAt, booked[7].EndsAt), db.Dialect != dialect.Postgres; got != want {
			t.Errorf("the probe of 11:30 before the break, hours restored: %v, want %v", got, want)
		}
		if _, err := db.SQL.ExecContext(actx, `UPDATE units SET timezone = 'Mars/Olympus_Mons' WHERE id = $1`, s.unit.ID); err != nil {
			t.Fatal(err)
		}
		if !s.probe(booked[7].StartsAt, booked[7].EndsAt) {
			t.Error("the probe of 11:30 in a time zone the database does not know wants nothing")
		}
		if got := s.entry(e.ID); got.Status != waitlistentry.StatusWaiting {
			t.Fatalf("entry: %s", got.Status)
		}
	})
}

// TestExpiredHoldsProbedTogether: the job that frees a barber's expired
// holds probes the waitlist for all of their times in one statement, not
// one a hold, and the entry that waits is offered one of them.
func TestExpiredHoldsProbedTogether(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock, _, s := openJobShop(t, db, "Expired together", 1)
		day := jobsTuesday
		var held []*ent.Hold
		for i, at := 0, day.Add(8*time.Hour); at.Before(day.Add(20 * time.Hour)); i, at = i+1, at.Add(30*time.Minute) {
			if i%4 == 1 {
				held = append(held, s.mustHold(0, at, 10))
			} else {
				s.book(0, at)
			}
		}
		e, err := s.join("+351910000341", day.Format("2006-01-02"), nil)
		if err != nil {
			t.Fatal(err)
		}
		counted, log := storetest.Counting(db)
		res := newJobResolver(counted, clock)
		clock.set(jobsMonday.Add(time.Minute))
		log.Take()
		n, err := res.ExpireHolds(context.Background(), 0)
		if err != nil || n != len(held) {
			t.Fatalf("ExpireHolds = %d, %v; want %d", n, err, len(held))
		}
		probes := 0
		for _, l := range log.Take() {
			if strings.Contains(l, "INSERT INTO openings") {
				probes++
			}
		}
		if probes != 1 {
			t.Errorf("%d holds expired with %d probes of the waitlist; want one", len(held), probes)
		}
		got := s.entry(e.ID)
		if got.Status != waitlistentry.StatusOffered || !slices.ContainsFunc(held, func(h *ent.Hold) bool { return h.StartsAt.Equal(*got.OfferStartsAt) }) {
			t.Errorf("entry after the holds expired: %s %v, want offered a held time", got.Status, got.OfferStartsAt)
		}
	})
}

// TestWaitlistProbeAsksHoursOnce: on PostgreSQL the freeings' probe asks
// the working hours (barberd_hours_refuse) once for each unit and length
// of service among the entries that fit the freed time's gap, not once for
// each entry: four entries of one service, one call. It fails when the
// planner may push the call below the probe's DISTINCT, into the join of
// the entries (four calls).
func TestWaitlistProbeAsksHoursOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("PostgreSQL asks the hours; SQLite's probe reads the gap alone")
		}
		_, _, s := openJobShop(t, db, "Hours once", 1)
		day := jobsTuesday
		booked := s.fullDay(day)
		for i := range 4 {
			if _, err := s.join(fmt.Sprintf("+35191000033%d", i), day.Format("2006-01-02"), nil); err != nil {
				t.Fatal(err)
			}
		}
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		tx, err := db.Tx(actx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck // read only
		if _, err := tx.ExecContext(actx, `SET LOCAL track_functions = 'pl'`); err != nil {
			t.Fatal(err)
		}
		// The 10:30 booking's time, as if freed: its neighbours make a gap
		// that each entry's service fits.
		wrote, err := db.InsertOpenings(actx, tx, s.acc.ID, s.barbers[0].ID,
			[]store.OpeningSpan{{ID: "opn_probe", Start: booked[5].StartsAt, End: booked[5].EndsAt}}, jobsMonday)
		if err != nil || len(wrote) != 1 {
			t.Fatalf("the probe of 10:30: %v, %v; want an opening", wrote, err)
		}
		rows, err := tx.QueryContext(actx, `SELECT pg_stat_get_xact_function_calls('barberd_hours_refuse'::regproc)`)
		if err != nil {
			t.Fatal(err)
		}
		var calls int
		for rows.Next() {
			if err := rows.Scan(&calls); err != nil {
				t.Fatal(err)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Errorf("the probe asked the hours %d times for four entries of one service; want once", calls)
		}
	})
}

// TestWaitlistOpeningWindow checks that the freeings' probe keeps to an
// entry's daily window on its date: from its start to where a start at its
// end ends (an hour more either side only on a day whose clocks change:
// TestShiftSlack), and to the whole day on rows written before window_end
// existed.
func TestWaitlistOpeningWindow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, _, s := openJobShop(t, db, "Window", 1)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		day := jobsTuesday
		booked := s.fullDay(day) // 08:00, 08:30, ...
		e, err := s.join("+351910000311", day.Format("2006-01-02"), func(in *model.JoinWaitlistInput) {
			from, to := "10:00", "11:00"
			in.TimeFrom, in.TimeTo = &from, &to
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			at   *ent.Appointment
			want bool
		}{
			{booked[0], false},  // 08:00
			{booked[3], false},  // 09:30, ends as the window starts
			{booked[4], true},   // 10:00
			{booked[6], true},   // 11:00, the window's last start
			{booked[8], false},  // 12:00, after a start at 11:00 ends
			{booked[12], false}, // 14:00
		} {
			if got := s.probe(c.at.StartsAt, c.at.EndsAt); got != c.want {
				t.Errorf("a freeing at %s wrote an opening: %v, want %v", c.at.StartsAt.Format("15:04"), got, c.want)
			}
		}
		// Spans past one statement's worth are probed in several.
		var many []store.OpeningSpan
		for i := range 249 {
			far := booked[4].StartsAt.AddDate(0, 0, 100+i)
			many = append(many, store.OpeningSpan{ID: fmt.Sprintf("opn_far%03d", i), Start: far, End: far.Add(30 * time.Minute)})
		}
		many = append(many, store.OpeningSpan{ID: "opn_probe", Start: booked[4].StartsAt, End: booked[4].EndsAt})
		if got := s.probeSpans(many...); !slices.Equal(got, []string{"opn_probe"}) {
			t.Errorf("250 spans probed at once wrote %v, want [opn_probe]", got)
		}
		// An entry from before window_end: its day's end bounds it.
		if _, err := db.SQL.ExecContext(actx, `UPDATE waitlist_entries SET window_end = NULL WHERE id = $1`, e.ID); err != nil {
			t.Fatal(err)
		}
		if !s.probe(booked[12].StartsAt, booked[12].EndsAt) {
			t.Error("without window_end, a freeing at 14:00 wrote no opening")
		}
	})
}

// TestWaitlistOfferAtHoldCap checks that an offer to a key at its hold cap
// tells the start without holding it.
func TestWaitlistOfferAtHoldCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "HoldCap", 1)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		if err := db.APIKey.UpdateOneID(s.keyID).SetMaxActiveHolds(1).Exec(actx); err != nil {
			t.Fatal(err)
		}
		day := jobsTuesday
		booked := s.fullDay(day)
		s.mustHold(0, day.Add(48*time.Hour+10*time.Hour), 600) // the key's one hold
		e, err := s.join("+351910000401", day.Format("2006-01-02"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := res.Mutation().CancelAppointment(s.ctx, booked[4].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		got := s.entry(e.ID)
		if got.Status != waitlistentry.StatusOffered || !got.OfferStartsAt.Equal(booked[4].StartsAt) || got.OfferHoldID != nil {
			t.Fatalf("entry of a key at its hold cap: %s %v hold %v, want offered without a hold", got.Status, got.OfferStartsAt, got.OfferHoldID)
		}
	})
}

// TestWaitlistTakeWanted checks that an offer pass's take of its openings
// tells which a waiting entry still wants (the probe's condition, asked
// again): an opening whose entry another pass offered first, with only
// entries whose service cannot fit its gap left, is taken and read no
// further, and offers nothing.
func TestWaitlistTakeWanted(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Wanted", 2)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		long := s.service("Long cut", 60, 0, 0)
		day := jobsTuesday
		date := day.Format("2006-01-02")
		booked := s.fullDay(day)
		var other []*ent.Appointment // the second barber's day, full too
		for at := day.Add(8 * time.Hour); at.Before(day.Add(20 * time.Hour)); at = at.Add(30 * time.Minute) {
			other = append(other, s.book(1, at))
		}
		short, err := s.join("+351910000501", date, nil)
		if err != nil {
			t.Fatal(err)
		}
		longEntry, err := s.join("+351910000502", date, func(in *model.JoinWaitlistInput) { in.ServiceID = long.ID })
		if err != nil {
			t.Fatal(err)
		}
		// An opening of 10:00-10:30, between bookings: the short entry's
		// 30 minutes fit its gap, the long entry's 60 do not.
		tx, err := db.Tx(actx)
		if err != nil {
			t.Fatal(err)
		}
		wrote, err := db.InsertOpenings(actx, tx, s.acc.ID, s.barbers[0].ID,
			[]store.OpeningSpan{{ID: "opn_wanted", Start: booked[4].StartsAt, End: booked[4].EndsAt}}, jobsMonday)
		if err != nil || len(wrote) != 1 {
			t.Fatalf("opening written %v: %v", wrote, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if found, wanted := s.take("opn_wanted"); !found || !wanted {
			t.Fatalf("take with the short entry waiting: found %v, wanted %v", found, wanted)
		}
		// Another barber's freeing offers the short entry first (its pass
		// takes that barber's openings only).
		if _, err := res.Mutation().CancelAppointment(s.ctx, other[8].ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if got := s.entry(short.ID); got.Status != waitlistentry.StatusOffered {
			t.Fatalf("short entry after the cancel: %s", got.Status)
		}
		if found, wanted := s.take("opn_wanted"); !found || wanted {
			t.Fatalf("take with only the long entry waiting: found %v, wanted %v", found, wanted)
		}
		n, err := res.Waitlist().OfferOpenings(tenant.System(context.Background()), 0)
		if err != nil || n != 0 {
			t.Fatalf("the job offered %d: %v", n, err)
		}
		if left, err := db.Opening.Query().Count(tenant.System(context.Background())); err != nil || left != 0 {
			t.Fatalf("openings left after the job: %d, %v", left, err)
		}
		if got := s.entry(longEntry.ID); got.Status != waitlistentry.StatusWaiting {
			t.Fatalf("long entry after the job: %s", got.Status)
		}
	})
}

// TestWaitlistStartBookedBeforeLock: a start an offer pass found free
// without the barber's lock, and booked before the pass locks the barber,
// is not offered: the pass's check under the lock sees it taken, and the
// pass ends cleanly (its opening done, the entry still waiting).
func TestWaitlistStartBookedBeforeLock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Booked before lock", 1)
		day := jobsTuesday
		booked := s.fullDay(day)
		entry, err := s.join("+351910000601", day.Format("2006-01-02"), nil)
		if err != nil {
			t.Fatal(err)
		}
		freed := booked[6]
		var checked []time.Time
		ctx := graph.BeforeLockStart(s.ctx, func(tx *ent.Tx, o *catalog.Offer) {
			checked = append(checked, o.Start)
			// Another writer books the start between the pass's read and
			// its lock (in the pass's transaction: SQLite writes one at a
			// time).
			err := tx.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(o.Barber.ID).
				SetStartsAt(o.Start).SetEndsAt(o.Start.Add(30 * time.Minute)).Exec(s.ctx)
			if err != nil {
				t.Errorf("booking the start: %v", err)
			}
		})
		if _, err := res.Mutation().CancelAppointment(ctx, freed.ID, "moved"); err != nil {
			t.Fatal(err)
		}
		if len(checked) != 1 || !checked[0].Equal(freed.StartsAt) {
			t.Fatalf("the pass checked %v under the lock, want %v", checked, freed.StartsAt)
		}
		if got := s.entry(entry.ID); got.Status != waitlistentry.StatusWaiting {
			t.Fatalf("entry after its start was booked first: %s", got.Status)
		}
		sys := tenant.System(context.Background())
		if n, err := db.Opening.Query().Count(sys); err != nil || n != 0 {
			t.Fatalf("openings left after the pass: %d, %v", n, err)
		}
		if n, err := db.Hold.Query().Count(sys); err != nil || n != 0 {
			t.Fatalf("holds after the pass: %d, %v", n, err)
		}
	})
}
