package graph

import (
	"context"
	"errors"
	"time"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/ent/barber"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/ent/waitlistentry"
	"barberd/graph/slots"
	"barberd/rest/view"
)

// The offer pass of one opening (waitlist_open.go says when it runs): the
// waiting entries that may want the freed time, oldest first, each offered
// the earliest free start it wants, until the time is held.

// candidatePage is how many waiting entries an opening reads at a time.
const candidatePage = 100

// offerFreed offers the opening's time to the waiting entries that want
// it, oldest first, each the earliest free start it matches; a start
// offered without a hold is not offered again in the same pass.
func (r *Resolver) offerFreed(ctx context.Context, tx *ent.Tx, op *ent.Opening, now time.Time) (int, error) {
	b, err := tx.Barber.Query().Where(barber.ID(op.BarberID), barber.Active(true)).
		WithUnits(func(q *ent.UnitQuery) { q.Where(unit.Active(true)).Select(unit.FieldID) }).
		WithServices(func(q *ent.ServiceQuery) { q.Select(service.FieldID) }).Only(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	units, services := make([]string, len(b.Edges.Units)), make([]string, len(b.Edges.Services))
	for i, u := range b.Edges.Units {
		units[i] = u.ID
	}
	for i, s := range b.Edges.Services {
		services[i] = s.ID
	}
	p := &offerPass{r: r, tx: tx, barber: b, freed: slots.Interval{Start: op.StartsAt, End: op.EndsAt},
		now: now, told: map[time.Time]bool{}, offers: map[[2]string]*offer{}, days: map[dayKey]slots.Day{}}
	var last *ent.WaitlistEntry
	for !p.taken() {
		q := tx.WaitlistEntry.Query().Where(
			waitlistentry.Waiting(true), waitlistentry.EarliestStartLT(op.EndsAt),
			waitlistentry.LatestEndGT(op.StartsAt), waitlistentry.LatestEndGT(now),
			waitlistentry.Or(waitlistentry.BarberIDIsNil(), waitlistentry.BarberID(b.ID)),
			waitlistentry.UnitIDIn(units...), waitlistentry.ServiceIDIn(services...),
			waitlistentry.HasAPIKeyWith(apikey.RevokedAtIsNil()))
		if last != nil {
			q.Where(waitlistentry.Or(waitlistentry.CreatedAtGT(last.CreatedAt),
				waitlistentry.And(waitlistentry.CreatedAt(last.CreatedAt), waitlistentry.IDGT(last.ID))))
		}
		es, err := q.Order(waitlistentry.ByCreatedAt(), waitlistentry.ByID()).Limit(candidatePage).All(ctx)
		if err != nil {
			return p.made, err
		}
		for _, e := range es {
			if p.taken() {
				break
			}
			if err := p.consider(ctx, e); err != nil {
				return p.made, err
			}
		}
		if len(es) < candidatePage {
			break
		}
		last = es[len(es)-1]
	}
	return p.made, nil
}

// offerPass is the offering of one opening.
type offerPass struct {
	r      *Resolver
	tx     *ent.Tx
	barber *ent.Barber
	freed  slots.Interval
	now    time.Time
	told   map[time.Time]bool   // starts offered without a hold
	offers map[[2]string]*offer // by unit and service; nil: not bookable
	// days are the barber's days read in the pass, by service and date,
	// until an offer's hold changes them.
	days map[dayKey]slots.Day
	// held is how much of the freed span the pass's offers hold, from its
	// start: all of it ends the pass.
	held []slots.Interval
	made int
}

type dayKey struct {
	unit, service string
	date          slots.Date
}

// taken reports whether the pass's holds cover the whole freed span. The
// span was reserved until it was freed, so what holds it now is theirs,
// and nothing is left to offer.
func (p *offerPass) taken() bool {
	at := p.freed.Start
	for moved := true; moved && at.Before(p.freed.End); {
		moved = false
		for _, h := range p.held {
			if !h.Start.After(at) && h.End.After(at) {
				at, moved = h.End, true
			}
		}
	}
	return !at.Before(p.freed.End)
}

// consider offers e the earliest free start it matches, if there is one.
func (p *offerPass) consider(ctx context.Context, e *ent.WaitlistEntry) error {
	o, err := p.offerOf(ctx, e)
	if err != nil || o == nil {
		return err
	}
	w := wantOf(e)
	dates := p.wantedDates(o, w)
	if len(dates) == 0 {
		return nil
	}
	s, ok, err := p.freeStart(ctx, o, w, dates)
	if err != nil || !ok {
		return err
	}
	err = p.r.makeOffer(ctx, p.tx, e, o, s, p.now)
	if errors.Is(err, errNotWaiting) {
		return nil
	}
	if err != nil {
		return err
	}
	p.made++
	if e.OfferHoldID == nil {
		p.told[s.Start] = true
	} else {
		p.held = append(p.held, s.Block(o.buffer()))
		clear(p.days) // the hold is busy time now
	}
	return nil
}

// offerOf is the unit and service of e with the pass's barber, or nil
// when they cannot be booked together (read once per pass).
func (p *offerPass) offerOf(ctx context.Context, e *ent.WaitlistEntry) (*offer, error) {
	k := [2]string{e.UnitID, e.ServiceID}
	if o, seen := p.offers[k]; seen {
		return o, nil
	}
	o, err := lookupCatalog(ctx, p.tx.Client(), e.UnitID, e.ServiceID, &p.barber.ID)
	if _, domain := AsError(err); domain {
		o, err = nil, nil // no longer offered, bookable or eligible
	}
	if err != nil {
		return nil, err
	}
	p.offers[k] = o
	return o, nil
}

// wantedDates are the local dates on which a start of o's service can
// touch the freed span and fall in w's window: its days and weekdays, and
// on each its times of day. Entries that cannot want the span cost no
// read.
func (p *offerPass) wantedDates(o *offer, w want) []slots.Date {
	span := o.duration() + o.buffer()
	earliest := p.freed.Start.Add(-span) // a start must be after it
	first, last := slots.DateOf(earliest, o.loc), slots.DateOf(p.freed.End, o.loc)
	if first.Compare(w.from) < 0 {
		first = w.from
	}
	if last.Compare(w.to) > 0 {
		last = w.to
	}
	var dates []slots.Date
	for d := first; d.Compare(last) <= 0; d = d.AddDays(1) {
		if !w.weekdays[isoWeekday(d)] {
			continue
		}
		// The day's window in instants, against the starts that touch the
		// span: (earliest, freed end).
		from := d.Start(o.loc).Add(time.Duration(w.start) * time.Second)
		to := d.Start(o.loc).Add(time.Duration(w.end) * time.Second)
		if from.Before(p.freed.End) && to.After(earliest) {
			dates = append(dates, d)
		}
	}
	return dates
}

// freeStart is the earliest start free now for o's service with the pass's
// barber whose time touches the freed span and which w wants, on dates.
func (p *offerPass) freeStart(ctx context.Context, o *offer, w want, dates []slots.Date) (slots.Slot, bool, error) {
	var missing []slots.Date
	for _, d := range dates {
		if _, ok := p.days[dayKey{o.unit.ID, o.service.ID, d}]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		read, err := o.days(ctx, p.tx.Client(), p.r.cfg.DB.Dialect, p.now, []*ent.Barber{o.barber}, missing)
		if err != nil {
			return slots.Slot{}, false, err
		}
		for i, d := range missing {
			p.days[dayKey{o.unit.ID, o.service.ID, d}] = read[i].Day
		}
	}
	for _, d := range dates {
		for _, s := range slots.FreeSlots(p.days[dayKey{o.unit.ID, o.service.ID, d}]) {
			if s.Block(o.buffer()).Overlaps(p.freed) && !p.told[s.Start] && w.matches(s.Start, o.loc) {
				return s, true, nil
			}
		}
	}
	return slots.Slot{}, false, nil
}

// errNotWaiting ends the offer to an entry another writer offered or ended
// first.
var errNotWaiting = errors.New("waitlist entry no longer waiting")

// makeOffer offers e the slot s: the entry records the offer (if it is
// still waiting: errNotWaiting otherwise), the slot is held for e's key
// unless e tells only or the key is at its hold cap, and e's key is told
// with slot.available. The caller holds the barber's lock.
func (r *Resolver) makeOffer(ctx context.Context, tx *ent.Tx, e *ent.WaitlistEntry, o *offer, s slots.Slot, now time.Time) error {
	var holdID *string
	if e.OfferHoldSeconds > 0 {
		atCap, err := r.atHoldCap(ctx, tx, e.APIKeyID, now)
		if err != nil {
			return err
		}
		if !atCap {
			id := hold.DefaultID()
			holdID = &id
		}
	}
	n, err := tx.WaitlistEntry.Update().
		Where(waitlistentry.ID(e.ID), waitlistentry.StatusEQ(waitlistentry.StatusWaiting)).
		SetStatus(waitlistentry.StatusOffered).ClearWaiting().
		SetOfferStartsAt(s.Start).SetOfferEndsAt(s.End).SetOfferBarberID(s.BarberID).
		SetOfferedAt(now).SetNillableOfferHoldID(holdID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errNotWaiting
	}
	e.Status, e.Waiting, e.UpdatedAt = waitlistentry.StatusOffered, nil, now
	e.OfferStartsAt, e.OfferEndsAt, e.OfferBarberID, e.OfferedAt, e.OfferHoldID = &s.Start, &s.End, &s.BarberID, &now, holdID
	e.Edges.Unit = o.unit
	offered := map[string]any{"hold": nil}
	if holdID != nil {
		h, err := holdTime(ctx, tx, tx.Hold.Create().SetID(*holdID).SetAccountID(e.AccountID).SetAPIKeyID(e.APIKeyID).
			SetUnitID(e.UnitID).SetServiceID(e.ServiceID).SetBarberID(s.BarberID).
			SetStartsAt(s.Start).SetEndsAt(s.End).SetExpiresAt(now.Add(time.Duration(e.OfferHoldSeconds)*time.Second)).
			SetWaitlistEntryID(e.ID), o.buffer())
		if err != nil {
			return err
		}
		h.Edges.Unit = o.unit
		if offered["hold"], err = view.HoldOf(h); err != nil {
			return err
		}
	}
	entry, err := view.WaitlistEntryOf(e)
	if err != nil {
		return err
	}
	offered["waitlist_entry"], offered["slot"] = entry, view.SlotAt(s.Start, s.End, s.BarberID, o.loc)
	m, err := asMap(offered)
	if err != nil {
		return err
	}
	return r.notify(ctx, tx, &ent.Notification{
		ID: notification.DefaultID(), AccountID: e.AccountID, Type: view.SlotAvailable,
		APIKeyID: &e.APIKeyID, Source: notification.SourceAPI, Offer: m,
		CreatedAt: notification.DefaultCreatedAt(),
	})
}

// atHoldCap reports whether a key has as many active holds as it may.
func (r *Resolver) atHoldCap(ctx context.Context, tx *ent.Tx, keyID string, now time.Time) (bool, error) {
	k, err := tx.APIKey.Get(ctx, keyID)
	if err != nil {
		return false, err
	}
	most := r.holdCap(k)
	if most <= 0 {
		return false, nil
	}
	n, err := activeHoldsOf(tx.Hold, keyID, now).Count(ctx)
	return n >= most, err
}

// bookedOffer records that the offer hold h was booked as appointment
// appointmentID: its entry is booked.
func bookedOffer(ctx context.Context, tx *ent.Tx, h *ent.Hold, appointmentID string) error {
	if h.WaitlistEntryID == nil {
		return nil
	}
	return tx.WaitlistEntry.Update().
		Where(waitlistentry.ID(*h.WaitlistEntryID), waitlistentry.StatusEQ(waitlistentry.StatusOffered)).
		SetStatus(waitlistentry.StatusBooked).SetAppointmentID(appointmentID).Exec(ctx)
}

// releaseOfferHold releases an offer's hold if it is still active, which
// offers its start to the next entry.
func (r *Resolver) releaseOfferHold(ctx context.Context, tx *ent.Tx, id string) error {
	h, err := r.lockHold(ctx, tx, id)
	if ErrorCode(err) == CodeHoldNotFound {
		return nil // pruned long ago
	}
	if err != nil || effectiveStatus(h, r.now()) != hold.StatusActive {
		return err
	}
	return r.endHold(ctx, tx, h, hold.StatusReleased)
}

// ExpireWaitlist records as expired the waiting entries whose last day is
// over, up to limit, and says how many (readers show them expired already).
func (r *Resolver) ExpireWaitlist(ctx context.Context, limit int) (int, error) {
	sys := tenant.System(ctx)
	if limit <= 0 {
		limit = jobBatch
	}
	now := r.now()
	ids, err := r.cfg.DB.WaitlistEntry.Query().
		Where(waitlistentry.Waiting(true), waitlistentry.LatestEndLTE(now)).Limit(limit).IDs(sys)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return r.cfg.DB.WaitlistEntry.Update().
		Where(waitlistentry.IDIn(ids...), waitlistentry.Waiting(true)).
		SetStatus(waitlistentry.StatusExpired).ClearWaiting().Save(sys)
}
