package waitlist

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"barberd/ent"
	"barberd/ent/opening"
	"barberd/ent/schema/tenant"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
	"barberd/graph/wake"
)

// Offers (docs/waitlist.md). Every freeing of a barber's time passes
// timeFreed (package graph), which calls Opened: it records an Opening in
// the same transaction when a waiting entry may want the time (one indexed
// probe, however many entries wait). Right after the commit the same
// process turns the opening into offers, under the barber's lock: its
// offer workers (RunOffers, which graph's RunJobs starts) at once, or
// without them the freeing request itself before it answers; the
// OfferOpenings job takes what is left (another process stopped, a
// failure) within a second. An opening is taken by one transaction at a
// time and deleted with the offers it made, so a freed start is offered
// once; an entry is claimed by an update that requires it to be waiting,
// so it is offered once.

// offerTimeout bounds the offers made after a commit; the job retries.
const offerTimeout = 10 * time.Second

// Opened records, in tx, that a barber's time from start to end became
// free, when a waiting entry may want it, and offers it after the commit.
func (wl *Waitlist) Opened(ctx context.Context, tx *ent.Tx, accountID, barberID string, start, end time.Time) error {
	return wl.OpenedAll(ctx, tx, accountID, barberID, []slots.Interval{{Start: start, End: end}})
}

// OpenedAll is Opened of several spans of one barber's time, freed
// together: they are probed together (store.InsertOpenings).
func (wl *Waitlist) OpenedAll(ctx context.Context, tx *ent.Tx, accountID, barberID string, spans []slots.Interval) error {
	now := wl.b.Now()
	var probe []store.OpeningSpan
	for _, s := range spans {
		if s.End.After(now) {
			probe = append(probe, store.OpeningSpan{ID: opening.DefaultID(), Start: s.Start.UTC(), End: s.End.UTC()})
		}
	}
	wrote, err := wl.db.InsertOpenings(ctx, tx, accountID, barberID, probe, now)
	if err != nil {
		return err
	}
	for _, id := range wrote {
		wl.offerAfter(ctx, tx, id)
	}
	return nil
}

// Probe is the probe of time freed by a statement that probes it itself
// (store.RideFreeing), where Opened would probe it in a statement of its
// own: the id of the opening it may write, and now.
func (wl *Waitlist) Probe() store.OpeningProbe {
	return store.OpeningProbe{ID: opening.DefaultID(), Now: wl.b.Now()}
}

// Probed is Opened of time whose freeing statement probed it itself: the
// opening it wrote, if any (id not ""), is offered after the commit.
func (wl *Waitlist) Probed(ctx context.Context, tx *ent.Tx, id string) {
	if id != "" {
		wl.offerAfter(ctx, tx, id)
	}
}

// offerAfter offers the opening id, written in tx, after the commit.
func (wl *Waitlist) offerAfter(ctx context.Context, tx *ent.Tx, id string) {
	store.OnCommit(tx, func() {
		if wl.offers.running.Load() > 0 {
			wl.offers.pending.Store(id, struct{}{})
			wl.offers.due.Wake(id)
			return
		}
		wl.offerNow(context.WithoutCancel(ctx), id)
	})
}

// offerNow makes the offers of an opening, logging a failure (the job
// retries).
func (wl *Waitlist) offerNow(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(tenant.System(ctx), offerTimeout)
	defer cancel()
	if _, err := wl.offerOpening(ctx, id); err != nil {
		wl.log.Warn("waitlist offers failed; the job retries", "opening", id, "err", err)
	}
}

// offerWorkers are the process's workers that make offers after commits
// while RunOffers runs; without them, the committing request makes its
// offers itself before it answers.
type offerWorkers struct {
	due *wake.Set // openings committed, by id
	// pending are the openings woken and not yet taken by a pass of this
	// process: a pass takes its barber's other openings too, and their
	// turn then costs no transaction.
	pending sync.Map
	running atomic.Int32
}

// offerWorkerCount is how many openings a process offers at once. A pass
// mostly waits (for its barber's lock, behind the cancels, and for its
// commit), so on PostgreSQL more passes at once keep the queue of openings
// short (docs/performance.md: 8 workers gave an offer p99 of 0.6 s where 4
// gave 2 s; 16 gave 0.32–0.38 s where 8 gave 0.7–1.0 s, and the cancels
// beside them lost less). Each holds one of the pool's connections while
// it waits, so requests keep requestConns of them. SQLite writes one
// transaction at a time, and a worker waiting for it holds one of its few
// connections.
func (wl *Waitlist) offerWorkerCount() int {
	if store.SerialWrites(wl.db.Dialect) {
		return 4
	}
	return store.PostgresConns - requestConns
}

// requestConns are the PostgreSQL connections the offer workers leave to
// requests and jobs however many openings are due.
const requestConns = 4

// RunOffers makes the offers of the openings this process commits, with
// offerWorkerCount workers, until ctx ends: a freeing request answers
// without waiting for them. Openings woken but not done when it stops are
// the job's (OfferOpenings).
func (wl *Waitlist) RunOffers(ctx context.Context) {
	wl.offers.running.Add(1)
	defer wl.offers.running.Add(-1)
	ids := make(chan string)
	var workers sync.WaitGroup
	for range wl.offerWorkerCount() {
		workers.Go(func() {
			for id := range ids {
				if _, due := wl.offers.pending.LoadAndDelete(id); due {
					wl.offerNow(ctx, id)
				}
			}
		})
	}
	defer workers.Wait()
	defer close(ids)
	for {
		select {
		case <-ctx.Done():
			return
		case <-wl.offers.due.C():
			due := wl.offers.due.Take()
			slices.Sort(due) // oldest first: ids sort by when they were made
			for _, id := range due {
				select {
				case ids <- id:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// OpenedHorizon records that any of a barber's time up to the booking
// horizon may have become free (its hours or its services changed).
func (wl *Waitlist) OpenedHorizon(ctx context.Context, tx *ent.Tx, accountID, barberID string) error {
	now := wl.b.Now()
	return wl.Opened(ctx, tx, accountID, barberID, now, now.AddDate(0, 0, domain.MaxHorizonDays+2))
}

// reopen offers free starts the caller found after the fact (a join that
// raced a freeing): each as an opening of its own, offered at once.
func (wl *Waitlist) reopen(ctx context.Context, accountID string, free []*model.Slot) {
	err := wl.b.InTx(ctx, func(tx *ent.Tx) error {
		for _, s := range free {
			if err := wl.Opened(ctx, tx, accountID, s.BarberID, s.StartsAtUtc, s.EndsAtUtc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		wl.log.Warn("waitlist reopen failed", "err", err)
	}
}

// OfferOpenings offers the openings left over, oldest first, up to limit
// of them, and says how many offers it made: the job behind the offers
// made after each commit.
func (wl *Waitlist) OfferOpenings(ctx context.Context, limit int) (int, error) {
	sys := tenant.System(ctx)
	if limit <= 0 {
		limit = domain.JobBatch
	}
	ids, err := wl.db.Opening.Query().Order(opening.ByCreatedAt(), opening.ByID()).Limit(limit).IDs(sys)
	if err != nil {
		return 0, err
	}
	// One opening that fails does not hold back the others.
	total, errs := 0, []error(nil)
	for _, id := range ids {
		n, err := wl.offerOpening(sys, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("opening %s: %w", id, err))
		}
		total += n
	}
	return total, errors.Join(errs...)
}

// openingBatch is how many openings of one barber a pass takes at once:
// under load they queue, and one pass, one lock, serves them all.
const openingBatch = 50

// offerOpening takes an opening, with the other openings of its barber not
// taken by another transaction, and makes their offers, in one
// transaction; an opening another transaction holds or has done is passed
// over. It says how many offers it made.
func (wl *Waitlist) offerOpening(ctx context.Context, id string) (int, error) {
	made, ids := 0, []string(nil)
	var seen passCounts
	var freed []slots.Interval
	unwanted := 0
	// The pass's statements run their generic plans (store.GenericTx
	// says why), the setting riding with BEGIN.
	err := wl.b.InTx(store.GenericTx(ctx), func(tx *ent.Tx) error {
		made, ids, seen, freed, unwanted = 0, nil, passCounts{}, nil, 0
		ops, err := store.TakeOpenings(ctx, tx, wl.db.Dialect, id, openingBatch, wl.b.Now())
		if err != nil || len(ops) == 0 {
			return err
		}
		// The offers' time is read after the take: a pass that waited
		// (for a connection, under load) takes the openings committed
		// meanwhile, and offers their time no sooner than it was freed.
		now := wl.b.Now()
		ids = make([]string, len(ops))
		for i, o := range ops {
			ids[i] = o.ID
			// No waiting entry may want it any more (another pass offered
			// them first, say): nothing to read for it.
			if !o.Wanted {
				unwanted++
				continue
			}
			freed = append(freed, slots.Interval{Start: o.StartsAt, End: o.EndsAt})
		}
		if len(freed) > 0 {
			if made, seen, err = wl.offerFreed(ctx, tx, ops[0].AccountID, ops[0].BarberID, ops[0].ConfigVersion, freed, now); err != nil || made > 0 {
				return err
			}
		}
		// Nothing offered: losing this commit to a crash of the database
		// only brings the openings back, for the job.
		return wl.db.CommitLazily(ctx, tx)
	})
	if err != nil {
		return made, err
	}
	for _, id := range ids {
		wl.offers.pending.Delete(id)
	}
	if made > 0 {
		wl.b.Metrics().WaitlistOffered(made)
	} else if len(ids) > 0 {
		// Why time freed for a waiting entry offered nothing: openings no
		// waiting entry wants any more, entries whose service the barber
		// no longer takes, whose days or times cannot touch the time, that
		// found no free start, or that another pass offered first.
		wl.log.DebugContext(ctx, "waitlist pass offered nothing", "openings", len(ids), "unwanted", unwanted, "freed", freed,
			"entries", seen.Entries, "not_bookable", seen.NotBookable, "no_date", seen.NoDate,
			"no_start", seen.NoStart, "not_waiting", seen.NotWaiting)
	}
	return made, err
}
