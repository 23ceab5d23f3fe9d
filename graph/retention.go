package graph

import (
	"context"
	"fmt"
	"time"

	"barberd/ent"
	"barberd/ent/delivery"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/schema/pulid"
	"barberd/ent/schema/tenant"
	"barberd/ent/waitlistentry"
	"barberd/ent/webhookdelivery"
	"barberd/graph/domain"
)

// Retention: what barberd keeps only for a while (docs/operations.md,
// "Retention" says what goes when), deleted in short batches.

// DefaultRetention is how long notifications, webhook deliveries, ended
// holds and ended waitlist entries are kept: 30 days.
const DefaultRetention = 30 * 24 * time.Hour

// MinRetention is the shortest retention: past the day of a webhook
// delivery's retries, with a day to spare for a redelivery.
const MinRetention = 48 * time.Hour

// pruneBatches is how many batches one run of a prune job deletes at most.
const pruneBatches = 100

// PruneNotifications deletes the notifications made before the given
// instant, with their feed rows, webhook deliveries and attempts, in
// batches of up to limit notifications, and returns how many notifications
// it deleted.
func (r *Resolver) PruneNotifications(ctx context.Context, before time.Time, limit int) (int, error) {
	// Notification ids are ULIDs, which sort by when they were made (the
	// wall clock, as their created_at): the primary key finds the old ones,
	// with no index of its own.
	beforeID := pulid.Before("ntf", before)
	return r.pruneBatches(ctx, "prune notifications", limit, func(tx *ent.Tx, sys context.Context, limit int) (int, error) {
		ids, err := tx.Notification.Query().Where(notification.IDLT(beforeID)).
			Order(notification.ByID()).Limit(limit).IDs(sys)
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		// The attempts go with their deliveries (ON DELETE CASCADE).
		if _, err := tx.WebhookDelivery.Delete().Where(webhookdelivery.NotificationIDIn(ids...)).Exec(sys); err != nil {
			return 0, err
		}
		if _, err := tx.Delivery.Delete().Where(delivery.NotificationIDIn(ids...)).Exec(sys); err != nil {
			return 0, err
		}
		return tx.Notification.Delete().Where(notification.IDIn(ids...)).Exec(sys)
	})
}

// endedHolds are the statuses of holds that no longer hold anything.
var endedHolds = []hold.Status{hold.StatusReleased, hold.StatusExpired, hold.StatusConsumed}

// PruneHolds deletes the holds that ended and expired before the given
// instant, in batches of up to limit, and returns how many it deleted. The
// appointments booked with them lose their hold_id (ON DELETE SET NULL);
// an ended hold has no reservation left.
func (r *Resolver) PruneHolds(ctx context.Context, before time.Time, limit int) (int, error) {
	return r.pruneBatches(ctx, "prune holds", limit, func(tx *ent.Tx, sys context.Context, limit int) (int, error) {
		ids, err := tx.Hold.Query().Where(hold.StatusIn(endedHolds...), hold.ExpiresAtLT(before)).
			Limit(limit).IDs(sys)
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		return tx.Hold.Delete().Where(hold.IDIn(ids...), hold.StatusIn(endedHolds...)).Exec(sys)
	})
}

// PruneWaitlist deletes the waitlist entries that ended (offered, booked,
// cancelled or expired) and whose last day was over before the given
// instant, in batches of up to limit, and returns how many it deleted.
func (r *Resolver) PruneWaitlist(ctx context.Context, before time.Time, limit int) (int, error) {
	return r.pruneBatches(ctx, "prune waitlist", limit, func(tx *ent.Tx, sys context.Context, limit int) (int, error) {
		ids, err := tx.WaitlistEntry.Query().Where(waitlistentry.WaitingIsNil(), waitlistentry.LatestEndLT(before)).
			Limit(limit).IDs(sys)
		if err != nil || len(ids) == 0 {
			return 0, err
		}
		return tx.WaitlistEntry.Delete().Where(waitlistentry.IDIn(ids...), waitlistentry.WaitingIsNil()).Exec(sys)
	})
}

// pruneBatches runs batch, each in a transaction of its own, until one
// deletes fewer than limit rows, ctx ends, or pruneBatches ran; it returns
// how many rows they deleted.
func (r *Resolver) pruneBatches(ctx context.Context, job string, limit int, batch func(tx *ent.Tx, sys context.Context, limit int) (int, error)) (int, error) {
	if limit <= 0 {
		limit = domain.JobBatch
	}
	sys := tenant.System(ctx)
	total := 0
	for range pruneBatches {
		var n int
		err := r.inTx(sys, func(tx *ent.Tx) error {
			var err error
			n, err = batch(tx, sys, limit)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("%s: %w", job, err)
		}
		total += n
		if n < limit || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
	return total, nil
}
