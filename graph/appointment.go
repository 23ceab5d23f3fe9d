package graph

import (
	"barberd/graph/catalog"
	"barberd/graph/waitlist"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/barber"
	"barberd/ent/notification"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// loadAppointment returns an appointment with its unit, service and barber
// (loadEdges): what its view needs (the client is recorded on the
// appointment). Errors: appointment_not_found.
func (r *Resolver) loadAppointment(ctx context.Context, c *ent.Client, id string) (*ent.Appointment, error) {
	a, err := c.Appointment.Query().Where(appointment.ID(id)).Only(ctx)
	if err != nil {
		return nil, domain.NotFound(err, domain.CodeAppointmentNotFound, "appointment", id)
	}
	return a, r.loadEdges(ctx, c, a)
}

// loadEdges hangs each appointment's unit, service and barber on it: from
// the catalog cache while it holds them (cachedEdges: no statement), else
// read through c (the client that read the appointments), one statement
// for the units, one for the services and one for the barbers the cache
// did not hold, as ent's eager loading would.
func (r *Resolver) loadEdges(ctx context.Context, c *ent.Client, as ...*ent.Appointment) error {
	missed := slices.DeleteFunc(slices.Clone(as), func(a *ent.Appointment) bool { return r.cachedEdges(ctx, a) })
	if len(missed) == 0 {
		return nil
	}
	ids := func(id func(*ent.Appointment) string) []string {
		out := make([]string, 0, len(missed))
		for _, a := range missed {
			out = append(out, id(a))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	us, err := c.Unit.Query().Where(unit.IDIn(ids(func(a *ent.Appointment) string { return a.UnitID })...)).All(ctx)
	if err != nil {
		return err
	}
	ss, err := c.Service.Query().Where(service.IDIn(ids(func(a *ent.Appointment) string { return a.ServiceID })...)).All(ctx)
	if err != nil {
		return err
	}
	bs, err := c.Barber.Query().Where(barber.IDIn(ids(func(a *ent.Appointment) string { return a.BarberID })...)).All(ctx)
	if err != nil {
		return err
	}
	for _, a := range missed {
		a.Edges.Unit = byID(us, a.UnitID, func(u *ent.Unit) string { return u.ID })
		a.Edges.Service = byID(ss, a.ServiceID, func(s *ent.Service) string { return s.ID })
		a.Edges.Barber = byID(bs, a.BarberID, func(b *ent.Barber) string { return b.ID })
	}
	return nil
}

// byID is the element of xs whose id is id, or nil.
func byID[T any](xs []*T, id string, idOf func(*T) string) *T {
	if i := slices.IndexFunc(xs, func(x *T) bool { return idOf(x) == id }); i >= 0 {
		return xs[i]
	}
	return nil
}

// getAppointment returns one appointment of the caller's account.
// Errors: appointment_not_found.
func (r *Resolver) getAppointment(ctx context.Context, id string) (*ent.Appointment, error) {
	if _, err := domain.Require(ctx, domain.ScopeAppointmentsRead); err != nil {
		return nil, err
	}
	a, err := r.loadAppointment(ctx, r.cfg.DB.Client, id)
	return a, err
}

// inWindow checks the unit's booking window for the offer's start.
// Errors: outside_booking_window.
func (r *Resolver) inWindow(o *catalog.Offer, now time.Time) error {
	err := o.Policy().Admits(now, o.Start, o.Loc)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, slots.ErrInPast):
		return domain.Errorf(domain.CodeOutsideWindow, "%s has already passed.", slots.Local(o.Start, o.Loc))
	case errors.Is(err, slots.ErrTooSoon):
		return domain.Errorf(domain.CodeOutsideWindow, "Bookings must start at least %d minutes from now.", o.Unit.MinLeadMinutes)
	default:
		return domain.Errorf(domain.CodeOutsideWindow, "Bookings can be made at most %d days ahead.", o.Unit.HorizonDays)
	}
}

// pickBarber locks and returns the barber to book the offer with (the one
// asked for, or the first eligible one free then), after checking the slot
// under the lock (see "No double booking" in the package doc); ignore names
// reservations that do not count as busy. The barber outlives tx
// (candidates). Errors: slot_unavailable.
func (r *Resolver) pickBarber(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time, ignore ...string) (*ent.Barber, error) {
	c := tx.Client()
	candidates, err := candidates(ctx, c, o)
	if err != nil {
		return nil, err
	}
	if len(candidates) > 1 {
		// Read first, lock only barbers that look free.
		if candidates, err = r.freeAt(ctx, c, o, now, candidates, ignore...); err != nil {
			return nil, err
		}
	}
	return r.lockedPick(ctx, tx, o, now, candidates, ignore...)
}

// candidates is the offer's candidates (catalog.Offer.Candidates), read
// through c, tx's client, when the offer lists none: those are handed
// back as they would be read after the transaction (Unwrap), so that an
// answer can still load their edges.
func candidates(ctx context.Context, c *ent.Client, o *catalog.Offer) ([]*ent.Barber, error) {
	inTx := o.Barber == nil && o.Eligible == nil
	bs, err := o.Candidates(ctx, c)
	if err != nil || !inTx {
		return bs, err
	}
	for i, b := range bs {
		bs[i] = b.Unwrap()
	}
	return bs, nil
}

// freeAt reads the candidates' start day through c, unlocked
// (catalog.Offer.StartDay; ignore names reservations that do not count as
// busy), and returns those free at the offer's start, in their order.
func (r *Resolver) freeAt(ctx context.Context, c *ent.Client, o *catalog.Offer, now time.Time, candidates []*ent.Barber, ignore ...string) ([]*ent.Barber, error) {
	d, err := o.StartDay(ctx, c, r.cfg.DB.Dialect, now, candidates, ignore...)
	if err != nil {
		return nil, err
	}
	free := map[string]bool{}
	for _, s := range slots.FreeSlots(d) {
		if s.Start.Equal(o.Start) {
			free[s.BarberID] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(candidates), func(b *ent.Barber) bool { return !free[b.ID] }), nil
}

// lockedPick locks the candidates in turn (lockedStart) and returns the
// first free at the offer's start. Errors: slot_unavailable.
func (r *Resolver) lockedPick(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time, candidates []*ent.Barber, ignore ...string) (*ent.Barber, error) {
	for _, b := range candidates {
		free, err := r.lockedStart(ctx, tx, o, b, now, ignore...)
		if err != nil {
			return nil, err
		}
		if free {
			return b, nil
		}
	}
	return nil, domain.Errorf(domain.CodeSlotUnavailable, "The slot is not free.")
}

// pickFree is pickBarber for a writer that books under a guard
// (store.Guarded; PostgreSQL, where writers run side by side): it reads
// the candidates' start day, unlocked (ignore: as pickBarber's), and
// returns the first candidate free then, which outlives tx, as
// pickBarber's; the writer's statement takes the barber's lock (bookFree).
// Errors: slot_unavailable.
func (r *Resolver) pickFree(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time, ignore ...string) (*ent.Barber, error) {
	c := tx.Client()
	candidates, err := candidates(ctx, c, o)
	if err != nil {
		return nil, err
	}
	free, err := r.freeAt(ctx, c, o, now, candidates, ignore...)
	if err != nil {
		return nil, err
	}
	if len(free) > 0 {
		return free[0], nil
	}
	return nil, domain.Errorf(domain.CodeSlotUnavailable, "The slot is not free.")
}

// pick is pickFree for a guarded writer, pickBarber otherwise.
func (r *Resolver) pick(guarded bool) func(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time, ignore ...string) (*ent.Barber, error) {
	if guarded {
		return r.pickFree
	}
	return r.pickBarber
}

// errRelock is what bookFree returns when its write, for any barber, met
// a reservation written since the day was read: the transaction rolls
// back, and the writer books again the locking way (pickBarber), which
// says with which barber, if any, the start is still free.
var errRelock = errors.New("graph: the time was booked since it was read; lock the barber and read again")

// beforeGuardedWriteKey is the context key of a function bookFree calls
// with the barber right before its guarded write (tests book the barber
// in between).
type beforeGuardedWriteKey struct{}

// bookFree writes the offer's start with write (a hold's or an
// appointment's insert, through store.DB.InsertReserved, or a
// reschedule's move, store.RideMove) with barber b: when guarded, b picked
// by pickFree or the barber of held (a hold read by readHold, which the
// statement consumes: store.Guard.Consuming), under the guard of b's lock
// (store.Guarded), recording the expired holds its statement deleted;
// otherwise (b picked by pickBarber, locked, or held's, taken by
// takeHold) as is. A guarded write that meets a reservation written since
// the read fails: with the one barber the offer names, as an overlap (the
// start is taken: the transaction says slot_unavailable), and, for any
// barber, with errRelock (another may be free); one whose hold is no
// longer active, with errRelock too (takeHold then says why).
func (r *Resolver) bookFree(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time, b *ent.Barber, guarded bool, held *ent.Hold, write func(context.Context, *ent.Barber) error) error {
	if !guarded {
		return write(ctx, b)
	}
	if f, ok := ctx.Value(beforeGuardedWriteKey{}).(func(barberID string)); ok {
		f(b.ID)
	}
	gctx, g := store.Guarded(ctx, b.ID, now)
	if held != nil {
		g.Consuming(held.ID)
	}
	if err := write(gctx, b); err != nil {
		if (store.Classify(err) == store.Overlap && o.Barber == nil) || errors.Is(err, store.ErrHoldGone) {
			return errRelock
		}
		return err
	}
	if !g.Used() {
		return errors.New("graph: a guarded write took no lock")
	}
	_, err := r.expiredFreed(ctx, tx, g.Expired())
	return err
}

// lockedStart is a writer's check of the offer's start with barber b: it
// locks b, frees b's holds expired at now (recording them) and reads the
// start's block of b's day (catalog.Offer.LockedDay), and reports whether
// the start is free then; ignore names reservations that do not count as
// busy. The lock holds until tx ends, whatever it reports.
func (r *Resolver) lockedStart(ctx context.Context, tx *ent.Tx, o *catalog.Offer, b *ent.Barber, now time.Time, ignore ...string) (bool, error) {
	d, expired, err := o.LockedDay(ctx, tx, r.cfg.DB, now, b, ignore...)
	if err != nil {
		return false, err
	}
	if _, err := r.expiredFreed(ctx, tx, expired); err != nil {
		return false, err
	}
	return catalog.Offers(d, b.ID, o.Start), nil
}

// loadByReference returns the appointment a key created with an external
// reference, with its unit, service and barber (loadEdges), or nil. Not
// finding one costs one statement.
func (r *Resolver) loadByReference(ctx context.Context, keyID, ref string) (*ent.Appointment, error) {
	a, err := r.cfg.DB.Appointment.Query().
		Where(appointment.APIKeyID(keyID), appointment.ExternalReference(ref)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return a, r.loadEdges(ctx, r.cfg.DB.Client, a)
}

// createAppointment books an appointment, consuming a hold when one is
// given. A repeated external_reference of the same key returns the
// appointment created then, whatever its state now, and creates nothing.
// Errors: validation_failed, unit_not_found, service_not_found,
// barber_not_found, hold_not_found, service_not_bookable,
// barber_not_eligible, invalid_local_time, outside_booking_window,
// slot_unavailable, hold_expired, hold_already_used, hold_mismatch.
// (See "Repeated creates" in the package doc.)
func (r *Resolver) createAppointment(ctx context.Context, in model.CreateAppointmentInput, source appointment.Source) (*model.CreateAppointmentPayload, error) {
	v, err := domain.Require(ctx, domain.ScopeAppointmentsWrite)
	if err != nil {
		return nil, err
	}
	ref := in.ExternalReference
	if ref != nil && *ref == "" {
		ref = nil // refused by the checks, and never stored
	}
	// refused answers a create that failed: with the appointment first
	// created with the reference, if there is one.
	refused := func(err error) (*model.CreateAppointmentPayload, error) {
		if ref != nil {
			if _, ok := domain.AsError(err); ok && domain.ErrorCode(err) != domain.CodeInternal && domain.ErrorCode(err) != domain.CodeUnavailable {
				if a, lerr := r.loadByReference(ctx, v.KeyID, *ref); a != nil || lerr != nil {
					return r.replay(ctx, a, lerr)
				}
			}
		}
		return nil, err
	}
	if err := CheckCreateAppointment(in).Err(); err != nil {
		return refused(err)
	}
	o, err := r.offerAt(ctx, in.UnitID, in.ServiceID, in.BarberID, in.StartsAt)
	if err != nil {
		return refused(err)
	}
	now := r.now()
	if in.HoldID == nil {
		if err := r.inWindow(o, now); err != nil {
			return refused(err)
		}
	}
	var a *ent.Appointment
	// Without a hold, on PostgreSQL, the appointment is written under a
	// guard, as a hold is (holdSlot): its day read unlocked, with the
	// customer's upsert riding in that read, and the barber locked by the
	// statement of its event, which carries the appointment and its
	// reservation.
	attempt := func(guarded bool) func(tx *ent.Tx) error {
		return func(tx *ent.Tx) error {
			a = nil
			// The reference is not looked up first: its unique index
			// refuses a second appointment, and a create refused for any
			// reason looks it up before it says why (refused), so a
			// repeat costs a first create nothing.
			//
			// The customer's record before the barber's lock: in the
			// guarded read's statement or the lock's (PostgreSQL), or
			// alone before a hold is taken.
			given := domain.RecordOf(in.Client)
			ctx, customer := store.RideCustomer(ctx, r.cfg.DB.Dialect, domain.CustomerOf(v.AccountID, given))
			var b *ent.Barber
			var held *ent.Hold
			var err error
			if in.HoldID != nil {
				// Guarded, the upsert rides in the hold's read.
				if !guarded {
					if _, err := customer.ID(ctx, tx); err != nil {
						return err
					}
				}
				held, b, err = r.heldFor(ctx, tx, *in.HoldID, o, now, guarded)
			} else {
				b, err = r.pick(guarded)(ctx, tx, o, now)
			}
			if err != nil {
				return err
			}
			customerID, err := customer.ID(ctx, tx)
			if err != nil {
				return err
			}
			create := tx.Appointment.Create().SetAccountID(v.AccountID).
				SetUnitID(o.Unit.ID).SetServiceID(o.Service.ID).SetBarberID(b.ID).SetCustomerID(customerID).
				SetClientName(given.Name).SetClientPhone(given.Phone).SetNillableClientEmail(given.Email).
				SetAPIKeyID(v.KeyID).SetNillableHoldID(in.HoldID).SetNillableExternalReference(ref).
				SetStartsAt(o.Start).SetEndsAt(o.Start.Add(o.Duration())).SetSource(source)
			// The customer record is left to load when asked for
			// (dashboards only), after the transaction, as a read would
			// show it.
			var created *ent.Appointment
			book := func(ctx context.Context, b *ent.Barber) (err error) {
				created, err = r.bookAppointment(ctx, tx, create, o.Buffer(), ent.AppointmentEdges{Unit: o.Unit, Service: o.Service, Barber: b}, source)
				return err
			}
			if err := r.bookFree(ctx, tx, o, now, b, guarded, held, book); err != nil {
				return err
			}
			a = created
			if held != nil {
				return waitlist.Booked(ctx, tx, held, a.ID)
			}
			return nil
		}
	}
	err = r.guardedTx(ctx, attempt)
	switch {
	case store.Classify(err) == store.Unique && ref != nil:
		// The reference was used before, or by a create that committed
		// first in a race.
		prior, err := r.loadByReference(ctx, v.KeyID, *ref)
		if prior == nil && err == nil {
			err = errors.New("unique violation without a prior appointment")
		}
		return r.replay(ctx, prior, err)
	case domain.ErrorCode(err) == domain.CodeSlotUnavailable:
		if p, perr := refused(err); p != nil || domain.ErrorCode(perr) != domain.CodeSlotUnavailable {
			return p, perr
		}
		return nil, r.unavailable(ctx, o)
	case err != nil:
		return refused(err)
	}
	r.metrics().AppointmentCreated(string(source))
	// The appointment as written, with the edges it was written with (none
	// of them the transaction's): the same as reading it back. Entities of
	// the transaction are handed back to the client, so GraphQL can still
	// load other edges.
	return &model.CreateAppointmentPayload{Appointment: a.Unwrap()}, nil
}

// appointmentCustomer returns the account's customer record an appointment
// links to. Later bookings with the same phone update that record, so only
// dashboards read it; everyone sees the client as booked on the
// appointment itself. Errors: insufficient_scope.
func (r *Resolver) appointmentCustomer(ctx context.Context, a *ent.Appointment) (*ent.Customer, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	c, err := a.Customer(ctx)
	return c, err
}

// replay answers a repeated create with the appointment created first.
func (r *Resolver) replay(ctx context.Context, a *ent.Appointment, err error) (*model.CreateAppointmentPayload, error) {
	if err != nil {
		return nil, err
	}
	if a.Edges.Unit == nil {
		if a, err = r.loadAppointment(ctx, r.cfg.DB.Client, a.ID); err != nil {
			return nil, err
		}
	}
	return &model.CreateAppointmentPayload{Appointment: a, Replayed: true}, nil
}

// cancelAppointment cancels a confirmed appointment that has not started.
// Cancelling a cancelled appointment returns it unchanged and tells nobody.
// Errors: validation_failed, appointment_not_found, appointment_not_cancellable.
func (r *Resolver) cancelAppointment(ctx context.Context, id, reason string, source appointment.Source) (*ent.Appointment, error) {
	v, err := domain.Require(ctx, writeScope(source))
	if err != nil {
		return nil, err
	}
	if err := CheckCancel(reason).Err(); err != nil {
		return nil, err
	}
	now := r.now()
	var done *ent.Appointment // as the notification recorded it
	err = r.inTx(ctx, func(tx *ent.Tx) error {
		done = nil
		ctx, q := r.lockedAppointment(ctx, tx, v, id)
		a, err := q.Only(ctx)
		if err != nil {
			return domain.NotFound(err, domain.CodeAppointmentNotFound, "appointment", id)
		}
		switch {
		case a.Status == appointment.StatusCancelled:
			return nil
		case a.Status != appointment.StatusConfirmed:
			return domain.Errorf(domain.CodeNotCancellable, "The appointment is %s and can no longer be cancelled.", strings.ReplaceAll(string(a.Status), "_", "-"))
		case !a.StartsAt.After(now):
			return domain.Errorf(domain.CodeNotCancellable, "The appointment has already started.")
		}
		done, err = r.endAppointment(ctx, tx, a, appointment.StatusCancelled, strings.TrimSpace(reason), now, notification.Source(source))
		return err
	})
	if err != nil {
		return nil, err
	}
	if done != nil {
		return done.Unwrap(), nil // its edges are not the transaction's
	}
	a, err := r.loadAppointment(ctx, r.cfg.DB.Client, id) // cancelled before
	return a, err
}

// rescheduleAppointment moves a confirmed appointment that has not started
// to another time (and barber), keeping its id. Its own current time does
// not count as busy. Without a barber or hold, the barber stays.
// Errors: validation_failed, appointment_not_found, barber_not_found,
// hold_not_found, barber_not_eligible, service_not_bookable,
// invalid_local_time, outside_booking_window, slot_unavailable,
// hold_expired, hold_already_used, hold_mismatch,
// appointment_not_reschedulable.
func (r *Resolver) rescheduleAppointment(ctx context.Context, id string, in model.RescheduleAppointmentInput, source appointment.Source) (*ent.Appointment, error) {
	v, err := domain.Require(ctx, writeScope(source))
	if err != nil {
		return nil, err
	}
	if err := CheckReschedule(in).Err(); err != nil {
		return nil, err
	}
	now := r.now()
	var o *catalog.Offer
	var done *ent.Appointment // as the notification recorded it
	// Without a hold, on PostgreSQL, the new time is taken under a guard,
	// as a create's (guardedTx): the barber's day read unlocked, the
	// barber locked by the statement of the event, which carries the move.
	attempt := func(guarded bool) func(tx *ent.Tx) error {
		return func(tx *ent.Tx) error {
			done = nil
			// The appointment is read once, under its row lock; its unit
			// and service, which a reschedule keeps, come from the
			// catalog.
			ctx, q := r.lockedAppointment(ctx, tx, v, id)
			a, err := q.Only(ctx)
			if err != nil {
				return domain.NotFound(err, domain.CodeAppointmentNotFound, "appointment", id)
			}
			barberID := in.BarberID
			if barberID == nil && in.HoldID == nil {
				barberID = &a.BarberID
			}
			if o, err = r.offerAt(ctx, a.UnitID, a.ServiceID, barberID, in.StartsAt); err != nil {
				return err
			}
			if a.Status != appointment.StatusConfirmed {
				return domain.Errorf(domain.CodeNotReschedulable, "Only a confirmed appointment can be rescheduled; this one is %s.", a.Status)
			}
			if !a.StartsAt.After(now) {
				return domain.Errorf(domain.CodeNotReschedulable, "The appointment has already started.")
			}
			var b *ent.Barber
			var held *ent.Hold
			if in.HoldID != nil {
				held, b, err = r.heldFor(ctx, tx, *in.HoldID, o, now, guarded)
			} else if err = r.inWindow(o, now); err == nil {
				b, err = r.pick(guarded)(ctx, tx, o, now, a.ID)
			}
			if err != nil {
				return err
			}
			move := func(ctx context.Context, b *ent.Barber) (err error) {
				edges := ent.AppointmentEdges{Unit: o.Unit, Service: o.Service, Barber: b}
				done, err = r.moveAppointment(ctx, tx, a, edges, o.Start, o.Start.Add(o.Duration()), o.Buffer(), in.HoldID, source)
				return err
			}
			err = r.bookFree(ctx, tx, o, now, b, guarded, held, move)
			if err != nil || held == nil {
				return err
			}
			return waitlist.Booked(ctx, tx, held, a.ID)
		}
	}
	err = r.guardedTx(ctx, attempt)
	if domain.ErrorCode(err) == domain.CodeSlotUnavailable {
		return nil, r.unavailable(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	return done.Unwrap(), nil // its edges are not the transaction's
}

// heldFor is the hold id names, taken for the offer (takeHold) or, for a
// guarded writer, read to be consumed by its statement (readHold), with
// its barber (heldBarber).
func (r *Resolver) heldFor(ctx context.Context, tx *ent.Tx, id string, o *catalog.Offer, now time.Time, guarded bool) (*ent.Hold, *ent.Barber, error) {
	take := r.takeHold
	if guarded {
		take = r.readHold
	}
	held, err := take(ctx, tx, id, o, now)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.heldBarber(ctx, tx, o, held)
	return held, b, err
}

// heldBarber returns the barber of a hold taken for the offer, outliving
// tx: the offer's when it names that barber or lists it eligible.
func (r *Resolver) heldBarber(ctx context.Context, tx *ent.Tx, o *catalog.Offer, held *ent.Hold) (*ent.Barber, error) {
	if o.Barber != nil && o.Barber.ID == held.BarberID {
		return o.Barber, nil
	}
	if b := o.EligibleBarber(held.BarberID); b != nil {
		return b, nil
	}
	b, err := tx.Barber.Get(ctx, held.BarberID)
	if err != nil {
		return nil, err
	}
	return b.Unwrap(), nil
}
