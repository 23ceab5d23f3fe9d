package waitlist

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/ent/barber"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/predicate"
	"barberd/ent/schema/tenant"
	"barberd/ent/unit"
	"barberd/ent/waitlistentry"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/slots"
	"barberd/graph/store"
	"barberd/rest/view"
)

// The offer pass of one opening (open.go says when it runs): the
// waiting entries that may want the freed time, oldest first, each offered
// the earliest free start it wants, until the time is held.

// candidatePage is how many waiting entries an opening reads at a time.
const candidatePage = 100

// offerFreed offers the barber's freed time to the waiting entries that
// want it, oldest first, each the earliest free start it matches; a start
// offered without a hold is not offered again in the same pass. The
// barber is locked once a start is free for an entry, and the barber's
// expired holds freed before the first hold is written.
func (wl *Waitlist) offerFreed(ctx context.Context, tx *ent.Tx, accountID, barberID string, config int64, freed []slots.Interval, now time.Time) (int, passCounts, error) {
	p := &offerPass{wl: wl, tx: tx, accountID: accountID, barberID: barberID, config: config, freed: freed,
		now: now, told: map[time.Time]bool{}, offers: map[[2]string]*catalog.Offer{}, days: map[dayKey]slots.Day{},
		free: map[freeKey][]slots.Slot{}}
	first, last := freed[0], freed[0]
	for _, f := range freed {
		if f.Start.Before(first.Start) {
			first = f
		}
		if f.End.After(last.End) {
			last = f
		}
	}
	var prev *ent.WaitlistEntry
	for !p.taken() {
		es, err := candidates(tx.WaitlistEntry, wl.db.Dialect, accountID, barberID, first.Start, last.End, now, prev).All(ctx)
		if err != nil {
			return p.made, p.seen, err
		}
		relocked := false
		for _, e := range es {
			if p.taken() {
				break
			}
			err := p.consider(ctx, e)
			if relocked = errors.Is(err, errLocked); relocked {
				break
			}
			if err != nil {
				return p.made, p.seen, err
			}
		}
		switch {
		case relocked:
			prev = nil // again from the oldest, reading under the lock
		case len(es) < candidatePage:
			return p.made, p.seen, nil
		default:
			prev = es[len(es)-1]
		}
	}
	return p.made, p.seen, nil
}

// offerPass is the offering of a barber's freed time.
type offerPass struct {
	wl                  *Waitlist
	tx                  *ent.Tx
	accountID, barberID string
	freed               []slots.Interval
	now                 time.Time
	told                map[time.Time]bool           // starts offered without a hold
	offers              map[[2]string]*catalog.Offer // by unit and service; nil: not bookable
	// config is the account's config version, read in the pass's
	// transaction before any catalog.
	config int64
	// days are the barber's days read in the pass, by unit and date (for
	// any service: each takes its own length), until an offer's hold
	// changes them.
	days map[dayKey]slots.Day
	// free are the free starts of those days for a service's length and
	// buffer, computed once for all the entries that want them.
	free map[freeKey][]slots.Slot
	// held are the blocks of the pass's offers' holds: once they cover
	// the freed time, the pass ends.
	held []slots.Interval
	// locked: the barber is locked, and its expired holds are freed.
	locked bool
	made   int
	// seen counts the entries considered, by what came of them (for the
	// log of a pass that offers nothing).
	seen passCounts
}

// passCounts are the entries an offer pass considered, by outcome.
type passCounts struct {
	Entries, NotBookable, NoDate, NoStart, NotWaiting int
}

type dayKey struct {
	unit string
	date slots.Date
}

type freeKey struct {
	dayKey
	duration, buffer time.Duration
}

// taken reports whether the pass's holds cover all the freed time. It was
// reserved until it was freed, so what holds it now is theirs, and nothing
// is left to offer.
func (p *offerPass) taken() bool {
	for _, f := range p.freed {
		at := f.Start
		for moved := true; moved && at.Before(f.End); {
			moved = false
			for _, h := range p.held {
				if !h.Start.After(at) && h.End.After(at) {
					at, moved = h.End, true
				}
			}
		}
		if at.Before(f.End) {
			return false
		}
	}
	return true
}

// touches reports whether a block touches the freed time.
func (p *offerPass) touches(block slots.Interval) bool {
	for _, f := range p.freed {
		if block.Overlaps(f) {
			return true
		}
	}
	return false
}

// consider offers e the earliest free start it matches, if there is one.
func (p *offerPass) consider(ctx context.Context, e *ent.WaitlistEntry) error {
	p.seen.Entries++
	o, err := p.offerOf(ctx, e)
	if err != nil || o == nil {
		p.seen.NotBookable++
		return err
	}
	w := wantOf(e)
	dates := p.wantedDates(o, w)
	if len(dates) == 0 {
		p.seen.NoDate++
		return nil
	}
	s, date, ok, err := p.freeStart(ctx, o, w, dates)
	if err != nil || !ok {
		p.seen.NoStart++
		return err
	}
	if !p.locked {
		// Read unlocked, the barber's time can only tell that nothing is
		// free for e: time freed since has an opening of its own, whose
		// pass reads it. Cancels wait for a barber's lock, so a pass locks
		// it only once a start is free, with the writers' check of that
		// start under the lock (which holds until the commit, and frees
		// the barber's expired holds: a hold's reservation may not overlap
		// an expired one's). Booked since, the pass considers the entries
		// again from the oldest, reading under the lock.
		at := *o
		at.Start, at.Date = s.Start, date
		free, err := p.wl.b.LockStart(ctx, p.tx, &at, p.now)
		if err != nil {
			return err
		}
		p.locked = true
		clear(p.days)
		clear(p.free)
		if !free {
			p.seen = passCounts{} // considered again under the lock
			return errLocked
		}
	}
	err = p.wl.makeOffer(ctx, p.tx, e, o, s, p.now)
	if errors.Is(err, errNotWaiting) {
		p.seen.NotWaiting++
		return nil
	}
	if err != nil {
		return err
	}
	p.made++
	if e.OfferHoldID == nil {
		p.told[s.Start] = true
	} else {
		p.held = append(p.held, s.Block(o.Buffer()))
		clear(p.days) // the hold is busy time now
		clear(p.free)
	}
	return nil
}

// offerOf is the unit and service of e with the pass's barber, or nil
// when they cannot be booked together (looked up once per pass).
func (p *offerPass) offerOf(ctx context.Context, e *ent.WaitlistEntry) (*catalog.Offer, error) {
	k := [2]string{e.UnitID, e.ServiceID}
	if o, seen := p.offers[k]; seen {
		return o, nil
	}
	o, err := p.catalog(ctx, e.UnitID, e.ServiceID)
	if _, known := domain.AsError(err); known {
		o, err = nil, nil // no longer offered, bookable or eligible
	}
	if err != nil {
		return nil, err
	}
	p.offers[k] = o
	return o, nil
}

// catalog is the unit and service with the pass's barber from the
// process's catalog cache, current as of the account's config version read
// in the pass's transaction (no statement, where catalog.Lookup takes three
// for each unit and service); read from the transaction and kept when not
// cached.
func (p *offerPass) catalog(ctx context.Context, unitID, serviceID string) (*catalog.Offer, error) {
	v := &domain.Viewer{AccountID: p.accountID, ConfigVersion: p.config, Versioned: true}
	key := catalog.NewKey(p.accountID, unitID, serviceID, &p.barberID)
	if o, hit := p.wl.b.CachedOffer(v, key); hit {
		c := *o // the pass reads the cache's unit, service and barber, never writes them
		return &c, nil
	}
	// The version was read before the catalog, so the catalog is at least
	// as new as the version it is kept under.
	o, err := catalog.Lookup(ctx, p.tx.Client(), unitID, serviceID, &p.barberID)
	if err != nil {
		return nil, err
	}
	p.wl.b.KeepOffer(key, &catalog.Entry{Config: p.config, Offer: *o})
	return o, nil
}

// wantedDates are the local dates on which a start of o's service can
// touch the freed time and fall in w's window: its days and weekdays, and
// on each its times of day. Entries that cannot want the time cost no
// read.
func (p *offerPass) wantedDates(o *catalog.Offer, w want) []slots.Date {
	span := o.Duration() + o.Buffer()
	var dates []slots.Date
	for _, f := range p.freed {
		earliest := f.Start.Add(-span) // a start must be after it
		first, last := slots.DateOf(earliest, o.Loc), slots.DateOf(f.End, o.Loc)
		if first.Compare(w.from) < 0 {
			first = w.from
		}
		if last.Compare(w.to) > 0 {
			last = w.to
		}
		for d := first; d.Compare(last) <= 0; d = d.AddDays(1) {
			// The day's window in instants, against the starts that touch
			// the span: (earliest, its end).
			from, to := wallAt(d, w.start, o.Loc), wallAt(d, w.end, o.Loc)
			if w.weekdays[domain.ISOWeekday(d)] && from.Before(f.End) && to.After(earliest) && !slices.Contains(dates, d) {
				dates = append(dates, d)
			}
		}
	}
	slices.SortFunc(dates, slots.Date.Compare)
	return dates
}

// wallAt is the instant of the wall time secs seconds after midnight of d
// in loc (24:00 is the next midnight): on a daylight-saving day, elapsed
// time from midnight is an hour off the wall clock.
func wallAt(d slots.Date, secs int, loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, secs/3600, secs%3600/60, secs%60, 0, loc)
}

// freeStart is the earliest start free now for o's service with the pass's
// barber whose time touches the freed span and which w wants, on dates,
// and the date of its day.
func (p *offerPass) freeStart(ctx context.Context, o *catalog.Offer, w want, dates []slots.Date) (slots.Slot, slots.Date, bool, error) {
	var missing []slots.Date
	for _, d := range dates {
		if _, ok := p.days[dayKey{o.Unit.ID, d}]; !ok {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		read, err := o.Days(ctx, p.tx.Client(), p.wl.db.Dialect, p.now, []*ent.Barber{o.Barber}, missing)
		if err != nil {
			return slots.Slot{}, slots.Date{}, false, err
		}
		for i, d := range missing {
			p.days[dayKey{o.Unit.ID, d}] = read[i].Day
		}
	}
	for _, d := range dates {
		k := freeKey{dayKey{o.Unit.ID, d}, o.Duration(), o.Buffer()}
		free, ok := p.free[k]
		if !ok {
			day := p.days[k.dayKey]
			day.Duration, day.Buffer = k.duration, k.buffer
			free = slots.FreeSlots(day)
			p.free[k] = free
		}
		for _, s := range free {
			if p.touches(s.Block(o.Buffer())) && !p.told[s.Start] && w.matches(s.Start, o.Loc) {
				return s, d, true, nil
			}
		}
	}
	return slots.Slot{}, slots.Date{}, false, nil
}

// errLocked sends an offer pass back to its oldest entry once it has
// locked the barber.
var errLocked = errors.New("barber locked: consider the entries again")

// errNotWaiting ends the offer to an entry another writer offered or ended
// first.
var errNotWaiting = errors.New("waitlist entry no longer waiting")

// makeOffer offers e the slot s: the entry records the offer (if it is
// still waiting: errNotWaiting otherwise), the slot is held for e's key
// unless e tells only or the key is at its hold cap, and e's key is told
// with slot.available. The caller holds the barber's lock.
func (wl *Waitlist) makeOffer(ctx context.Context, tx *ent.Tx, e *ent.WaitlistEntry, o *catalog.Offer, s slots.Slot, now time.Time) error {
	// Instants are stored in UTC: SQLite compares them as text.
	s.Start, s.End = s.Start.UTC(), s.End.UTC()
	var holdID *string
	if e.OfferHoldSeconds > 0 {
		atCap, err := wl.b.AtHoldCap(ctx, tx, e.APIKeyID, now)
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
	e.Edges.Unit = o.Unit
	offered := map[string]any{"hold": nil}
	if holdID != nil {
		h, err := wl.b.HoldTime(ctx, tx, tx.Hold.Create().SetID(*holdID).SetAccountID(e.AccountID).SetAPIKeyID(e.APIKeyID).
			SetUnitID(e.UnitID).SetServiceID(e.ServiceID).SetBarberID(s.BarberID).
			SetStartsAt(s.Start).SetEndsAt(s.End).SetExpiresAt(now.Add(time.Duration(e.OfferHoldSeconds)*time.Second)).
			SetWaitlistEntryID(e.ID), o.Buffer())
		if err != nil {
			return err
		}
		h.Edges.Unit = o.Unit
		if offered["hold"], err = view.HoldOf(h); err != nil {
			return err
		}
	}
	entry, err := view.WaitlistEntryOf(e)
	if err != nil {
		return err
	}
	offered["waitlist_entry"], offered["slot"] = entry, view.SlotAt(s.Start, s.End, s.BarberID, o.Loc)
	m, err := json.Marshal(offered)
	if err != nil {
		return err
	}
	return wl.b.Notify(ctx, tx, store.Note{Notification: &ent.Notification{
		ID: notification.DefaultID(), AccountID: e.AccountID, Type: view.SlotAvailable,
		APIKeyID: &e.APIKeyID, Source: notification.SourceAPI,
		CreatedAt: notification.DefaultCreatedAt(),
	}, Offer: m})
}

// Booked records that the offer hold h was booked as appointment
// appointmentID: its entry is booked.
func Booked(ctx context.Context, tx *ent.Tx, h *ent.Hold, appointmentID string) error {
	if h.WaitlistEntryID == nil {
		return nil
	}
	return tx.WaitlistEntry.Update().
		Where(waitlistentry.ID(*h.WaitlistEntryID), waitlistentry.StatusEQ(waitlistentry.StatusOffered)).
		SetStatus(waitlistentry.StatusBooked).SetAppointmentID(appointmentID).Exec(ctx)
}

// Expire records as expired the waiting entries whose last day is
// over, up to limit, and says how many (readers show them expired already).
func (wl *Waitlist) Expire(ctx context.Context, limit int) (int, error) {
	sys := tenant.System(ctx)
	if limit <= 0 {
		limit = domain.JobBatch
	}
	now := wl.b.Now()
	ids, err := wl.db.WaitlistEntry.Query().
		Where(waitlistentry.Waiting(true), waitlistentry.LatestEndLTE(now)).Limit(limit).IDs(sys)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return wl.db.WaitlistEntry.Update().
		Where(waitlistentry.IDIn(ids...), waitlistentry.Waiting(true)).
		SetStatus(waitlistentry.StatusExpired).ClearWaiting().Save(sys)
}

// candidates are a page of the account's waiting entries that may want the
// barber's time freed from from to to as of now, oldest first, after prev
// (nil: from the oldest): those waiting for that barber or any, at one of
// the barber's units for one of its services (the others' catalog lookups
// would only find the barber not eligible), with a key not revoked, whose
// times reach the freed time (timesReach).
func candidates(c *ent.WaitlistEntryClient, dia, accountID, barberID string, from, to, now time.Time, prev *ent.WaitlistEntry) *ent.WaitlistEntryQuery {
	q := c.Query().Where(
		waitlistentry.AccountID(accountID), waitlistentry.Waiting(true), waitlistentry.LatestEndGT(now),
		waitlistentry.Or(waitlistentry.BarberIDIsNil(), waitlistentry.BarberID(barberID)),
		ofBarber(barberID),
		waitlistentry.HasAPIKeyWith(apikey.RevokedAtIsNil()),
		timesReach(dia, from, to))
	if prev != nil {
		q.Where(waitlistentry.Or(waitlistentry.CreatedAtGT(prev.CreatedAt),
			waitlistentry.And(waitlistentry.CreatedAt(prev.CreatedAt), waitlistentry.IDGT(prev.ID))))
	}
	return q.Order(waitlistentry.ByCreatedAt(), waitlistentry.ByID()).Limit(candidatePage)
}

// timesReach selects the entries whose times reach from to to. On
// PostgreSQL that is their span's overlap (store.WaitingSpan), and nothing
// else, so that every plan finds them by the span's index, the generic
// plan a connection keeps included (one that could walk the B-tree of the
// entries by earliest start did, over every entry waiting before the freed
// time); waiting is written out, not bound, so that the plan may use the
// partial index. SQLite compares the times.
func timesReach(dia string, from, to time.Time) predicate.WaitlistEntry {
	if dia != dialect.Postgres {
		return waitlistentry.And(waitlistentry.EarliestStartLT(to), waitlistentry.LatestEndGT(from),
			waitlistentry.Or(waitlistentry.WindowEndIsNil(), waitlistentry.WindowEndGT(from)))
	}
	return func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			b.WriteString("waiting AND " + store.WaitingSpan + " && tstzrange(").Arg(from).WriteString(", ").Arg(to).WriteString(", '[)')")
		}))
	}
}

// ofBarber selects the entries of a barber's units and services: a lookup
// of each assignment's primary key, where ent's edge predicates nest a
// query of units and of services, each through the barbers.
func ofBarber(barberID string) predicate.WaitlistEntry {
	return func(s *sql.Selector) {
		// assigned: a row of table pairs the barber with the entry's entryCol.
		assigned := func(table, barberCol, otherCol, entryCol string) *sql.Predicate {
			t := sql.Table(table)
			return sql.Exists(sql.Select(t.C(barberCol)).From(t).Where(sql.And(
				sql.EQ(t.C(barberCol), barberID), sql.ColumnsEQ(t.C(otherCol), s.C(entryCol)))))
		}
		s.Where(sql.And(
			assigned(unit.BarbersTable, unit.BarbersPrimaryKey[1], unit.BarbersPrimaryKey[0], waitlistentry.FieldUnitID),
			assigned(barber.ServicesTable, barber.ServicesPrimaryKey[0], barber.ServicesPrimaryKey[1], waitlistentry.FieldServiceID)))
	}
}
