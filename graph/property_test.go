package graph_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"barberd/ent"
	"barberd/ent/reservation"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestBookingProperty drives the resolver with random shops and checks that
// availability and booking agree with an independent, naive model of the
// rules. BARBERD_PROPERTY_SEED reruns one case (each logs its seed) and
// BARBERD_PROPERTY_CASES sets how many run per database.
func TestBookingProperty(t *testing.T) {
	// Every slot offered matches the model (and the model's every slot is
	// offered); every offered slot can be booked, with that barber at that
	// time; every time not offered (off the grid, inside a booking, outside
	// hours, in the past, beyond the horizon, in a daylight-saving gap) is
	// refused.
	t.Parallel()
	eachSeed(t, "BARBERD_PROPERTY", 20270301, 8, propertyCase)
}

// eachSeed runs fn on each database for cases seeds from first, a subtest
// each: env_SEED runs that one seed instead, env_CASES sets how many.
func eachSeed(t *testing.T, env string, first uint64, cases int, fn func(t *testing.T, db *store.DB, seed uint64)) {
	if v, err := strconv.ParseUint(os.Getenv(env+"_SEED"), 10, 64); err == nil {
		first, cases = v, 1
	}
	if v, err := strconv.Atoi(os.Getenv(env + "_CASES")); err == nil && v > 0 {
		cases = v
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		began := time.Now()
		for i := range cases {
			seed := first + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Logf("seed %d", seed)
				fn(t, db, seed)
			})
		}
		t.Logf("%d cases in %v", cases, time.Since(began))
	})
}

var propertyZones = []string{"Europe/Lisbon", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo"}

// shop is what a case generated, as the model sees it.
type shop struct {
	loc              *time.Location
	step, lead       time.Duration
	horizon          int
	duration, buffer time.Duration
	// hours[barber][weekday] are working minutes of the day (nil: closed).
	hours   map[string]map[time.Weekday]*[1441]bool
	timeOff map[string][][2]time.Time
	// eligible are the barbers availability may list.
	eligible []string
	// first remembers firstAtOrAfter by day and minute: the zone's rules
	// do not change, and the checks ask for the same days again and again.
	first map[firstKey]time.Time
}

type firstKey struct {
	day time.Time
	w   int
}

type propClock struct{ t atomic.Int64 }

func (c *propClock) now() time.Time  { return time.Unix(0, c.t.Load()).UTC() }
func (c *propClock) set(t time.Time) { c.t.Store(t.UnixNano()) }

func propertyCase(t *testing.T, db *store.DB, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	bg := context.Background()

	acc, err := db.Account.Create().SetName(fmt.Sprintf("Property %d", seed)).Save(tenant.System(bg))
	if err != nil {
		t.Fatal(err)
	}
	actx := tenant.WithAccount(bg, acc.ID)

	clock := &propClock{}
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(300*24*60)) * time.Minute)
	clock.set(now)
	res := graph.New(graph.Settings{DB: db, Now: clock.now})
	secret, _, err := res.CreateAPIKey(bg, acc.ID, "property", domain.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := res.Authenticate(bg, secret)
	if err != nil {
		t.Fatal(err)
	}
	// Each freeing of time is checked against the model too.
	var freed freedLog
	ctx := graph.ObserveFreed(domain.WithViewer(bg, viewer), freed.add)
	q, m := res.Query(), res.Mutation()

	// The shop.
	zone := propertyZones[rng.IntN(len(propertyZones))]
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	sh := &shop{
		loc: loc, step: time.Duration(pick(5, 10, 15, 15, 20, 30)) * time.Minute,
		lead: time.Duration(pick(0, 15, 60, 60, 240)) * time.Minute, horizon: pick(1, 3, 7, 30, 365),
		duration: time.Duration(pick(10, 15, 25, 30, 30, 45, 60, 90)) * time.Minute,
		buffer:   time.Duration(pick(0, 0, 5, 10, 15)) * time.Minute,
		hours:    map[string]map[time.Weekday]*[1441]bool{}, timeOff: map[string][][2]time.Time{},
	}
	u, err := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone(zone).
		SetSlotStepMinutes(int(sh.step / time.Minute)).SetMinLeadMinutes(int(sh.lead / time.Minute)).
		SetHorizonDays(sh.horizon).Save(actx)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := db.Service.Create().SetAccountID(acc.ID).SetName("Cut").
		SetDurationMinutes(int(sh.duration / time.Minute)).SetBufferMinutes(int(sh.buffer / time.Minute)).
		SetPriceAmount(1000).SetPriceCurrency("EUR").AddUnits(u).Save(actx)
	if err != nil {
		t.Fatal(err)
	}

	// The day under test: often the zone's next daylight-saving change,
	// otherwise a day around today, sometimes past or beyond the horizon.
	today := now.In(loc)
	today = time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC) // a date, as UTC midnight
	day := today.AddDate(0, 0, rng.IntN(min(sh.horizon, 6)+3)-1)
	if change, ok := nextChange(loc, today, min(sh.horizon+1, 200)); ok && rng.IntN(100) < 40 {
		day = change
	}
	date := day.Format("2006-01-02")

	// Barbers: two or three eligible, maybe one who does not perform the
	// service and one inactive, each with hours for every weekday.
	nBarbers := 2 + rng.IntN(2)
	kinds := slices.Repeat([]string{"eligible"}, nBarbers)
	if rng.IntN(3) == 0 {
		kinds = append(kinds, "not performing")
	}
	if rng.IntN(3) == 0 {
		kinds = append(kinds, "inactive")
	}
	for i, kind := range kinds {
		create := db.Barber.Create().SetAccountID(acc.ID).SetName(fmt.Sprintf("Barber %d", i)).AddUnits(u)
		if kind != "not performing" {
			create.AddServices(svc)
		}
		if kind == "inactive" {
			create.SetActive(false)
		}
		b, err := create.Save(actx)
		if err != nil {
			t.Fatal(err)
		}
		sh.hours[b.ID] = map[time.Weekday]*[1441]bool{}
		if kind == "eligible" {
			sh.eligible = append(sh.eligible, b.ID)
		}
		for wd := time.Sunday; wd <= time.Saturday; wd++ {
			if rng.IntN(100) < 15 {
				continue // closed
			}
			var opens int
			if rng.IntN(100) < 40 {
				opens = 5 * rng.IntN(36) // 00:00-03:00, across most DST changes
			} else {
				opens = 5 * rng.IntN(12*14)
			}
			closes := min(opens+60+5*rng.IntN(12*13), 1440)
			var mins [1441]bool
			for x := opens; x < closes; x++ {
				mins[x] = true
			}
			var breaks []string
			for range rng.IntN(3) {
				from := opens + 5*rng.IntN(max((closes-opens)/5, 1))
				to := min(from+10+5*rng.IntN(17), closes)
				if to <= from {
					continue
				}
				breaks = append(breaks, clockOf(from)+"-"+clockOf(to))
				for x := from; x < to; x++ {
					mins[x] = false
				}
			}
			sh.hours[b.ID][wd] = &mins
			err := db.WorkingHours.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetUnitID(u.ID).
				SetWeekday(int(wd)).SetOpensAt(clockOf(opens)).SetClosesAt(clockOf(closes)).SetBreaks(breaks).Exec(actx)
			if err != nil {
				t.Fatal(err)
			}
		}
		// Time off: sometimes a few hours of the day under test.
		if rng.IntN(100) < 40 {
			midnight := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
			from := midnight.Add(time.Duration(5*rng.IntN(12*24)) * time.Minute).UTC()
			to := from.Add(time.Duration(30+5*rng.IntN(12*6)) * time.Minute)
			if err := db.TimeOff.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(from).SetEndsAt(to).Exec(actx); err != nil {
				t.Fatal(err)
			}
			sh.timeOff[b.ID] = append(sh.timeOff[b.ID], [2]time.Time{from, to})
		}
	}
	t.Logf("%s, now %s, day %s (%s), step %v, lead %v, horizon %d, service %v+%v, barbers %v",
		zone, now.In(loc).Format(time.DateTime), date, day.Weekday(), sh.step, sh.lead, sh.horizon, sh.duration, sh.buffer, kinds)

	phone := func() string { return fmt.Sprintf("+35191%07d", rng.IntN(10_000_000)) }
	book := func(barberID, startsAt string) (*ent.Appointment, error) {
		p, err := m.CreateAppointment(ctx, model.CreateAppointmentInput{
			UnitID: u.ID, ServiceID: svc.ID, BarberID: &barberID, StartsAt: startsAt,
			Client: &model.ClientInput{Name: "Prop Client", Phone: phone()},
		})
		if err != nil {
			return nil, err
		}
		return p.Appointment, nil
	}
	offered := func() []*model.Slot {
		t.Helper()
		a, err := q.Availability(ctx, u.ID, svc.ID, nil, date)
		if err != nil {
			t.Fatalf("availability: %v", err)
		}
		return a.Slots
	}

	// Existing bookings, made a quarter of an hour before now: appointments
	// (some then cancelled) and holds (the short ones expired by now).
	clock.set(now.Add(-15 * time.Minute))
	var holds []*ent.Hold
	for range rng.IntN(5) {
		free := offered()
		if len(free) == 0 {
			break
		}
		s := free[rng.IntN(len(free))]
		switch rng.IntN(4) {
		case 0:
			ttl := pick(10, 60, 600, 1800)
			h, err := m.HoldSlot(ctx, model.HoldSlotInput{UnitID: u.ID, ServiceID: svc.ID, BarberID: &s.BarberID, StartsAt: s.StartsAt, TTLSeconds: &ttl})
			if err != nil {
				t.Fatalf("hold offered slot %s with %s: %v", s.StartsAt, s.BarberID, err)
			}
			holds = append(holds, h)
		default:
			a, err := book(s.BarberID, s.StartsAt)
			if err != nil {
				t.Fatalf("book offered slot %s with %s: %v", s.StartsAt, s.BarberID, err)
			}
			if rng.IntN(3) == 0 {
				if _, err := m.CancelAppointment(ctx, a.ID, "changed plans"); err != nil {
					t.Fatalf("cancel: %v", err)
				}
				want := freedSpan{a.BarberID, a.StartsAt, a.EndsAt.Add(sh.buffer), graph.FreedCancelled, a.ID}
				if got := freed.take(); len(got) != 1 || spanOf(got[0]) != want {
					t.Fatalf("cancelling %s freed %v, want %+v", a.ID, got, want)
				}
			}
		}
	}
	clock.set(now)

	// checkRange asks for a few days around the day under test, and checks
	// that each is its single-day answer (got, for the day under test).
	checkRange := func(got []*model.Slot) {
		t.Helper()
		from, to := day.AddDate(0, 0, -rng.IntN(3)), day.AddDate(0, 0, rng.IntN(4))
		r, err := q.AvailabilityRange(ctx, u.ID, svc.ID, nil, from.Format(time.DateOnly), to.Format(time.DateOnly))
		if err != nil {
			t.Fatalf("range: %v", err)
		}
		if want := int(to.Sub(from)/(24*time.Hour)) + 1; len(r.Days) != want {
			t.Fatalf("range %s..%s has %d days, want %d", from.Format(time.DateOnly), to.Format(time.DateOnly), len(r.Days), want)
		}
		for _, d := range r.Days {
			single, err := q.Availability(ctx, u.ID, svc.ID, nil, d.Date)
			if err != nil {
				t.Fatalf("availability: %v", err)
			}
			if d.Date == date && !slices.Equal(slotKeys(single.Slots), slotKeys(got)) {
				t.Fatalf("availability of %s changed between two reads", date)
			}
			if g, w := slotKeys(d.Slots), slotKeys(single.Slots); !slices.Equal(g, w) || ptrString(d.Reason) != ptrString(single.Reason) {
				t.Fatalf("%s in a range: %v (%s); alone: %v (%s)", d.Date, g, ptrString(d.Reason), w, ptrString(single.Reason))
			}
		}
	}

	// checkNext runs a search for the next free times and checks it against
	// a range of the month from its after: the same starts, in order, each
	// with the first eligible barber free then (the one a create without a
	// barber gets).
	checkNext := func(nq domain.NextSlotsQuery) *model.NextFreeSlots {
		t.Helper()
		next, err := res.NextFreeSlots(ctx, nq)
		if err != nil {
			t.Fatalf("next %s: %v", describeNext(nq), err)
		}
		after := clock.now()
		afterDate := after.In(loc)
		if nq.After != nil {
			a, _ := time.Parse("2006-01-02T15:04:05", *nq.After)
			at := sh.firstAtOrAfter(time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC), a.Hour()*60+a.Minute())
			if at.After(after) {
				after, afterDate = at, a
			}
		}
		from := afterDate.Format(time.DateOnly)
		to := time.Date(afterDate.Year(), afterDate.Month(), afterDate.Day()+domain.MaxRangeDays-1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		r, err := q.AvailabilityRange(ctx, u.ID, svc.ID, nil, from, to)
		if err != nil {
			t.Fatalf("range: %v", err)
		}
		limit := domain.DefaultNextLimit
		if nq.Limit != nil {
			limit = *nq.Limit
		}
		timeFrom, timeTo := "00:00", "24:00"
		if nq.TimeFrom != nil {
			timeFrom = *nq.TimeFrom
		}
		if nq.TimeTo != nil {
			timeTo = *nq.TimeTo
		}
		var want []string
		for _, d := range r.Days {
			dd, _ := time.Parse(time.DateOnly, d.Date)
			if nq.Weekdays != nil && !slices.Contains(nq.Weekdays, (int(dd.Weekday())+6)%7+1) {
				continue
			}
			for _, sl := range d.Slots {
				clock := sl.StartsAt[11:16]
				if sl.StartsAtUtc.Before(after) || clock < timeFrom || clock >= timeTo {
					continue
				}
				key := sl.StartsAt + " " + sl.BarberID
				if n := len(want); n > 0 && strings.HasPrefix(want[n-1], sl.StartsAt+" ") {
					// The same start: keep the first eligible barber.
					if slices.Index(sh.eligible, sl.BarberID) < slices.Index(sh.eligible, strings.TrimPrefix(want[n-1], sl.StartsAt+" ")) {
						want[n-1] = key
					}
					continue
				}
				want = append(want, key)
			}
		}
		var got []string
		for _, sl := range next.Slots {
			got = append(got, sl.StartsAt+" "+sl.BarberID)
		}
		if len(want) >= limit {
			want = want[:limit]
		} else if len(got) >= len(want) {
			got = got[:len(want)] // the rest lies beyond the month
		}
		if !slices.Equal(got, want) {
			t.Fatalf("next %s:\n got %v\nwant %v", describeNext(nq), got, want)
		}
		if (len(next.Slots) == 0) != (ptrString(next.Reason) == graph.ReasonNoneWithinHorizon) {
			t.Fatalf("next %s: %d slots, reason %q", describeNext(nq), len(next.Slots), ptrString(next.Reason))
		}
		return next
	}

	// randomNext is a search from around the day under test, sometimes with
	// a daily window, weekdays, a limit.
	randomNext := func() domain.NextSlotsQuery {
		nq := domain.NextSlotsQuery{UnitID: u.ID, ServiceID: svc.ID}
		if rng.IntN(3) > 0 {
			a := day.AddDate(0, 0, -rng.IntN(2)).Add(time.Duration(5*rng.IntN(12*24)) * time.Minute).Format("2006-01-02T15:04:05")
			nq.After = &a
		}
		if rng.IntN(2) == 0 {
			l := 1 + rng.IntN(domain.MaxNextLimit)
			nq.Limit = &l
		}
		if rng.IntN(3) == 0 {
			f := 5 * rng.IntN(12*20)
			from, to := clockOf(f), clockOf(min(f+5+5*rng.IntN(12*8), 1440))
			nq.TimeFrom, nq.TimeTo = &from, &to
		}
		if rng.IntN(3) == 0 {
			for d := 1; d <= 7; d++ {
				if rng.IntN(2) == 0 {
					nq.Weekdays = append(nq.Weekdays, d)
				}
			}
		}
		return nq
	}

	// check compares availability with the model, for every barber and for
	// each one alone, and returns it; ranges and next free times must agree
	// with it.
	check := func() []*model.Slot {
		t.Helper()
		got := offered()
		want := sh.model(t, actx, db, clock.now(), day)
		if g, w := slotKeys(got), slotKeys(want); !slices.Equal(g, w) {
			t.Fatalf("availability differs from the model\n got %d: %v\nwant %d: %v\nextra: %v\nmissing: %v",
				len(g), g, len(w), w, minus(g, w), minus(w, g))
		}
		for _, b := range sh.eligible {
			a, err := q.Availability(ctx, u.ID, svc.ID, &b, date)
			if err != nil {
				t.Fatalf("availability of %s: %v", b, err)
			}
			var mine []*model.Slot
			for _, s := range got {
				if s.BarberID == b {
					mine = append(mine, s)
				}
			}
			if g, w := slotKeys(a.Slots), slotKeys(mine); !slices.Equal(g, w) {
				t.Fatalf("availability of %s alone %v, in the list of all %v", b, g, w)
			}
		}
		checkRange(got)
		checkNext(randomNext())
		return got
	}
	free := check()
	t.Logf("%d slots offered", len(free))

	// Refusals: times not offered, of every kind.
	isOffered := map[string]bool{}
	for _, s := range free {
		isOffered[s.BarberID+" "+s.StartsAt] = true
	}
	var tries []string
	for range 6 { // anywhere in the day, on the minute
		tries = append(tries, fmt.Sprintf("%sT%s:00", date, clockOf(rng.IntN(1440))))
	}
	for range 3 { // off the grid, next to an offered slot
		if len(free) > 0 {
			s := free[rng.IntN(len(free))]
			st, _ := time.Parse("2006-01-02T15:04:05", s.StartsAt)
			tries = append(tries, st.Add(time.Duration(1+rng.IntN(int(sh.step/time.Minute)-1))*time.Minute).Format("2006-01-02T15:04:05"))
		}
	}
	busy, err := db.Reservation.Query().Where(reservation.Or(reservation.ExpiresAtIsNil(), reservation.ExpiresAtGT(now))).All(actx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rv := range busy { // inside a booking or hold, on the grid or not
		in := rv.StartsAt.Add(time.Duration(rng.Int64N(int64(rv.EndsAt.Sub(rv.StartsAt)))) / time.Minute * time.Minute)
		tries = append(tries, in.In(loc).Format("2006-01-02T15:04:05"))
	}
	before, err := db.Appointment.Query().Count(actx)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, at := range tries {
		for _, b := range sh.eligible {
			if isOffered[b+" "+at] {
				continue
			}
			a, err := book(b, at)
			switch domain.ErrorCode(err) {
			case domain.CodeSlotUnavailable, domain.CodeOutsideWindow, domain.CodeInvalidLocalTime:
				refused++
			case "":
				t.Fatalf("booked %s with %s, which availability does not offer: appointment %s at %s", at, b, a.ID, a.StartsAt)
			default:
				t.Fatalf("booking %s with %s: %v, want slot_unavailable or outside_booking_window", at, b, err)
			}
		}
	}
	if after, err := db.Appointment.Query().Count(actx); err != nil || after != before {
		t.Fatalf("refused bookings changed the appointment count from %d to %d (%v)", before, after, err)
	}

	// Every offered slot is bookable: book a sample one at a time, checking
	// availability against the model after each. Some come from a search
	// for the next free times, and are booked without a barber: they get
	// the barber the search named.
	booked := 0
	for range 1 + rng.IntN(6) {
		if len(free) == 0 {
			break
		}
		s := free[rng.IntN(len(free))]
		var a *ent.Appointment
		if rng.IntN(3) == 0 {
			after := s.StartsAt
			if next := checkNext(domain.NextSlotsQuery{UnitID: u.ID, ServiceID: svc.ID, After: &after, Limit: new(1)}).Slots; len(next) > 0 {
				s = next[0]
				p, err := m.CreateAppointment(ctx, model.CreateAppointmentInput{
					UnitID: u.ID, ServiceID: svc.ID, StartsAt: s.StartsAt,
					Client: &model.ClientInput{Name: "Prop Client", Phone: phone()},
				})
				if err != nil {
					t.Fatalf("booking next free %s without a barber: %v", s.StartsAt, err)
				}
				a = p.Appointment
			}
		}
		if a == nil {
			var err error
			if a, err = book(s.BarberID, s.StartsAt); err != nil {
				t.Fatalf("booking offered slot %s with %s: %v", s.StartsAt, s.BarberID, err)
			}
		}
		if !a.StartsAt.Equal(s.StartsAtUtc) || a.BarberID != s.BarberID || !a.EndsAt.Equal(s.EndsAtUtc) {
			t.Fatalf("booked %s with %s as %s-%s with %s, offered %s-%s", s.StartsAt, s.BarberID, a.StartsAt, a.EndsAt, a.BarberID, s.StartsAtUtc, s.EndsAtUtc)
		}
		booked++
		free = check()
		for _, f := range free {
			if f.BarberID == s.BarberID && f.StartsAt == s.StartsAt {
				t.Fatalf("slot %s with %s still offered after booking it", s.StartsAt, s.BarberID)
			}
		}
	}
	t.Logf("%d refusals, %d bookings of offered slots", refused, booked)

	// Every hold expired by now was freed once, by a booking or the job,
	// and nothing else was freed.
	if _, err := res.ExpireHolds(ctx, 0); err != nil {
		t.Fatal(err)
	}
	times := map[freedSpan]int{}
	for _, f := range freed.take() {
		times[spanOf(f)]++
	}
	for _, h := range holds {
		want := freedSpan{h.BarberID, h.StartsAt, h.EndsAt.Add(sh.buffer), graph.FreedExpired, h.ID}
		if n := times[want]; n != map[bool]int{true: 1, false: 0}[!now.Before(h.ExpiresAt)] {
			t.Fatalf("hold %s expiring at %s (now %s) freed %d times", h.ID, h.ExpiresAt, now, n)
		}
		delete(times, want)
	}
	if len(times) > 0 {
		t.Fatalf("freed %v, which no hold expired", times)
	}
}

// model computes the slots of day naively, minute by minute, from what the
// case generated and the reservations in the database.
func (sh *shop) model(t *testing.T, ctx context.Context, db *store.DB, now, day time.Time) []*model.Slot {
	t.Helper()
	rsvs, err := db.Reservation.Query().All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sh.slotsOf(now, day, rsvs)
}

// slotsOf computes the slots of day naively, minute by minute, from what the
// case generated and the reservations rsvs.
func (sh *shop) slotsOf(now, day time.Time, rsvs []*ent.Reservation) []*model.Slot {
	todayL := now.In(sh.loc)
	today := time.Date(todayL.Year(), todayL.Month(), todayL.Day(), 0, 0, 0, 0, time.UTC)
	if day.Before(today) || day.After(today.AddDate(0, 0, sh.horizon)) {
		return nil
	}
	var out []*model.Slot
	for _, b := range sh.eligible {
		mins := sh.hours[b][day.Weekday()]
		if mins == nil {
			continue
		}
		// Working spans: maximal runs of working minutes.
		for from := 0; from < 1440; {
			if !mins[from] {
				from++
				continue
			}
			to := from
			for to < 1440 && mins[to] {
				to++
			}
			end := sh.firstAtOrAfter(day, to)
			for w := from; w < to; w += int(sh.step / time.Minute) {
				start := sh.firstAtOrAfter(day, w)
				if wallMinutes(start.In(sh.loc), day) != w {
					continue // skipped by a spring-forward gap
				}
				svcEnd := start.Add(sh.duration)
				blockEnd := svcEnd.Add(sh.buffer)
				ok := !svcEnd.After(end) && !start.Before(now.Add(sh.lead))
				for _, off := range sh.timeOff[b] {
					ok = ok && !(start.Before(off[1]) && off[0].Before(svcEnd))
				}
				for _, rv := range rsvs {
					live := rv.ExpiresAt == nil || rv.ExpiresAt.After(now)
					ok = ok && !(live && rv.BarberID == b && start.Before(rv.EndsAt) && rv.StartsAt.Before(blockEnd))
				}
				if ok {
					out = append(out, &model.Slot{
						StartsAt: start.In(sh.loc).Format("2006-01-02T15:04:05"), EndsAt: svcEnd.In(sh.loc).Format("2006-01-02T15:04:05"),
						StartsAtUtc: start.UTC(), EndsAtUtc: svcEnd.UTC(), BarberID: b,
					})
				}
			}
			from = to
		}
	}
	slices.SortFunc(out, func(a, b *model.Slot) int {
		if c := a.StartsAtUtc.Compare(b.StartsAtUtc); c != 0 {
			return c
		}
		return strings.Compare(a.BarberID, b.BarberID)
	})
	return out
}

// firstAtOrAfter is the first instant whose wall clock in the shop's zone
// reads minute w of day or later: the wall time itself (its first
// occurrence when the clocks fall back), or the end of a spring-forward gap
// that swallows it.
func (sh *shop) firstAtOrAfter(day time.Time, w int) time.Time {
	k := firstKey{day, w}
	if u, ok := sh.first[k]; ok {
		return u
	}
	naive := day.Add(time.Duration(w) * time.Minute)
	u := time.Date(naive.Year(), naive.Month(), naive.Day(), naive.Hour(), naive.Minute(), 0, 0, sh.loc).Add(-3 * time.Hour)
	for wallMinutes(u.In(sh.loc), day) < w {
		u = u.Add(time.Minute)
	}
	if sh.first == nil {
		sh.first = map[firstKey]time.Time{}
	}
	sh.first[k] = u
	return u
}

// wallMinutes is the wall clock of t as minutes from the start of day (may
// be negative or past 1440).
func wallMinutes(t, day time.Time) int {
	naive := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, time.UTC)
	return int(naive.Sub(day) / time.Minute)
}

// nextChange finds the first day from today within n days on which the
// zone's UTC offset changes.
func nextChange(loc *time.Location, today time.Time, n int) (time.Time, bool) {
	offset := func(d time.Time) int {
		_, o := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).Zone()
		return o
	}
	for i := range n {
		d := today.AddDate(0, 0, i)
		if offset(d) != offset(d.AddDate(0, 0, 1)) {
			return d, true
		}
	}
	return time.Time{}, false
}

func ptrString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// describeNext shows a search for the next free times in a failure.
func describeNext(q domain.NextSlotsQuery) string {
	return fmt.Sprintf("after=%s limit=%s window=%s-%s weekdays=%v",
		ptrString(q.After), ptrString(intString(q.Limit)), ptrString(q.TimeFrom), ptrString(q.TimeTo), q.Weekdays)
}

func intString(n *int) *string {
	if n == nil {
		return nil
	}
	s := strconv.Itoa(*n)
	return &s
}

func clockOf(min int) string { return fmt.Sprintf("%02d:%02d", min/60, min%60) }

func slotKeys(ss []*model.Slot) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%s/%s-%s/%s", s.BarberID[len(s.BarberID)-4:], s.StartsAt[11:16], s.EndsAt[11:16], s.StartsAtUtc.Format("15:04Z"))
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
