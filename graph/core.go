package graph

import (
	"context"
	"time"

	"barberd/ent"
	"barberd/ent/hold"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/metrics"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
)

// core is the booking core as the packages beside graph reach it
// (admin.Booking, waitlist.Booking): they change reservations only
// through it.
type core struct{ r *Resolver }

func (c core) InTx(ctx context.Context, fn func(*ent.Tx) error) error { return c.r.inTx(ctx, fn) }

func (c core) Now() time.Time { return c.r.now() }

func (c core) Metrics() metrics.Events { return c.r.metrics() }

func (c core) Offer(ctx context.Context, unitID, serviceID string, barberID *string) (*catalog.Offer, error) {
	return c.r.resolveCatalog(ctx, unitID, serviceID, barberID)
}

func (c core) CachedOffer(v *domain.Viewer, key catalog.Key) (*catalog.Offer, bool) {
	return c.r.cache.cachedCatalog(v, key, true)
}

func (c core) KeepOffer(key catalog.Key, e *catalog.Entry) { c.r.cache.catalogs.Put(key, e) }

func (c core) FreeStarts(ctx context.Context, unitID, serviceID string, barberID *string, dates []slots.Date, from, to, limit int) ([]*model.Slot, error) {
	if len(dates) == 0 {
		return nil, nil
	}
	// A join needs no availability:read: the key asks to wait, not to see.
	days, err := c.r.availabilityOf(ctx, domain.ScopeAppointmentsWrite, unitID, serviceID, barberID, dates, nil)
	if err != nil {
		return nil, err
	}
	var out []*model.Slot
	now := c.r.now()
	for _, d := range days {
		out = d.AppendNext(out, barberID, now, from, to, limit)
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

func (c core) LockStart(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time) (bool, error) {
	if f, ok := ctx.Value(beforeLockStartKey{}).(func(*ent.Tx, *catalog.Offer)); ok {
		f(tx, o)
	}
	return c.r.lockedStart(ctx, tx, o, o.Barber, now)
}

// beforeLockStartKey is the context key of a function an offer pass calls
// in its transaction right before it locks the barber to check the start
// it found (tests book the start in between).
type beforeLockStartKey struct{}

func (c core) AtHoldCap(ctx context.Context, tx *ent.Tx, keyID string, now time.Time) (bool, error) {
	kh, err := store.CountKeyHolds(ctx, tx, keyID, c.r.cfg.Limits.ActiveHoldsPerKey, now)
	if err != nil {
		return false, err
	}
	most := c.r.capOf(kh.Cap)
	return most > 0 && kh.Active >= most, nil
}

func (c core) HoldTime(ctx context.Context, tx *ent.Tx, create *ent.HoldCreate, buffer time.Duration) (*ent.Hold, error) {
	return c.r.holdTime(ctx, tx, create, buffer)
}

func (c core) ReleaseHold(ctx context.Context, tx *ent.Tx, id string) error {
	h, err := c.r.lockHold(ctx, tx, id)
	if domain.ErrorCode(err) == domain.CodeHoldNotFound {
		return nil // pruned long ago
	}
	if err != nil || effectiveStatus(h, c.r.now()) != hold.StatusActive {
		return err
	}
	return c.r.endHold(ctx, tx, h, hold.StatusReleased)
}

func (c core) Notify(ctx context.Context, tx *ent.Tx, n store.Note) error {
	return c.r.notify(ctx, tx, n)
}

func (c core) Opened(ctx context.Context, tx *ent.Tx, accountID, barberID string, start, end time.Time) error {
	return c.r.waitlist.Opened(ctx, tx, accountID, barberID, start, end)
}

func (c core) OpenedHorizon(ctx context.Context, tx *ent.Tx, accountID, barberID string) error {
	return c.r.waitlist.OpenedHorizon(ctx, tx, accountID, barberID)
}

func (c core) CreateAPIKey(ctx context.Context, accountID, name string, scopes []string, maxHolds *int) (string, *ent.APIKey, error) {
	return c.r.CreateAPIKeyWithCap(ctx, accountID, name, scopes, maxHolds)
}
