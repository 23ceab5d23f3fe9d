// Package waitlist is the waitlist (rest-v1.md, "Additions: waitlist";
// docs/waitlist.md): a client waits for a time of a service at a unit that
// is not free yet. Entries are written in waitlist.go; open.go records the
// times that become free and offer.go offers them to the entries that want
// them. It books through Booking, the booking core of package graph.
package waitlist

import (
	"context"
	"slices"
	"time"

	"entgo.io/contrib/entgql"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/ent/waitlistentry"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/paging"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// Bounds of a waitlist entry.
const (
	// DefaultOfferHoldSeconds is how long an offer is held without
	// offer_hold_seconds; 0 tells only, else MinOfferHold..MaxOfferHold.
	DefaultOfferHoldSeconds = 600
	MinOfferHoldSeconds     = 10
	MaxOfferHoldSeconds     = 1800
	// DefaultPerKey caps the waiting entries of one key.
	DefaultPerKey = 100
	// ClientMax is the most entries a client lookup returns.
	ClientMax = 100
	// slotAvailableAlternatives is how many free starts slot_available names.
	slotAvailableAlternatives = 3
)

// want is a checked entry's window: its dates, daily times (seconds since
// local midnight, from <= t < to) and ISO weekdays.
type want struct {
	from, to   slots.Date
	start, end int
	weekdays   [8]bool
}

// matches reports whether a start at t, local in loc, falls in the window.
func (w want) matches(t time.Time, loc *time.Location) bool {
	local := t.In(loc)
	d := slots.DateOf(t, loc)
	secs := local.Hour()*3600 + local.Minute()*60 + local.Second()
	return d.Compare(w.from) >= 0 && d.Compare(w.to) <= 0 && w.weekdays[domain.ISOWeekday(d)] && secs >= w.start && secs < w.end
}

// dates are the window's days on its weekdays, in order.
func (w want) dates() []slots.Date {
	var out []slots.Date
	for d := w.from; d.Compare(w.to) <= 0; d = d.AddDays(1) {
		if w.weekdays[domain.ISOWeekday(d)] {
			out = append(out, d)
		}
	}
	return out
}

// earliestStart bounds from below the starts w allows: its first date's
// (dates, ascending) daily start, an hour early on a day of a daylight
// saving change, for a wall time the change skips may be placed either
// side of the gap.
func (w want) earliestStart(dates []slots.Date, loc *time.Location) time.Time {
	if len(dates) == 0 {
		return w.from.Start(loc)
	}
	return wallAt(dates[0], w.start, loc).Add(-shiftSlack(dates[0], loc))
}

// shiftSlack is an hour on a day of d whose clocks change in loc (its
// midnights' offsets differ), else nothing: how far a wall time of the
// day may be placed from where time.Date puts it.
func shiftSlack(d slots.Date, loc *time.Location) time.Duration {
	_, before := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc).Zone()
	_, after := time.Date(d.Year, d.Month, d.Day+1, 0, 0, 0, 0, loc).Zone()
	if before == after {
		return 0
	}
	return time.Hour
}

// windowEnd bounds from above the ends of the starts w allows: a start
// at its last date's daily end, plus span (the service and its buffer),
// an hour late on a day of a daylight saving change (as earliestStart),
// at most latest.
func (w want) windowEnd(dates []slots.Date, loc *time.Location, span time.Duration, latest time.Time) time.Time {
	if len(dates) == 0 {
		return latest
	}
	last := dates[len(dates)-1]
	end := wallAt(last, w.end, loc).Add(span + shiftSlack(last, loc)).UTC()
	if end.After(latest) {
		return latest
	}
	return end
}

// wantOf is the window of a stored entry, read from its columns alone
// (they were checked when it joined): the offer pass reads it for every
// candidate.
func wantOf(e *ent.WaitlistEntry) want {
	w := want{end: int(slots.EndOfDay) * 60}
	w.from, _ = slots.ParseDate(e.FromDate)
	w.to, _ = slots.ParseDate(e.ToDate)
	if e.TimeFrom != nil {
		c, _ := slots.ParseClock(*e.TimeFrom)
		w.start = int(c) * 60
	}
	if e.TimeTo != nil {
		c, _ := slots.ParseClock(*e.TimeTo)
		w.end = int(c) * 60
	}
	for _, d := range e.Weekdays {
		if d >= 1 && d <= 7 {
			w.weekdays[d] = true
		}
	}
	if len(e.Weekdays) == 0 {
		for d := range w.weekdays {
			w.weekdays[d] = true
		}
	}
	return w
}

// CheckJoin checks a join's shape; the dates against the unit's
// today and horizon are checked once the unit is known.
func CheckJoin(in model.JoinWaitlistInput) domain.Problems {
	_, p := checkJoin(in)
	return p
}

func checkJoin(in model.JoinWaitlistInput) (want, domain.Problems) {
	p := domain.CheckAvailabilityRange(in.UnitID, in.ServiceID, in.BarberID, in.From, in.To)
	var w want
	w.from, _ = slots.ParseDate(in.From)
	w.to, _ = slots.ParseDate(in.To)
	s, q := domain.NextSearchOf(domain.NextSlotsQuery{UnitID: in.UnitID, ServiceID: in.ServiceID, TimeFrom: in.TimeFrom, TimeTo: in.TimeTo, Weekdays: in.Weekdays})
	for _, f := range q {
		if f.Field != "unit_id" && f.Field != "service_id" {
			p = append(p, f)
		}
	}
	w.start, w.end, w.weekdays = s.From, s.To, s.Weekdays
	domain.CheckClient(&p, in.Client)
	if in.ExternalReference != nil {
		domain.CheckReference(&p, *in.ExternalReference)
	}
	if h := in.OfferHoldSeconds; h != nil && *h != 0 && (*h < MinOfferHoldSeconds || *h > MaxOfferHoldSeconds) {
		p.Add("offer_hold_seconds", "must be 0 (tell only, no hold) or between %d and %d", MinOfferHoldSeconds, MaxOfferHoldSeconds)
	}
	return w, p
}

// Join puts a client on the waitlist.
// Errors: validation_failed, those of resolveCatalog, outside_booking_window,
// slot_available, already_waiting, too_many_waitlist_entries.
func (wl *Waitlist) Join(ctx context.Context, in model.JoinWaitlistInput) (*model.JoinWaitlistPayload, error) {
	v, err := domain.Require(ctx, domain.ScopeAppointmentsWrite)
	if err != nil {
		return nil, err
	}
	ref := in.ExternalReference
	if ref != nil && *ref == "" {
		ref = nil
	}
	if ref != nil {
		if prior, err := wl.entryByReference(ctx, wl.db.Client, v.KeyID, *ref); prior != nil || err != nil {
			return &model.JoinWaitlistPayload{Entry: prior, Replayed: true}, err
		}
	}
	w, p := checkJoin(in)
	if err := p.Err(); err != nil {
		return nil, err
	}
	o, err := wl.b.Offer(ctx, in.UnitID, in.ServiceID, in.BarberID)
	if err != nil {
		return nil, err
	}
	now := wl.b.Now()
	today := slots.DateOf(now, o.Loc)
	if w.from.Compare(today) < 0 {
		return nil, (&domain.Problems{{Field: "from", Message: "must not be before today, " + today.String() + " at the unit"}}).Err()
	}
	if last := today.AddDays(o.Unit.HorizonDays); w.to.Compare(last) > 0 {
		return nil, domain.Errorf(domain.CodeOutsideWindow, "Bookings can be made at most %d days ahead: the waitlist can wait until %s at the latest.", o.Unit.HorizonDays, last)
	}
	dates := w.dates()
	if free, err := wl.b.FreeStarts(ctx, in.UnitID, in.ServiceID, in.BarberID, dates, w.start, w.end, slotAvailableAlternatives); err != nil || len(free) > 0 {
		if err != nil {
			return nil, err
		}
		e := domain.Errorf(domain.CodeSlotAvailable, "A matching time is free now: book it instead of waiting (%d listed in alternatives).", len(free))
		e.Alternatives = free
		return nil, e
	}
	c := domain.RecordOf(in.Client)
	hold := DefaultOfferHoldSeconds
	if in.OfferHoldSeconds != nil {
		hold = *in.OfferHoldSeconds
	}
	span := o.Duration() + o.Buffer()
	latest := w.to.AddDays(1).Start(o.Loc).Add(span).UTC()
	var e *ent.WaitlistEntry
	err = wl.b.InTx(ctx, func(tx *ent.Tx) error {
		if err := wl.checkWaitlistCap(ctx, tx, v.KeyID); err != nil {
			return err
		}
		customerID, err := store.UpsertCustomer(ctx, tx, domain.CustomerOf(v.AccountID, c))
		if err != nil {
			return err
		}
		if e, err = tx.WaitlistEntry.Create().SetAccountID(v.AccountID).SetAPIKeyID(v.KeyID).
			SetUnitID(o.Unit.ID).SetServiceID(o.Service.ID).SetNillableBarberID(in.BarberID).
			SetFromDate(w.from.String()).SetToDate(w.to.String()).
			SetNillableTimeFrom(in.TimeFrom).SetNillableTimeTo(in.TimeTo).SetWeekdays(weekdaysOf(in.Weekdays)).
			SetEarliestStart(w.earliestStart(dates, o.Loc).UTC()).SetLatestEnd(latest).SetWindowEnd(w.windowEnd(dates, o.Loc, span, latest)).
			SetCustomerID(customerID).SetClientName(c.Name).SetClientPhone(c.Phone).SetNillableClientEmail(c.Email).
			SetNillableExternalReference(ref).SetOfferHoldSeconds(hold).SetWaiting(true).
			Save(ctx); err != nil {
			return err
		}
		return store.LockWaitlist(ctx, tx, wl.db.Dialect, v.AccountID)
	})
	if store.Classify(err) == store.Unique {
		return wl.joinConflict(ctx, v, ref, c.Phone, o)
	}
	if err != nil {
		return nil, err
	}
	e = e.Unwrap()
	e.Edges.Unit = o.Unit
	// A time freed by a transaction that could not see this entry was
	// offered to the entries it saw: look again, in the database, now that
	// those transactions have committed (store.LockWaitlist).
	if free, err := wl.freeNow(ctx, o, w); err == nil && len(free) > 0 {
		wl.reopen(ctx, e.AccountID, free)
		if again, err := wl.loadEntry(ctx, e.ID); err == nil {
			e = again
		}
	}
	return &model.JoinWaitlistPayload{Entry: e}, nil
}

// joinConflict answers a join that lost to a unique index: a repeat of its
// reference (replayed), or the client's waiting entry.
func (wl *Waitlist) joinConflict(ctx context.Context, v *domain.Viewer, ref *string, phone string, o *catalog.Offer) (*model.JoinWaitlistPayload, error) {
	if ref != nil {
		if prior, err := wl.entryByReference(ctx, wl.db.Client, v.KeyID, *ref); prior != nil || err != nil {
			return &model.JoinWaitlistPayload{Entry: prior, Replayed: true}, err
		}
	}
	id, err := wl.db.WaitlistEntry.Query().
		Where(waitlistentry.ClientPhone(phone), waitlistentry.UnitID(o.Unit.ID), waitlistentry.ServiceID(o.Service.ID), waitlistentry.Waiting(true)).
		FirstID(ctx)
	if err != nil {
		if ent.IsNotFound(err) {
			return nil, domain.Errorf(domain.CodeUnavailable, "The waitlist changed while joining; try again.")
		}
		return nil, err
	}
	e := domain.Errorf(domain.CodeAlreadyWaiting, "This client already waits for %q at %s: entry %s.", o.Service.Name, o.Unit.Name, id)
	e.WaitlistEntryID = id
	return nil, e
}

// checkWaitlistCap refuses another entry when the key has as many waiting
// entries as it may, counted under the lock of the key's row so that
// concurrent joins count each other. Errors: too_many_waitlist_entries.
func (wl *Waitlist) checkWaitlistCap(ctx context.Context, tx *ent.Tx, keyID string) error {
	most := wl.perKey
	if most <= 0 {
		return nil
	}
	if !store.SerialWrites(wl.db.Dialect) {
		if _, err := tx.APIKey.Query().Where(apikey.ID(keyID)).Modify(store.NoKeyUpdate).IDs(ctx); err != nil {
			return err
		}
	}
	n, err := tx.WaitlistEntry.Query().Where(waitlistentry.APIKeyID(keyID), waitlistentry.Waiting(true)).Count(ctx)
	if err != nil || n < most {
		return err
	}
	return domain.Errorf(domain.CodeTooManyWaitlist, "This API key already has %d waiting entries, the most it may have: take a client off the waitlist first.", n)
}

// freeNow is the first free start an entry with window w wants of o,
// read from the database now, past every cache.
func (wl *Waitlist) freeNow(ctx context.Context, o *catalog.Offer, w want) ([]*model.Slot, error) {
	barbers := o.Eligible
	if o.Barber != nil {
		barbers = []*ent.Barber{o.Barber}
	}
	dates := w.dates()
	days, err := o.Days(ctx, wl.db.Client, wl.db.Dialect, wl.b.Now(), barbers, dates)
	if err != nil {
		return nil, err
	}
	for _, d := range days {
		for _, s := range slots.FreeSlots(d.Day) {
			if w.matches(s.Start, o.Loc) {
				return []*model.Slot{{StartsAtUtc: s.Start.UTC(), EndsAtUtc: s.End.UTC(), BarberID: s.BarberID}}, nil
			}
		}
	}
	return nil, nil
}

// weekdaysOf is the weekdays to store: every one given, in order, once.
func weekdaysOf(ds []int) []int {
	var seen [8]bool
	out := []int{}
	for _, d := range ds {
		if d >= 1 && d <= 7 && !seen[d] {
			seen[d] = true
		}
	}
	for d := 1; d <= 7; d++ {
		if seen[d] {
			out = append(out, d)
		}
	}
	return out
}

// entryByReference is the key's entry joined with ref, with its unit, or nil.
func (wl *Waitlist) entryByReference(ctx context.Context, c *ent.Client, keyID, ref string) (*ent.WaitlistEntry, error) {
	e, err := c.WaitlistEntry.Query().
		Where(waitlistentry.APIKeyID(keyID), waitlistentry.ExternalReference(ref)).WithUnit().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return wl.asOfNow(e), nil
}

// loadEntry returns an entry of the account with its unit.
// Errors: waitlist_entry_not_found.
func (wl *Waitlist) loadEntry(ctx context.Context, id string) (*ent.WaitlistEntry, error) {
	if !domain.PlausibleID(id) {
		return nil, domain.Errorf(domain.CodeWaitlistEntryNotFound, "No waitlist entry %q.", id)
	}
	e, err := wl.db.WaitlistEntry.Query().Where(waitlistentry.ID(id)).WithUnit().Only(ctx)
	if err != nil {
		return nil, domain.NotFound(err, domain.CodeWaitlistEntryNotFound, "waitlist entry", id)
	}
	return wl.asOfNow(e), nil
}

// asOfNow shows a waiting entry whose last day is over as expired, whether
// or not the expiry job has recorded it yet.
func (wl *Waitlist) asOfNow(e *ent.WaitlistEntry) *ent.WaitlistEntry {
	if e.Status == waitlistentry.StatusWaiting && !wl.b.Now().Before(e.LatestEnd) {
		e.Status, e.Waiting = waitlistentry.StatusExpired, nil
	}
	return e
}

// Entry reads an entry. Errors: waitlist_entry_not_found.
func (wl *Waitlist) Entry(ctx context.Context, id string) (*ent.WaitlistEntry, error) {
	if _, err := domain.Require(ctx, domain.ScopeAppointmentsRead); err != nil {
		return nil, err
	}
	return wl.loadEntry(ctx, id)
}

// CheckClient checks a lookup of a client's entries.
func CheckClient(phone string, status []waitlistentry.Status) domain.Problems {
	var p domain.Problems
	if domain.Required(&p, "client_phone", phone) {
		domain.CheckPhone(&p, "client_phone", domain.LookupPhone(phone))
	}
	if status != nil {
		unknown := slices.ContainsFunc(status, func(s waitlistentry.Status) bool { return waitlistentry.StatusValidator(s) != nil })
		if len(status) == 0 || unknown {
			p.Add("status", "must list statuses among waiting, offered, booked, cancelled and expired")
		}
	}
	return p
}

// OfClient lists a client's entries, oldest first (the newest
// ClientMax). Errors: validation_failed.
func (wl *Waitlist) OfClient(ctx context.Context, phone string, status []waitlistentry.Status) ([]*ent.WaitlistEntry, error) {
	if _, err := domain.Require(ctx, domain.ScopeAppointmentsRead); err != nil {
		return nil, err
	}
	if err := CheckClient(phone, status).Err(); err != nil {
		return nil, err
	}
	es, err := wl.db.WaitlistEntry.Query().Where(waitlistentry.ClientPhone(domain.LookupPhone(phone))).
		Order(ent.Desc(waitlistentry.FieldCreatedAt), ent.Desc(waitlistentry.FieldID)).
		Limit(ClientMax).WithUnit().All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*ent.WaitlistEntry, 0, len(es))
	for i := len(es) - 1; i >= 0; i-- {
		e := wl.asOfNow(es[i])
		if status == nil || slices.Contains(status, e.Status) {
			out = append(out, e)
		}
	}
	return out, nil
}

// OfUnit is a unit's entries for dashboards, oldest first, a page
// of DefaultPageSize unless first says otherwise.
// Errors: validation_failed, unit_not_found.
func (wl *Waitlist) OfUnit(ctx context.Context, unitID string, status *waitlistentry.Status, first *int, after *entgql.Cursor[string]) (*ent.WaitlistEntryConnection, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	var p domain.Problems
	paging.CheckPage(&p, first, nil)
	if err := p.Err(); err != nil {
		return nil, err
	}
	first = paging.DefaultFirst(first, nil)
	if _, err := domain.FindUnit(ctx, wl.db.Client, unitID); err != nil {
		return nil, err
	}
	q := wl.db.WaitlistEntry.Query().Where(waitlistentry.UnitID(unitID))
	if status != nil {
		q.Where(waitlistentry.StatusEQ(*status))
	}
	return q.Paginate(ctx, after, first, nil, nil)
}

// Leave takes an entry off the waitlist; an offer's active hold is
// released, which offers its start to the next entry. An entry no longer
// waiting or offered is returned unchanged.
// Errors: waitlist_entry_not_found.
func (wl *Waitlist) Leave(ctx context.Context, id string) (*ent.WaitlistEntry, error) {
	if _, err := domain.Require(ctx, domain.ScopeAppointmentsWrite); err != nil {
		return nil, err
	}
	if _, err := wl.loadEntry(ctx, id); err != nil {
		return nil, err
	}
	// The entry is changed only as it was read: one offered meanwhile is
	// read again, so its new hold is released too.
	for left := false; !left; {
		err := wl.b.InTx(ctx, func(tx *ent.Tx) error {
			e, err := tx.WaitlistEntry.Get(ctx, id)
			if err != nil {
				return domain.NotFound(err, domain.CodeWaitlistEntryNotFound, "waitlist entry", id)
			}
			if left = e.Status != waitlistentry.StatusWaiting && e.Status != waitlistentry.StatusOffered; left {
				return nil
			}
			if e.OfferHoldID != nil {
				// The hold's barber is locked before the entry, as offers do.
				if err := wl.b.ReleaseHold(ctx, tx, *e.OfferHoldID); err != nil {
					return err
				}
			}
			n, err := tx.WaitlistEntry.Update().Where(waitlistentry.ID(id), waitlistentry.StatusEQ(e.Status)).
				SetStatus(waitlistentry.StatusCancelled).ClearWaiting().Save(ctx)
			left = n == 1
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return wl.loadEntry(ctx, id)
}
