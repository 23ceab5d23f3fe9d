package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/waitlistentry"
	"barberd/graph/domain"
	"barberd/graph/model"
)

// step makes one random change, then checks the waitlist, runs the offer
// job, and checks again: the job should find nothing left to offer.
func (c *wlCase) step() {
	c.t.Helper()
	c.authenticate() // each step a request, seeing the catalog as it is now
	switch p := c.rng.IntN(100); {
	case p < 22:
		c.join()
	case p < 28:
		c.leave()
	case p < 35:
		c.bookFree()
	case p < 45:
		c.bookOffer()
	case p < 51:
		c.holdFree()
	case p < 59:
		c.release()
	case p < 69:
		c.advance()
	case p < 79:
		c.cancel()
	case p < 85:
		c.reschedule()
	case p < 89:
		c.addTimeOff()
	case p < 93:
		c.removeTimeOff()
	case p < 97:
		c.changeHours()
	default:
		c.assign()
	}
	c.check("after the step")
	// Offers are made before the step returns: the job finds none to make.
	if n, err := c.res.Waitlist().OfferOpenings(c.ctx, 0); err != nil || n != 0 {
		c.fail("the offer job after the step: %d offers, %v", n, err)
	}
	if _, err := c.res.Waitlist().Expire(c.ctx, 0); err != nil {
		c.fail("expire waitlist: %v", err)
	}
	c.check("after the jobs")
}

func (c *wlCase) join() {
	w := c.randomWants()
	phone := c.phone()
	in := model.JoinWaitlistInput{
		UnitID: c.unit, ServiceID: c.svc, BarberID: w.barber, From: w.from, To: w.to,
		TimeFrom: w.timeFrom, TimeTo: w.timeTo, Weekdays: w.weekdays, OfferHoldSeconds: &w.holdSeconds,
		Client: &model.ClientInput{Name: "Waiting", Phone: phone},
	}
	var replayOf string
	if c.rng.IntN(4) == 0 {
		if len(c.refs) > 0 && c.rng.IntN(2) == 0 {
			ref := c.refs[c.rng.IntN(len(c.refs))]
			in.ExternalReference = &ref
			for _, e := range c.seen {
				if e.ExternalReference != nil && *e.ExternalReference == ref {
					replayOf = e.ID
				}
			}
		} else {
			ref := fmt.Sprintf("ref-%d", len(c.refs))
			in.ExternalReference = &ref
		}
	}
	var matching []string
	for _, s := range c.free(c.reservations()) {
		if w.match(s) {
			matching = append(matching, s.StartsAt+" "+s.BarberID)
		}
	}
	waiting := ""
	for _, e := range c.seen {
		if e.Status == waitlistentry.StatusWaiting && e.ClientPhone == phone {
			waiting = e.ID
		}
	}
	c.logf("join %s by %s, hold %ds, ref %s: free matching %v, waiting already %q, replay of %q", w, phone, w.holdSeconds, ptrString(in.ExternalReference), matching, waiting, replayOf)
	p, err := c.m.JoinWaitlist(c.ctx, in)
	code := domain.ErrorCode(err)
	c.joins[map[bool]string{true: "joined", false: code}[err == nil]]++
	switch {
	case replayOf != "":
		if err != nil || !p.Replayed || p.Entry.ID != replayOf {
			c.fail("a join repeating a reference: %v, want a replay of %s", err, replayOf)
		}
	case len(matching) > 0 && waiting != "":
		if code != domain.CodeSlotAvailable && code != domain.CodeAlreadyWaiting {
			c.fail("a join with a free start and the client waiting: %v", err)
		}
	case len(matching) > 0:
		if code != domain.CodeSlotAvailable {
			c.fail("a join with free starts %v: %v, want slot_available", matching, err)
		}
	case waiting != "":
		if code != domain.CodeAlreadyWaiting {
			c.fail("a join of a client waiting in %s: %v, want already_waiting", waiting, err)
		}
	default:
		if err != nil {
			c.fail("a join with nothing free: %v", err)
		}
		if p.Replayed || p.Entry.Status != waitlistentry.StatusWaiting {
			c.fail("a new join: replayed %v, status %s", p.Replayed, p.Entry.Status)
		}
		c.order[p.Entry.ID] = len(c.order)
		if in.ExternalReference != nil {
			c.refs = append(c.refs, *in.ExternalReference)
		}
	}
}

// toldOnly are the starts offered without a hold: they stay free, and an
// offer pass does not offer them again (a later pass may).
func (c *wlCase) toldOnly() map[string]bool {
	out := map[string]bool{}
	for _, e := range c.seen {
		if e.OfferedAt != nil && e.OfferHoldID == nil {
			out[*e.OfferBarberID+" "+e.OfferStartsAt.UTC().Format(time.RFC3339)] = true
		}
	}
	return out
}

func (c *wlCase) leave() {
	e := c.anyEntry()
	if e == nil {
		return
	}
	c.logf("leave %s (%s)", e.ID, e.Status)
	got, err := c.m.LeaveWaitlist(c.ctx, e.ID)
	if err != nil {
		c.fail("leave %s: %v", e.ID, err)
	}
	want := e.Status
	if want == waitlistentry.StatusWaiting || want == waitlistentry.StatusOffered {
		want = waitlistentry.StatusCancelled
	}
	if got.Status != want {
		c.fail("leaving a %s entry made it %s, want %s", e.Status, got.Status, want)
	}
}

func (c *wlCase) anyEntry() *ent.WaitlistEntry {
	ids := make([]string, 0, len(c.seen))
	for id := range c.seen {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	slices.SortFunc(ids, func(a, b string) int { return c.order[a] - c.order[b] })
	return c.seen[ids[c.rng.IntN(len(ids))]]
}

// pickFree is a random free start of the model, or nil.
func (c *wlCase) pickFree() *model.Slot {
	free := c.free(c.reservations())
	if len(free) == 0 {
		return nil
	}
	return free[c.rng.IntN(len(free))]
}

func (c *wlCase) bookFree() {
	if s := c.pickFree(); s != nil {
		c.logf("book %s with %s", s.StartsAt, s.BarberID)
		if _, err := c.book(s, nil); err != nil {
			c.fail("book free %s with %s: %v", s.StartsAt, s.BarberID, err)
		}
	}
}

// bookOffer books an offer with its hold, while the hold lasts, its start
// is ahead (a hold keeps a start the clock has passed, which no booking
// takes), and the barber still performs the service.
func (c *wlCase) bookOffer() {
	var live []*ent.WaitlistEntry
	for _, e := range c.seen {
		if e.Status == waitlistentry.StatusOffered && e.OfferHoldID != nil && e.OfferStartsAt.After(c.clock.now()) &&
			slices.Contains(c.sh.eligible, *e.OfferBarberID) {
			if h, err := c.db.Hold.Get(c.actx, *e.OfferHoldID); err == nil && h.Status == hold.StatusActive && h.ExpiresAt.After(c.clock.now()) {
				live = append(live, e)
			}
		}
	}
	if len(live) == 0 {
		c.bookFree()
		return
	}
	slices.SortFunc(live, func(a, b *ent.WaitlistEntry) int { return c.order[a.ID] - c.order[b.ID] })
	e := live[c.rng.IntN(len(live))]
	s := &model.Slot{StartsAt: e.OfferStartsAt.In(c.sh.loc).Format("2006-01-02T15:04:05"), BarberID: *e.OfferBarberID}
	c.logf("book the offer of %s, %s with %s", e.ID, s.StartsAt, s.BarberID)
	a, err := c.book(s, e.OfferHoldID)
	if err != nil {
		c.fail("book the offer of %s with its hold: %v", e.ID, err)
	}
	got, err := c.q.WaitlistEntry(c.ctx, e.ID)
	if err != nil || got.Status != waitlistentry.StatusBooked || got.AppointmentID == nil || *got.AppointmentID != a.ID {
		c.fail("entry %s after booking its offer as %s: %v %+v", e.ID, a.ID, err, got)
	}
	c.bookedOffers++
}

func (c *wlCase) holdFree() {
	if s := c.pickFree(); s != nil {
		ttl := []int{10, 60, 300}[c.rng.IntN(3)]
		c.logf("hold %s with %s for %ds", s.StartsAt, s.BarberID, ttl)
		if _, err := c.m.HoldSlot(c.ctx, model.HoldSlotInput{UnitID: c.unit, ServiceID: c.svc, BarberID: &s.BarberID, StartsAt: s.StartsAt, TTLSeconds: &ttl}); err != nil {
			c.fail("hold free %s with %s: %v", s.StartsAt, s.BarberID, err)
		}
	}
}

// release releases an active hold, an offer's or not.
func (c *wlCase) release() {
	hs, err := c.db.Hold.Query().Where(hold.StatusEQ(hold.StatusActive), hold.ExpiresAtGT(c.clock.now())).Order(hold.ByID()).All(c.actx)
	if err != nil {
		c.t.Fatal(err)
	}
	if len(hs) == 0 {
		return
	}
	h := hs[c.rng.IntN(len(hs))]
	c.logf("release hold %s (entry %s) at %s with %s", h.ID, ptrString(h.WaitlistEntryID), h.StartsAt.In(c.sh.loc).Format(time.DateTime), h.BarberID)
	if _, err := c.m.ReleaseHold(c.ctx, h.ID); err != nil {
		c.fail("release %s: %v", h.ID, err)
	}
}

// advance moves the clock on and runs the hold expiry job.
func (c *wlCase) advance() {
	d := time.Duration([]int{1, 5, 10, 11, 30}[c.rng.IntN(5)]) * time.Minute
	c.clock.set(c.clock.now().Add(d))
	n, err := c.res.ExpireHolds(c.ctx, 0)
	if err != nil {
		c.fail("expire holds: %v", err)
	}
	c.logf("advance %v to %s: %d holds expired", d, c.clock.now().In(c.sh.loc).Format(time.DateTime), n)
}

// upcoming is a random confirmed appointment not started yet, or nil.
func (c *wlCase) upcoming() *ent.Appointment {
	as, err := c.db.Appointment.Query().Where(appointment.StatusEQ(appointment.StatusConfirmed), appointment.StartsAtGT(c.clock.now())).
		Order(appointment.ByID()).All(c.actx)
	if err != nil {
		c.t.Fatal(err)
	}
	if len(as) == 0 {
		return nil
	}
	return as[c.rng.IntN(len(as))]
}

func (c *wlCase) cancel() {
	if a := c.upcoming(); a != nil {
		c.logf("cancel %s at %s with %s", a.ID, a.StartsAt.In(c.sh.loc).Format(time.DateTime), a.BarberID)
		if _, err := c.m.CancelAppointment(c.ctx, a.ID, "plans changed"); err != nil {
			c.fail("cancel %s: %v", a.ID, err)
		}
	}
}

func (c *wlCase) reschedule() {
	a, s := c.upcoming(), c.pickFree()
	if a == nil || s == nil {
		return
	}
	c.logf("reschedule %s from %s with %s to %s with %s", a.ID, a.StartsAt.In(c.sh.loc).Format(time.DateTime), a.BarberID, s.StartsAt, s.BarberID)
	if _, err := c.m.RescheduleAppointment(c.ctx, a.ID, model.RescheduleAppointmentInput{StartsAt: s.StartsAt, BarberID: &s.BarberID}); err != nil {
		c.fail("reschedule %s to free %s with %s: %v", a.ID, s.StartsAt, s.BarberID, err)
	}
}

func (c *wlCase) addTimeOff() {
	b := c.barbers[c.rng.IntN(len(c.barbers))]
	d := c.days[c.rng.IntN(len(c.days))]
	from := c.sh.firstAtOrAfter(d, 15*c.rng.IntN(96))
	to := from.Add(time.Duration(15*(2+c.rng.IntN(10))) * time.Minute)
	c.logf("time off of %s %s..%s", b, from.In(c.sh.loc).Format(time.DateTime), to.In(c.sh.loc).Format(time.DateTime))
	off, err := c.m.AddTimeOff(c.ctx, model.AddTimeOffInput{BarberID: b, StartsAt: from, EndsAt: to})
	if err != nil {
		c.fail("add time off: %v", err)
	}
	c.timeOffs[off.ID] = off
	c.sh.timeOff[b] = append(c.sh.timeOff[b], [2]time.Time{from, to})
}

func (c *wlCase) removeTimeOff() {
	var ids []string
	for id := range c.timeOffs {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		c.addTimeOff()
		return
	}
	slices.Sort(ids)
	off := c.timeOffs[ids[c.rng.IntN(len(ids))]]
	c.logf("remove time off of %s %s..%s", off.BarberID, off.StartsAt.In(c.sh.loc).Format(time.DateTime), off.EndsAt.In(c.sh.loc).Format(time.DateTime))
	if _, err := c.m.RemoveTimeOff(c.ctx, off.ID); err != nil {
		c.fail("remove time off: %v", err)
	}
	delete(c.timeOffs, off.ID)
	c.sh.timeOff[off.BarberID] = slices.DeleteFunc(c.sh.timeOff[off.BarberID], func(s [2]time.Time) bool {
		return s[0].Equal(off.StartsAt) && s[1].Equal(off.EndsAt)
	})
}

func (c *wlCase) changeHours() {
	b := c.barbers[c.rng.IntN(len(c.barbers))]
	wd := c.days[c.rng.IntN(len(c.days))].Weekday()
	c.week[b][wd] = c.randomHours()
	c.logf("hours of %s on %s: %v", b, wd, c.week[b][wd])
	c.setHours(b, true)
}

// assign gives a barber the service, or takes it away (leaving one).
func (c *wlCase) assign() {
	b := c.barbers[c.rng.IntN(len(c.barbers))]
	i := slices.Index(c.sh.eligible, b)
	services := []string{c.svc, c.other}
	switch {
	case i < 0:
		c.sh.eligible = append(c.sh.eligible, b)
	case len(c.sh.eligible) > 1:
		c.sh.eligible = slices.Delete(c.sh.eligible, i, i+1)
		services = services[1:]
	default:
		return
	}
	c.logf("barber %s performs %v", b, services)
	if _, err := c.m.UpdateBarber(c.ctx, b, model.UpdateBarberInput{ServiceIds: services}); err != nil {
		c.fail("update barber: %v", err)
	}
}

// check compares the entries with what the last check saw and with the
// model: offers made since were of free starts, each to an entry that asked
// for it, oldest entry first, one entry per start, once per entry, told
// once; and no waiting entry is left a free start it asks for.
func (c *wlCase) check(when string) {
	c.t.Helper()
	es, err := c.db.WaitlistEntry.Query().Order(waitlistentry.ByCreatedAt(), waitlistentry.ByID()).All(c.actx)
	if err != nil {
		c.t.Fatal(err)
	}
	rsvs := c.reservations()
	var fresh []*ent.WaitlistEntry
	offerHolds := map[string]bool{}
	for _, e := range es {
		prev := c.seen[e.ID]
		if _, ok := c.order[e.ID]; !ok {
			c.fail("%s: entry %s that no join made", when, e.ID)
		}
		if prev != nil {
			if prev.OfferedAt != nil && (e.OfferedAt == nil || !e.OfferedAt.Equal(*prev.OfferedAt) || !e.OfferStartsAt.Equal(*prev.OfferStartsAt) ||
				*e.OfferBarberID != *prev.OfferBarberID || ptrString(e.OfferHoldID) != ptrString(prev.OfferHoldID)) {
				c.fail("%s: entry %s offered again: %v %v with %v, was %v %v with %v", when, e.ID, e.OfferedAt, e.OfferStartsAt, ptrString(e.OfferHoldID),
					prev.OfferedAt, prev.OfferStartsAt, ptrString(prev.OfferHoldID))
			}
			if !slices.Contains(nextStatuses[prev.Status], e.Status) {
				c.fail("%s: entry %s went from %s to %s", when, e.ID, prev.Status, e.Status)
			}
		}
		if e.OfferedAt != nil && (prev == nil || prev.OfferedAt == nil) {
			fresh = append(fresh, e)
			if e.OfferHoldID != nil {
				offerHolds[*e.OfferHoldID] = true
			}
		}
	}
	// The time as it was when the fresh offers were made: without their holds.
	var before []*ent.Reservation
	for _, rv := range rsvs {
		if rv.HoldID == nil || !offerHolds[*rv.HoldID] {
			before = append(before, rv)
		}
	}
	free := c.free(rsvs)
	freeBefore := map[string]*model.Slot{}
	if len(before) < len(rsvs) {
		free = c.free(before)
	}
	for _, s := range free {
		freeBefore[slotKey(s)] = s
	}
	for i, e := range fresh {
		key := *e.OfferBarberID + " " + e.OfferStartsAt.UTC().Format(time.RFC3339)
		s := freeBefore[key]
		switch {
		case s == nil:
			c.fail("%s: entry %s offered %s with %s, not free then", when, e.ID, e.OfferStartsAt.In(c.sh.loc), *e.OfferBarberID)
		case !wantsOf(e).match(s):
			c.fail("%s: entry %s asking %s offered %s with %s", when, e.ID, wantsOf(e), s.StartsAt, s.BarberID)
		case !e.OfferEndsAt.Equal(s.EndsAtUtc):
			c.fail("%s: entry %s offered %s until %s, the service ends %s", when, e.ID, s.StartsAt, e.OfferEndsAt, s.EndsAtUtc)
		}
		c.checkOfferHold(when, e)
		for _, o := range es {
			if c.order[o.ID] < c.order[e.ID] && o.Status == waitlistentry.StatusWaiting && wantsOf(o).match(s) {
				c.fail("%s: entry %s offered %s with %s while the older %s (%s) waits for it", when, e.ID, s.StartsAt, s.BarberID, o.ID, wantsOf(o))
			}
		}
		for _, f := range fresh[:i] {
			if *f.OfferBarberID != *e.OfferBarberID || !f.OfferStartsAt.Before(*e.OfferEndsAt) || !e.OfferStartsAt.Before(*f.OfferEndsAt) {
				continue
			}
			// Told-only offers hold nothing: another may overlap them, not
			// share their start.
			if f.OfferStartsAt.Equal(*e.OfferStartsAt) || (f.OfferHoldID != nil && e.OfferHoldID != nil) {
				c.fail("%s: entries %s and %s offered overlapping %s and %s", when, f.ID, e.ID, f.OfferStartsAt, e.OfferStartsAt)
			}
			c.toldOverlaps++
		}
		c.offers++
	}
	c.seen = map[string]*ent.WaitlistEntry{}
	for _, e := range es {
		c.seen[e.ID] = e
	}
	told := c.toldOnly()
	if len(before) < len(rsvs) {
		free = c.free(rsvs)
	}
	for _, e := range es {
		if e.Status != waitlistentry.StatusWaiting {
			continue
		}
		for _, s := range free {
			if wantsOf(e).match(s) && !told[slotKey(s)] {
				c.fail("%s: entry %s (%s) waits while %s with %s is free", when, e.ID, wantsOf(e), s.StartsAt, s.BarberID)
			}
		}
	}
	c.checkTold(when, es)
}

// nextStatuses are the statuses an entry may go to from each.
var nextStatuses = map[waitlistentry.Status][]waitlistentry.Status{
	waitlistentry.StatusWaiting:   {waitlistentry.StatusWaiting, waitlistentry.StatusOffered, waitlistentry.StatusCancelled, waitlistentry.StatusExpired},
	waitlistentry.StatusOffered:   {waitlistentry.StatusOffered, waitlistentry.StatusBooked, waitlistentry.StatusCancelled},
	waitlistentry.StatusBooked:    {waitlistentry.StatusBooked},
	waitlistentry.StatusCancelled: {waitlistentry.StatusCancelled},
	waitlistentry.StatusExpired:   {waitlistentry.StatusExpired},
}

// checkOfferHold: an offer is held as its entry asked, for its key.
func (c *wlCase) checkOfferHold(when string, e *ent.WaitlistEntry) {
	c.t.Helper()
	if e.OfferHoldSeconds == 0 {
		if e.OfferHoldID != nil {
			c.fail("%s: entry %s asked for no hold, its offer has %s", when, e.ID, *e.OfferHoldID)
		}
		return
	}
	if e.OfferHoldID == nil {
		c.fail("%s: entry %s asked for a %ds hold, its offer has none", when, e.ID, e.OfferHoldSeconds)
	}
	h, err := c.db.Hold.Get(c.actx, *e.OfferHoldID)
	if err != nil {
		c.fail("%s: offer hold of %s: %v", when, e.ID, err)
	}
	if h.BarberID != *e.OfferBarberID || !h.StartsAt.Equal(*e.OfferStartsAt) || ptrString(h.WaitlistEntryID) != e.ID || h.APIKeyID != e.APIKeyID ||
		!h.ExpiresAt.Equal(e.OfferedAt.Add(time.Duration(e.OfferHoldSeconds)*time.Second)) || h.ServiceID != c.svc {
		c.fail("%s: offer of %s (%s with %s at %s for %ds) held by %+v", when, e.ID, e.OfferStartsAt, *e.OfferBarberID, e.OfferedAt, e.OfferHoldSeconds, h)
	}
}

// checkTold: every offer was told once, by one slot.available.
func (c *wlCase) checkTold(when string, es []*ent.WaitlistEntry) {
	c.t.Helper()
	ns, err := c.db.Notification.Query().Where(notification.TypeEQ("slot.available")).All(c.actx)
	if err != nil {
		c.t.Fatal(err)
	}
	told := map[string]int{}
	for _, n := range ns {
		e, _ := n.Offer["waitlist_entry"].(map[string]any)
		id, _ := e["id"].(string)
		told[id]++
	}
	for _, e := range es {
		if want := map[bool]int{true: 1, false: 0}[e.OfferedAt != nil]; told[e.ID] != want {
			c.fail("%s: entry %s (%s) told %d times of an offer", when, e.ID, e.Status, told[e.ID])
		}
		delete(told, e.ID)
	}
	if len(told) > 0 {
		c.fail("%s: slot.available of no entry: %v", when, told)
	}
}

func (c *wlCase) statuses() string {
	n := map[waitlistentry.Status]int{}
	for _, e := range c.seen {
		n[e.Status]++
	}
	var out []string
	for s, k := range n {
		out = append(out, fmt.Sprintf("%s %d", s, k))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
