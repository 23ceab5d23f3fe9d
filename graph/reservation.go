package graph

import (
	"barberd/graph/catalog"
	"context"
	"errors"
	"time"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/predicate"
	"barberd/ent/schema"
	"barberd/graph/domain"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// Freed is a barber's time that stopped being taken: the span of a
// reservation (the buffer after an appointment included), whose it was
// (the appointment or hold that had it), and why it was freed.
type Freed struct {
	store.Reservation
	Cause FreeCause
}

// FreeCause says why time was freed.
type FreeCause string

// Why time is freed.
const (
	FreedCancelled   FreeCause = "cancelled"   // an appointment cancelled
	FreedRescheduled FreeCause = "rescheduled" // an appointment moved away
	FreedCompleted   FreeCause = "completed"   // marked completed: the rest of its time
	FreedNoShow      FreeCause = "no_show"     // marked no-show: the rest of its time
	FreedReleased    FreeCause = "released"    // a hold released
	FreedExpired     FreeCause = "expired"     // a hold expired
	FreedPruned      FreeCause = "pruned"      // an appointment ended over an hour ago
)

// timeFreed is where every freeing of a barber's time passes, once per
// reservation, in the transaction that frees it, after the change's writes
// (a booking that frees expired holds books after): the hook point of what
// must know "this time became free": the waitlist, which records an opening
// here and offers it after the commit (package waitlist). The
// reservations a statement freed together (a barber's expired holds) pass
// together, and the waitlist probes a barber's in one statement.
func (r *Resolver) timeFreed(ctx context.Context, tx *ent.Tx, rs []store.Reservation, cause FreeCause) error {
	for _, x := range rs {
		observeFreed(ctx, tx, Freed{x, cause})
	}
	if cause == FreedPruned {
		return nil // long past
	}
	for len(rs) > 0 {
		n, first := 1, rs[0]
		for n < len(rs) && rs[n].AccountID == first.AccountID && rs[n].BarberID == first.BarberID {
			n++
		}
		spans := make([]slots.Interval, n)
		for i, x := range rs[:n] {
			spans[i] = slots.Interval{Start: x.StartsAt, End: x.EndsAt}
		}
		if err := r.waitlist.OpenedAll(ctx, tx, first.AccountID, first.BarberID, spans); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return nil
}

// freeProbed is timeFreed of reservations whose freeing statement probed the
// waitlist for their time itself (store.RideFreeing) and wrote the
// opening opened ("": none): timeFreed, that probe for Opened's.
func (r *Resolver) freeProbed(ctx context.Context, tx *ent.Tx, rs []store.Reservation, cause FreeCause, opened string) {
	for _, x := range rs {
		observeFreed(ctx, tx, Freed{x, cause})
	}
	r.waitlist.Probed(ctx, tx, opened)
}

// observeFreed tells f, once tx commits, to ctx's observer of freeings
// (freedObserverKey), if any.
func observeFreed(ctx context.Context, tx *ent.Tx, f Freed) {
	if observe, ok := ctx.Value(freedObserverKey{}).(func(Freed)); ok {
		store.OnCommit(tx, func() { observe(f) })
	}
}

// freedObserverKey is the context key of a function told of each Freed
// once its transaction commits (tests observe the writers with it).
type freedObserverKey struct{}

// bookAppointment writes an appointment, the reservation of its time
// (buffer after it included; one statement with the appointment on
// PostgreSQL, store.DB.InsertReserved) and its appointment.created event.
// The caller checked the slot under the barber's lock; edges are the
// appointment's unit, service and barber, as its view shows them.
func (r *Resolver) bookAppointment(ctx context.Context, tx *ent.Tx, create *ent.AppointmentCreate, buffer time.Duration, edges ent.AppointmentEdges, source appointment.Source) (*ent.Appointment, error) {
	// On PostgreSQL the appointment and its reservation ride in the
	// statement of its event (store.Carry): one round trip fewer while the
	// barber is locked.
	ctx, carried := store.Carry(ctx)
	a, err := insertReserved(ctx, r.cfg.DB, tx, create.Save, func(a *ent.Appointment) store.Reserve {
		return store.Reserve{AccountID: a.AccountID, BarberID: a.BarberID, StartsAt: a.StartsAt,
			EndsAt: a.EndsAt.Add(buffer), AppointmentID: &a.ID}
	})
	if err != nil {
		return nil, err
	}
	a.Edges.Unit, a.Edges.Service, a.Edges.Barber = edges.Unit, edges.Service, edges.Barber
	if err := r.record(ctx, tx, a, domain.EventCreated, notification.Source(source), nil); err != nil {
		return nil, err
	}
	return a, carried.Flush(ctx, tx)
}

// holdTime writes a hold and the reservation of its time, which blocks
// until the hold expires (one statement on PostgreSQL). The caller checked
// the slot under the barber's lock.
func (r *Resolver) holdTime(ctx context.Context, tx *ent.Tx, create *ent.HoldCreate, buffer time.Duration) (*ent.Hold, error) {
	return insertReserved(ctx, r.cfg.DB, tx, create.Save, func(h *ent.Hold) store.Reserve {
		return store.Reserve{AccountID: h.AccountID, BarberID: h.BarberID, StartsAt: h.StartsAt,
			EndsAt: h.EndsAt.Add(buffer), ExpiresAt: &h.ExpiresAt, HoldID: &h.ID}
	})
}

// insertReserved writes a row with save (an ent create's Save) and the
// reservation of its time, reserve (store.DB.InsertReserved).
func insertReserved[T any](ctx context.Context, db *store.DB, tx *ent.Tx, save func(context.Context) (T, error), reserve func(T) store.Reserve) (T, error) {
	var row T
	err := db.InsertReserved(ctx, tx, func(ctx context.Context) (store.Reserve, error) {
		var err error
		if row, err = save(ctx); err != nil {
			return store.Reserve{}, err
		}
		return reserve(row), nil
	})
	return row, err
}

// moveAppointment moves a confirmed appointment, read under its row lock,
// to start (ending at end, plus buffer) with edges.Barber, reminds it again
// before its new time, frees its old time and writes its
// appointment.rescheduled event; holdID, when given, is the hold its new
// time was taken from. It returns the appointment as the event recorded
// it: a, changed as the update changed its row, with edges (the unit,
// service and barber after the move).
func (r *Resolver) moveAppointment(ctx context.Context, tx *ent.Tx, a *ent.Appointment, edges ent.AppointmentEdges, start, end time.Time, buffer time.Duration, holdID *string, source appointment.Source) (*ent.Appointment, error) {
	barberID := edges.Barber.ID
	// On PostgreSQL, the fence held (a reschedule takes it with the
	// appointment's lock), the move of the reservation and the waitlist's
	// probe of the old time ride in the event's statement
	// (store.RideMove); otherwise the move is a statement of its own.
	moved := store.Reserve{AccountID: a.AccountID, BarberID: barberID,
		StartsAt: start, EndsAt: end.Add(buffer), AppointmentID: &a.ID}
	ctx, ride := store.RideMove(ctx, r.cfg.DB.Dialect, moved, r.waitlist.Probe)
	var old []store.Reservation
	if ride == nil {
		var err error
		if old, err = r.cfg.DB.MoveAppointmentReservation(ctx, tx, moved); err != nil {
			return nil, err
		}
	}
	at := schema.Now()
	// On PostgreSQL the update rides in the statement of the event
	// (store.Carry): nothing before it reads the appointment's row.
	ctx, carried := store.Carry(ctx)
	err := r.cfg.DB.CarryExec(ctx, tx.Appointment.Update().Where(appointment.ID(a.ID)).SetBarberID(barberID).
		SetStartsAt(start).SetEndsAt(end).ClearRemindedAt().AddVersion(1).
		SetNillableHoldID(holdID).SetUpdatedAt(at).Exec)
	if err != nil {
		return nil, err
	}
	previous := a.StartsAt
	a.BarberID, a.StartsAt, a.EndsAt, a.RemindedAt, a.UpdatedAt = barberID, start, end, nil, at
	a.Version++
	if holdID != nil {
		a.HoldID = holdID
	}
	a.Edges.Unit, a.Edges.Service, a.Edges.Barber = edges.Unit, edges.Service, edges.Barber
	if err := r.record(ctx, tx, a, domain.EventRescheduled, notification.Source(source), &previous); err != nil {
		return nil, err
	}
	if err := carried.Flush(ctx, tx); err != nil {
		return nil, err
	}
	if ride != nil {
		old, opened, rode := ride.Freed()
		if !rode {
			return nil, errors.New("graph: the reservation's move rode in no statement")
		}
		r.freeProbed(ctx, tx, old, FreedRescheduled, opened)
		return a, nil
	}
	return a, r.timeFreed(ctx, tx, old, FreedRescheduled)
}

// endAppointment records a confirmed appointment, read under its row lock,
// as cancelled (with the reason), completed or no_show, frees its time
// (what is left of it) and writes its event. It returns the appointment as
// the event recorded it: a, changed as the update changed its row, with its
// unit, service and barber.
func (r *Resolver) endAppointment(ctx context.Context, tx *ent.Tx, a *ent.Appointment, status appointment.Status, reason string, now time.Time, source notification.Source) (*ent.Appointment, error) {
	at := schema.Now()
	upd := tx.Appointment.Update().Where(appointment.ID(a.ID)).SetStatus(status).AddVersion(1).SetUpdatedAt(at)
	event, cause := domain.EventCancelled, FreedCancelled
	switch status {
	case appointment.StatusCancelled:
		upd.SetCancelledAt(now).SetCancellationReason(reason)
	case appointment.StatusCompleted:
		event, cause = domain.EventCompleted, FreedCompleted
	default:
		event, cause = domain.EventNoShow, FreedNoShow
	}
	// On PostgreSQL the update rides in the statement of the event
	// (store.Carry): one round trip fewer.
	ctx, carried := store.Carry(ctx)
	if err := r.cfg.DB.CarryExec(ctx, upd.Exec); err != nil {
		return nil, err
	}
	a.Status, a.UpdatedAt = status, at
	a.Version++
	if status == appointment.StatusCancelled {
		a.CancelledAt, a.CancellationReason = &now, &reason
	}
	if err := r.appointmentEdges(ctx, tx, a); err != nil {
		return nil, err
	}
	// The waitlist's fence and the event come before the time is freed:
	// the deletion of the reservation locks the barber's row until the
	// commit (its bookings version), and the writers of that barber wait
	// for it, so the transaction's statements after it are kept to the
	// freeing and the waitlist's probe. On PostgreSQL, with the fence
	// held (a cancel takes it with the appointment's lock), those two ride
	// in the event's statement (store.RideFreeing): none after it.
	if a.EndsAt.After(now) { // past time: no probe, no fence
		var err error
		if ctx, err = r.cfg.DB.FenceWaitlist(ctx, tx, a.AccountID); err != nil {
			return nil, err
		}
	}
	ctx, ride := store.RideFreeing(ctx, r.cfg.DB.Dialect, a.AccountID, a.ID, r.waitlist.Probe)
	if err := r.record(ctx, tx, a, event, source, nil); err != nil {
		return nil, err
	}
	if err := carried.Flush(ctx, tx); err != nil {
		return nil, err
	}
	if rs, opened, rode := ride.Freed(); rode {
		r.freeProbed(ctx, tx, rs, cause, opened)
		return a, nil
	}
	rs, err := store.DeleteAppointmentReservation(ctx, tx, a.ID)
	if err != nil {
		return nil, err
	}
	return a, r.timeFreed(ctx, tx, rs, cause)
}

// appointmentEdges hangs an appointment's unit, service and barber on it,
// none of them the transaction's: from the catalog cache (cachedEdges),
// else read in tx. A unit already hung on it (markAppointment's) is kept.
func (r *Resolver) appointmentEdges(ctx context.Context, tx *ent.Tx, a *ent.Appointment) error {
	e := &a.Edges
	if e.Unit != nil && e.Service != nil && e.Barber != nil || r.cachedEdges(ctx, a) {
		return nil
	}
	// Read in tx, then handed back to the client: the caller's answer
	// outlives the transaction, and the cache's never belonged to one.
	if e.Unit == nil {
		u, err := tx.Unit.Get(ctx, a.UnitID)
		if err != nil {
			return err
		}
		e.Unit = u.Unwrap()
	}
	s, err := tx.Service.Get(ctx, a.ServiceID)
	if err != nil {
		return err
	}
	b, err := tx.Barber.Get(ctx, a.BarberID)
	if err != nil {
		return err
	}
	e.Service, e.Barber = s.Unwrap(), b.Unwrap()
	return nil
}

// cachedEdges hangs an appointment's unit (unless one is hung on it
// already), service and barber on it from the catalog cache, and reports
// whether it could: while the account's configuration is what the cache
// read, for the caller's account, an entry of the unit and service with
// the barber, or with the barber eligible, holds what a read would find
// (no statement). None of them is a transaction's.
func (r *Resolver) cachedEdges(ctx context.Context, a *ent.Appointment) bool {
	v, ok := domain.ViewerFrom(ctx)
	if !ok || v.AccountID != a.AccountID {
		return false
	}
	e := &a.Edges
	hang := func(o *catalog.Offer, b *ent.Barber) bool {
		if e.Unit == nil {
			e.Unit = o.Unit
		}
		e.Service, e.Barber = o.Service, b
		return true
	}
	if o, hit := r.cache.cachedCatalog(v, catalog.NewKey(a.AccountID, a.UnitID, a.ServiceID, &a.BarberID), false); hit {
		return hang(o, o.Barber)
	}
	if o, hit := r.cache.cachedCatalog(v, catalog.NewKey(a.AccountID, a.UnitID, a.ServiceID, nil), false); hit {
		if b := o.EligibleBarber(a.BarberID); b != nil {
			return hang(o, b)
		}
	}
	return false
}

// endHold records an active hold as released, which frees its time, or as
// consumed, whose time passes to the appointment the caller writes in the
// same transaction. The caller holds the barber's lock.
func (r *Resolver) endHold(ctx context.Context, tx *ent.Tx, h *ent.Hold, status hold.Status) error {
	if err := tx.Hold.Update().Where(hold.ID(h.ID)).SetStatus(status).Exec(ctx); err != nil {
		return err
	}
	rs, err := store.DeleteHoldReservation(ctx, tx, h.ID)
	if err != nil || status == hold.StatusConsumed {
		return err
	}
	return r.timeFreed(ctx, tx, rs, FreedReleased)
}

// freeExpiredHolds frees the time of a barber's holds expired at now,
// records them expired and says how many. Readers ignore them already; this
// lets a new reservation take their place without tripping the no-overlap
// constraint, and tells timeFreed. The caller holds the barber's lock.
// Nothing expired costs one statement.
func (r *Resolver) freeExpiredHolds(ctx context.Context, tx *ent.Tx, barberID string, now time.Time) (int, error) {
	rs, err := store.DeleteExpiredReservations(ctx, tx, barberID, now)
	if err != nil {
		return 0, err
	}
	return r.expiredFreed(ctx, tx, rs)
}

// expiredFreed records the holds whose reservations, expired, were deleted
// as expired, tells timeFreed and says how many holds it recorded.
func (r *Resolver) expiredFreed(ctx context.Context, tx *ent.Tx, rs []store.Reservation) (int, error) {
	if len(rs) == 0 {
		return 0, nil
	}
	var ids []string
	for _, x := range rs {
		if x.HoldID != nil {
			ids = append(ids, *x.HoldID)
		}
	}
	n, err := expireHolds(ctx, tx, hold.IDIn(ids...))
	if err != nil {
		return 0, err
	}
	return n, r.timeFreed(ctx, tx, rs, FreedExpired)
}

// expireHolds records the active holds that match as expired, and says how
// many it recorded.
func expireHolds(ctx context.Context, tx *ent.Tx, which ...predicate.Hold) (int, error) {
	return tx.Hold.Update().Where(append(which, hold.StatusEQ(hold.StatusActive))...).
		SetStatus(hold.StatusExpired).Save(ctx)
}

// freeEnded removes a barber's reservations of appointments that ended
// before the given instant and says how many; the caller holds the
// barber's lock.
func (r *Resolver) freeEnded(ctx context.Context, tx *ent.Tx, barberID string, before time.Time) (int, error) {
	rs, err := store.DeleteEndedReservations(ctx, tx, barberID, before)
	if err != nil {
		return 0, err
	}
	return len(rs), r.timeFreed(ctx, tx, rs, FreedPruned)
}
