package graph

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"barberd/ent"
	"barberd/ent/hold"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// effectiveStatus is a hold's status at instant now: an active hold past its
// expiry is expired, whether or not a writer has recorded it yet.
func effectiveStatus(h *ent.Hold, now time.Time) hold.Status {
	if h.Status == hold.StatusActive && !now.Before(h.ExpiresAt) {
		return hold.StatusExpired
	}
	return h.Status
}

// loadHold returns a hold with its unit, its status as of now.
// Errors: hold_not_found.
func (r *Resolver) loadHold(ctx context.Context, id string) (*ent.Hold, error) {
	if !domain.PlausibleID(id) {
		return nil, domain.Errorf(domain.CodeHoldNotFound, "No hold %q.", id)
	}
	h, err := r.cfg.DB.Hold.Query().Where(hold.ID(id)).WithUnit().Only(ctx)
	if err != nil {
		return nil, domain.NotFound(err, domain.CodeHoldNotFound, "hold", id)
	}
	h.Status = effectiveStatus(h, r.now())
	return h, nil
}

// holdSlot keeps a slot for a while; without a barber, the first eligible
// barber free then is chosen.
// Errors: validation_failed, unit_not_found, service_not_found,
// barber_not_found, service_not_bookable, barber_not_eligible,
// invalid_local_time, outside_booking_window, too_many_holds,
// slot_unavailable.
func (r *Resolver) holdSlot(ctx context.Context, in model.HoldSlotInput) (*ent.Hold, error) {
	v, err := domain.Require(ctx, domain.ScopeHoldsWrite)
	if err != nil {
		return nil, err
	}
	if err := r.CheckHoldSlot(in).Err(); err != nil {
		return nil, err
	}
	o, err := r.offerAt(ctx, in.UnitID, in.ServiceID, in.BarberID, in.StartsAt)
	if err != nil {
		return nil, err
	}
	now := r.now()
	if err := r.inWindow(o, now); err != nil {
		return nil, err
	}
	ttl := r.cfg.Limits.HoldTTLDefault
	if in.TTLSeconds != nil {
		ttl = time.Duration(*in.TTLSeconds) * time.Second
	}
	// On PostgreSQL the hold is written under a guard (guardedTx): its day
	// read unlocked (pickFree), and the barber locked by the insert's
	// statement (bookFree). Elsewhere writes are serial, and the barber's
	// day is read under the write lock (pickBarber).
	var h *ent.Hold
	attempt := func(guarded bool) func(tx *ent.Tx) error {
		return func(tx *ent.Tx) error {
			h = nil
			ctx := ctx
			var ride *store.KeyHoldsRide // the count riding in the barber's lock or day
			if r.capOf(v.MaxActiveHolds) > 0 {
				// In the lock's statement, or a guarded hold's read's.
				if ctx, ride = store.RideKeyHolds(ctx, r.cfg.DB.Dialect, v.KeyID, r.cfg.Limits.ActiveHoldsPerKey, now); !ride.Riding() {
					ride = nil
					if err := r.checkHoldCap(ctx, tx, v.KeyID, now); err != nil {
						return err
					}
				}
			}
			b, err := r.pick(guarded)(ctx, tx, o, now)
			if ride != nil {
				// The cap before anything else: counted with the lock or the
				// read, or, where none counted it (the hold refused before
				// any), now.
				var cerr error
				if kh, counted := ride.Counted(); counted {
					cerr = r.judgeHoldCap(ctx, tx, v.KeyID, kh, now)
				} else {
					cerr = r.checkHoldCap(ctx, tx, v.KeyID, now)
				}
				if cerr != nil {
					return cerr
				}
			}
			if err != nil {
				return err
			}
			var created *ent.Hold
			write := func(ctx context.Context, b *ent.Barber) (err error) {
				created, err = r.holdTime(ctx, tx, tx.Hold.Create().SetAccountID(v.AccountID).SetAPIKeyID(v.KeyID).
					SetUnitID(o.Unit.ID).SetServiceID(o.Service.ID).SetBarberID(b.ID).
					SetStartsAt(o.Start).SetEndsAt(o.Start.Add(o.Duration())).SetExpiresAt(now.Add(ttl)), o.Buffer())
				return err
			}
			err = r.bookFree(ctx, tx, o, now, b, guarded, nil, write)
			if err != nil {
				return err
			}
			h = created
			return nil
		}
	}
	// The COMMIT of a capped key's hold on PostgreSQL counts the key's
	// holds again, under its lock (store.OverKeyCap). Refused, the hold is
	// tried again: its first count, which now sees the holds that
	// committed first, refuses it (too_many_holds) or, should some have
	// ended meanwhile, writes it.
	for try := 1; ; try++ {
		err = r.guardedTx(ctx, attempt)
		if !store.OverKeyCap(err) {
			break
		}
		if try == maxCapTries {
			return nil, domain.Errorf(domain.CodeUnavailable, "Other holds of this API key kept taking the last of its active holds as this one was written; try again.")
		}
	}
	if domain.ErrorCode(err) == domain.CodeSlotUnavailable {
		return nil, r.unavailable(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	r.metrics().HoldCreated()
	// The hold as written, as loadHold would read it back; handed back to
	// the client, so GraphQL can still load its edges.
	h = h.Unwrap()
	h.Edges.Unit = o.Unit
	h.Status = effectiveStatus(h, r.now())
	return h, nil
}

// holdCap is the most active holds key may have: its own cap, or the
// server's default without one; 0: no cap.
func (r *Resolver) holdCap(k *ent.APIKey) int { return r.capOf(k.MaxActiveHolds) }

// capOf is holdCap of a key whose own cap is keyCap (nil: none).
func (r *Resolver) capOf(keyCap *int) int {
	if keyCap != nil {
		return *keyCap
	}
	return r.cfg.Limits.ActiveHoldsPerKey
}

// activeHoldsOf queries the holds of a key that are active at now.
func activeHoldsOf(c *ent.HoldClient, keyID string, now time.Time) *ent.HoldQuery {
	return c.Query().Where(hold.APIKeyID(keyID), hold.StatusEQ(hold.StatusActive), hold.ExpiresAtGT(now))
}

// maxCapTries bounds the tries of a hold whose COMMIT its key's cap
// refused while the first count let it through (holdSlot).
const maxCapTries = 3

// checkHoldCap refuses another hold when the key (one with a cap, as its
// viewer read it) has the most active holds it may, before the hold is
// written, unlocked, in one statement: a key at its cap is refused at
// once. On PostgreSQL that count rides in the statement of the barber's
// lock, or in a guarded hold's read (store.RideKeyHolds), which takes no
// lock for a key at its cap and asks the hold's COMMIT to count again,
// exactly, under the key's row lock (store.OverKeyCap). Locking last keeps
// the key's holds from queueing behind one another's barber work, and
// locking in COMMIT holds the lock for the least time: taken in the
// insert's statement (a WITH), the lock came before the inserts and their
// triggers ran, and a key's concurrent holds were 5% slower for the round
// trip saved (BenchmarkHoldSlotCapped, 2026-11-29); in a statement of its
// own after the insert, it cost a round trip, and held the lock for it.
// SQLite writes serially: the first check is exact. Errors:
// too_many_holds.
func (r *Resolver) checkHoldCap(ctx context.Context, tx *ent.Tx, keyID string, now time.Time) error {
	kh, err := store.CountKeyHolds(ctx, tx, keyID, r.cfg.Limits.ActiveHoldsPerKey, now)
	if err != nil {
		return err
	}
	return r.judgeHoldCap(ctx, tx, keyID, kh, now)
}

// judgeHoldCap is checkHoldCap of the key's count kh.
func (r *Resolver) judgeHoldCap(ctx context.Context, tx *ent.Tx, keyID string, kh store.KeyHolds, now time.Time) error {
	most, n := r.capOf(kh.Cap), kh.Active
	if most <= 0 || n < most {
		return nil
	}
	oldest, err := activeHoldsOf(tx.Hold, keyID, now).Order(hold.ByCreatedAt(), hold.ByID()).First(ctx)
	if err != nil {
		return err
	}
	e := domain.Errorf(domain.CodeTooManyHolds, "This API key already holds %d slots, the most it may hold at once: release a hold (the oldest, %s, expires at %s) or use one in a booking, then hold again.",
		n, oldest.ID, slots.UTC(oldest.ExpiresAt))
	e.HoldCap = &domain.HoldCap{Active: n, Max: most, OldestHoldID: oldest.ID, OldestExpiresAt: oldest.ExpiresAt}
	return e
}

// releaseHold frees an active hold at once; releasing a released hold again
// changes nothing.
// Errors: hold_not_found, hold_already_used, hold_expired.
func (r *Resolver) releaseHold(ctx context.Context, id string) (*ent.Hold, error) {
	if _, err := domain.Require(ctx, domain.ScopeHoldsWrite); err != nil {
		return nil, err
	}
	now := r.now()
	err := r.inTx(ctx, func(tx *ent.Tx) error {
		h, err := r.lockHold(ctx, tx, id)
		if err != nil {
			return err
		}
		switch effectiveStatus(h, now) {
		case hold.StatusReleased:
			return nil
		case hold.StatusConsumed:
			return domain.Errorf(domain.CodeHoldAlreadyUsed, "The hold was already used for an appointment.")
		case hold.StatusExpired:
			return domain.Errorf(domain.CodeHoldExpired, "The hold has expired.")
		}
		return r.endHold(ctx, tx, h, hold.StatusReleased)
	})
	if err != nil {
		return nil, err
	}
	return r.loadHold(ctx, id)
}

// releaseAllHolds frees every active hold of the calling key in one
// transaction, locking their barbers in one order, and says how many.
func (r *Resolver) releaseAllHolds(ctx context.Context) (int, error) {
	v, err := domain.Require(ctx, domain.ScopeHoldsWrite)
	if err != nil {
		return 0, err
	}
	now := r.now()
	released := 0
	err = r.inTx(ctx, func(tx *ent.Tx) error {
		released = 0
		hs, err := activeHoldsOf(tx.Hold, v.KeyID, now).Order(hold.ByBarberID(), hold.ByID()).
			Select(hold.FieldID).All(ctx)
		if err != nil {
			return err
		}
		for _, h := range hs {
			if h, err = r.lockHold(ctx, tx, h.ID); err != nil {
				return err
			}
			if effectiveStatus(h, now) != hold.StatusActive {
				continue // used or released meanwhile
			}
			if err := r.endHold(ctx, tx, h, hold.StatusReleased); err != nil {
				return err
			}
			released++
		}
		return nil
	})
	return released, err
}

// getHold reads a hold, unlocked, in one statement with a create's
// customer riding on ctx (store.ReadHold). Errors: hold_not_found.
func getHold(ctx context.Context, tx *ent.Tx, id string) (*ent.Hold, error) {
	notFound := domain.Errorf(domain.CodeHoldNotFound, "No hold %q.", id)
	if !domain.PlausibleID(id) {
		return nil, notFound
	}
	h, err := store.ReadHold(ctx, tx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	}
	return h, err
}

// lockHold reads a hold after locking its barber, under whose lock every
// change to the barber's holds and reservations happens.
// Errors: hold_not_found.
func (r *Resolver) lockHold(ctx context.Context, tx *ent.Tx, id string) (*ent.Hold, error) {
	h, err := getHold(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := r.lockBarber(ctx, tx, h.BarberID); err != nil {
		return nil, err
	}
	return tx.Hold.Get(ctx, id) // again, now that no writer can change it
}

// takeHold consumes an active hold that matches the offer and frees its
// reservation for the appointment that replaces it. It returns the hold.
// Errors: hold_not_found, hold_expired, hold_already_used,
// hold_mismatch, outside_booking_window.
func (r *Resolver) takeHold(ctx context.Context, tx *ent.Tx, id string, o *catalog.Offer, now time.Time) (*ent.Hold, error) {
	h, err := r.lockHold(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := usableHold(h, o, now); err != nil {
		return nil, err
	}
	return h, r.endHold(ctx, tx, h, hold.StatusConsumed)
}

// readHold is takeHold for a guarded writer (bookFree): it reads the hold
// unlocked (getHold, with a create's customer riding) and checks it as
// takeHold does; the writer's statement consumes it under the barber's
// lock (store.Guard.Consuming), should it still be active then. What the
// read finds wrong stays wrong: a hold only ever leaves active, and its
// barber, service and time never change.
func (r *Resolver) readHold(ctx context.Context, tx *ent.Tx, id string, o *catalog.Offer, now time.Time) (*ent.Hold, error) {
	h, err := getHold(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	return h, usableHold(h, o, now)
}

// usableHold checks that h is active at now and matches the offer.
// Errors: hold_expired, hold_already_used, hold_mismatch,
// outside_booking_window.
func usableHold(h *ent.Hold, o *catalog.Offer, now time.Time) error {
	switch effectiveStatus(h, now) {
	case hold.StatusConsumed:
		return domain.Errorf(domain.CodeHoldAlreadyUsed, "The hold was already used for an appointment.")
	case hold.StatusReleased:
		return domain.Errorf(domain.CodeHoldExpired, "The hold was released.")
	case hold.StatusExpired:
		return domain.Errorf(domain.CodeHoldExpired, "The hold has expired; hold the slot again or book without a hold.")
	}
	if h.UnitID != o.Unit.ID || h.ServiceID != o.Service.ID || !h.StartsAt.Equal(o.Start) ||
		(o.Barber != nil && h.BarberID != o.Barber.ID) {
		return domain.Errorf(domain.CodeHoldMismatch, "The hold is for another unit, service, barber or time than this request.")
	}
	// A hold keeps its slot even if the lead time has passed meanwhile, but
	// a slot in the past cannot be booked.
	if !o.Start.After(now) {
		return domain.Errorf(domain.CodeOutsideWindow, "The held time has already passed.")
	}
	return nil
}
