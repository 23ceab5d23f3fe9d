package graph

import (
	"context"

	"barberd/graph/domain"

	"barberd/graph/model"
)

// bookingContext describes the calling key, its account and its limits.
func (r *Resolver) bookingContext(ctx context.Context) (*model.BookingContext, error) {
	v, err := domain.Require(ctx, domain.ScopeContextRead)
	if err != nil {
		return nil, err
	}
	acc, err := r.cfg.DB.Account.Get(ctx, v.AccountID)
	if err != nil {
		return nil, err
	}
	key, err := r.cfg.DB.APIKey.Get(ctx, v.KeyID)
	if err != nil {
		return nil, err
	}
	active, err := activeHoldsOf(r.cfg.DB.Hold, v.KeyID, r.now()).Count(ctx)
	if err != nil {
		return nil, err
	}
	l := r.cfg.Limits
	var holdsMax *int
	if most := r.holdCap(key); most > 0 {
		holdsMax = &most
	}
	return &model.BookingContext{
		Account:    acc,
		APIKey:     key,
		ServerTime: r.now(),
		Limits: &model.Limits{
			HoldTTLDefaultSeconds:     int(l.HoldTTLDefault.Seconds()),
			HoldTTLMinSeconds:         int(l.HoldTTLMin.Seconds()),
			HoldTTLMaxSeconds:         int(l.HoldTTLMax.Seconds()),
			NotificationsLimitDefault: l.NotificationsDefault,
			NotificationsLimitMax:     l.NotificationsMax,
			ActiveHoldsMax:            holdsMax,
			ActiveHolds:               active,
		},
	}, nil
}
