package graph

import (
	"context"
	"fmt"
	"sync"
	"time"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/ent/notification"
	"barberd/ent/predicate"
	"barberd/ent/reservation"
	"barberd/ent/schema"
	"barberd/ent/schema/tenant"
	"barberd/graph/periodic"
	"barberd/graph/store"
)

// Background jobs. Every replica runs them at once (architecture.md,
// "Scale"), so each takes the same locks as the booking writers it races
// with, and none of them needs to be the only one running.

// ExpireHolds frees the time of expired holds and marks them expired, in
// rounds of up to limit (see "Jobs" in the package doc), and returns how
// many it expired. Readers ignore expired holds already; this write is what
// tells timeFreed, within a second when RunJobs runs it.
func (r *Resolver) ExpireHolds(ctx context.Context, limit int) (int, error) {
	sys := tenant.System(ctx)
	now := r.now()
	due := func(limit int) ([]string, error) {
		return r.cfg.DB.Hold.Query().
			Where(hold.StatusEQ(hold.StatusActive), hold.ExpiresAtLTE(now)).
			Order(hold.ByExpiresAt(), hold.ByID()).Limit(limit).
			Select(hold.FieldBarberID).Strings(sys)
	}
	return r.perBarber(sys, "expire holds", limit, due, func(tx *ent.Tx, barberID string) (int, error) {
		freed, err := r.freeExpiredHolds(sys, tx, barberID, now)
		if err != nil {
			return 0, err
		}
		// A due hold that had somehow lost its reservation is expired too.
		lost, err := expireHolds(sys, tx, hold.BarberID(barberID), hold.ExpiresAtLTE(now))
		store.OnCommit(tx, func() { r.metrics().HoldsExpired(freed + lost) })
		return freed + lost, err
	})
}

// perBarber runs a background job in rounds: due lists the barbers of up to
// limit due rows (one entry per row), and each handles every due row of one
// barber, in a transaction under the barber's lock, and says how many it
// handled (none when another process got there first). Each round thus
// leaves none of its barbers' rows due, so the rounds end; a short round
// was the last.
func (r *Resolver) perBarber(ctx context.Context, job string, limit int, due func(limit int) ([]string, error), each func(tx *ent.Tx, barberID string) (int, error)) (int, error) {
	if limit <= 0 {
		limit = domain.JobBatch
	}
	total := 0
	for {
		batch, err := due(limit)
		if err != nil {
			return total, fmt.Errorf("%s: %w", job, err)
		}
		seen := map[string]bool{}
		for _, b := range batch {
			if seen[b] {
				continue
			}
			seen[b] = true
			var n int
			err := r.inTx(ctx, func(tx *ent.Tx) error {
				if err := r.lockBarber(ctx, tx, b); err != nil {
					return err
				}
				var err error
				n, err = each(tx, b)
				return err
			})
			if err != nil {
				return total, fmt.Errorf("%s of barber %s: %w", job, b, err)
			}
			total += n
		}
		if len(batch) < limit || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

// pruneAfter is how long after its appointment ends a reservation is kept.
// Nothing is ever booked before now, so an ended reservation blocks nothing;
// the hour only allows for replicas' clocks that disagree.
const pruneAfter = time.Hour

// PruneReservations removes the reservations of appointments that ended
// more than pruneAfter ago, which SQLite's span reads would otherwise walk
// for ever, in rounds of up to limit, and returns how many it removed. The
// appointments stay as they are.
func (r *Resolver) PruneReservations(ctx context.Context, limit int) (int, error) {
	sys := tenant.System(ctx)
	before := r.now().Add(-pruneAfter)
	return r.perBarber(sys, "prune reservations", limit, func(limit int) ([]string, error) {
		return r.cfg.DB.Reservation.Query().Where(reservation.AppointmentIDNotNil(), reservation.EndsAtLT(before)).
			Limit(limit).Select(reservation.FieldBarberID).Strings(sys)
	}, func(tx *ent.Tx, barberID string) (int, error) {
		return r.freeEnded(sys, tx, barberID, before)
	})
}

// SendReminders writes one appointment.reminder notification, exactly once
// (see "Jobs" in the package doc), for each confirmed appointment starting
// within lead that has not been reminded of, and returns how many it sent.
// A reminder carries the source of the appointment it reminds of.
func (r *Resolver) SendReminders(ctx context.Context, lead time.Duration, limit int) (int, error) {
	if limit <= 0 {
		limit = domain.JobBatch
	}
	if lead <= 0 {
		return 0, nil
	}
	sys := tenant.System(ctx)
	now := r.now()
	total := 0
	for {
		var claimed, sent int
		err := r.inTx(sys, func(tx *ent.Tx) error {
			claimed, sent = 0, 0
			as, err := store.SkipLocked(r.cfg.DB.Dialect, tx.Appointment.Query().
				Where(dueReminder(now, lead)...).
				Order(appointment.ByStartsAt(), appointment.ByID()).Limit(limit)).All(sys)
			if err != nil {
				return err
			}
			claimed = len(as)
			for _, a := range as {
				// The account's own context, not the system one: notify
				// owes the event to the keys it can see.
				actx := tenant.WithAccount(ctx, a.AccountID)
				n, err := tx.Appointment.Update().
					Where(append(dueReminder(now, lead), appointment.ID(a.ID))...).
					SetRemindedAt(now).Save(actx)
				if err != nil {
					return err
				}
				if n == 0 {
					continue // reminded (or changed) meanwhile
				}
				if _, err := r.notifyLoaded(actx, tx, a.ID, domain.EventReminder, notification.Source(a.Source), nil); err != nil {
					return err
				}
				sent++
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("send reminders: %w", err)
		}
		total += sent
		// Every round reminds what it claimed, so the rounds end; a short
		// round was the last.
		if claimed < limit || sent == 0 || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

// dueReminder selects the confirmed appointments not yet reminded of that
// start after now and at most lead later.
func dueReminder(now time.Time, lead time.Duration) []predicate.Appointment {
	return []predicate.Appointment{
		appointment.StatusEQ(appointment.StatusConfirmed),
		appointment.RemindedAtIsNil(),
		appointment.StartsAtGT(now),
		appointment.StartsAtLTE(now.Add(lead)),
	}
}

// holdExpiryEvery is how often ExpireHolds runs (at most; more often with
// a shorter jobs interval): the time of an expired hold is freed by a write
// within about this long. A booking frees the expired holds of its barber
// itself, so none ever blocks in between.
const holdExpiryEvery = time.Second

// RunJobs runs SendReminders and PruneReservations about every interval
// (with jitter, so replicas started together spread out) until ctx ends,
// and with a retention (0: keep everything) PruneNotifications, PruneHolds
// and PruneWaitlist; ExpireHolds, OfferOpenings and (PostgreSQL) the
// growing tables' statistics (store.AnalyzeGrown) run about every
// holdExpiryEvery beside them, and RunOffers makes the waitlist's offers
// after commits. It logs what they did at debug level and their failures
// at warn, and never panics.
func (r *Resolver) RunJobs(ctx context.Context, every, reminderLead, retention time.Duration) {
	if every <= 0 {
		return
	}
	var expiry sync.WaitGroup
	defer expiry.Wait()
	expiry.Go(func() { r.waitlist.RunOffers(ctx) })
	expiry.Go(func() {
		periodic.Every(ctx, min(every, holdExpiryEvery), func() {
			r.runJob(ctx, "expire_holds", func() (int, error) { return r.ExpireHolds(ctx, domain.JobBatch) })
			r.runJob(ctx, "offer_openings", func() (int, error) { return r.waitlist.OfferOpenings(ctx, domain.JobBatch) })
			r.runJob(ctx, "analyze", func() (int, error) { return r.cfg.DB.AnalyzeGrown(ctx, store.GrowingTables) })
		})
	})
	periodic.Every(ctx, every, func() {
		r.runJob(ctx, "send_reminders", func() (int, error) { return r.SendReminders(ctx, reminderLead, domain.JobBatch) })
		r.runJob(ctx, "prune_reservations", func() (int, error) { return r.PruneReservations(ctx, domain.JobBatch) })
		r.runJob(ctx, "expire_waitlist", func() (int, error) { return r.waitlist.Expire(ctx, domain.JobBatch) })
		r.runJob(ctx, "prune_bookings_changes", func() (int, error) { return r.changes.Prune(ctx, time.Now()) })
		if retention > 0 {
			r.runJob(ctx, "prune_notifications", func() (int, error) {
				return r.PruneNotifications(ctx, schema.Now().Add(-retention), domain.JobBatch) // notifications' clock
			})
			r.runJob(ctx, "prune_holds", func() (int, error) { return r.PruneHolds(ctx, r.now().Add(-retention), domain.JobBatch) })
			r.runJob(ctx, "prune_waitlist", func() (int, error) { return r.PruneWaitlist(ctx, r.now().Add(-retention), domain.JobBatch) })
		}
	})
}

// runJob runs one job with periodic.Run, logging to the resolver's log.
func (r *Resolver) runJob(ctx context.Context, name string, job func() (int, error)) {
	periodic.Run(ctx, r.cfg.Log, name, job)
}
