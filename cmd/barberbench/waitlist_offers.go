package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/schema/tenant"
	"barberd/ent/waitlistentry"
)

// WaitlistStats is what the waitlist scenario measured beyond its
// endpoints.
type WaitlistStats struct {
	// Entries were joined (201) before the second cancel phase; Matchable
	// of them want a start that one cancel frees. WaitingAtEnd were still
	// waiting after it.
	Entries      int `json:"entries"`
	Matchable    int `json:"matchable"`
	WaitingAtEnd int `json:"waiting_at_end"`
	// Offers were made to the entries; Untraced of them were not of a
	// start that a cancel of the phase freed, and DoubleOffers offered a
	// start already offered to another entry (never allowed).
	Offers       int `json:"offers"`
	Untraced     int `json:"untraced_offers"`
	DoubleOffers int `json:"double_offers"`
	// Offer latency, from the cancel's write (the appointment's
	// cancelled_at) to the offer's (the entry's offered_at), both read from
	// the database to the microsecond: the API shows whole seconds.
	OfferP50Ms float64 `json:"offer_p50_ms"`
	OfferP99Ms float64 `json:"offer_p99_ms"`
	OfferMaxMs float64 `json:"offer_max_ms"`
	// DrainSeconds is how long after the phase the freed times took to be
	// worked off; OpeningsLeft were not by offerDrain (their offers are
	// missing from the figures).
	DrainSeconds float64 `json:"drain_s"`
	OpeningsLeft int     `json:"openings_left"`
	// Cancels a second with no waitlist (the phases before and after the
	// one with the entries, together, and each) and with the entries
	// waiting, and the latter over the former.
	CancelAlonePerSec   float64 `json:"cancel_alone_per_s"`
	CancelBeforePerSec  float64 `json:"cancel_before_per_s"`
	CancelAfterPerSec   float64 `json:"cancel_after_per_s"`
	CancelWaitingPerSec float64 `json:"cancel_waiting_per_s"`
	ThroughputRatio     float64 `json:"throughput_ratio"`
	// CPU is the CPU a cancel cost in each phase (with --pid).
	CPU *WaitlistCPU `json:"cpu,omitempty"`
}

// WaitlistCPU is the CPU time a cancel cost, in milliseconds, with no
// waitlist and with the entries waiting (the offers' passes included):
// barberd's and, with the database on this machine, PostgreSQL's, and
// their sum's second over its first. On a saturated machine the throughput
// ratio follows Ratio, which other tenants' load moves less.
type WaitlistCPU struct {
	ServerAloneMs     float64 `json:"server_alone_ms"`
	ServerWaitingMs   float64 `json:"server_waiting_ms"`
	DatabaseAloneMs   float64 `json:"database_alone_ms,omitempty"`
	DatabaseWaitingMs float64 `json:"database_waiting_ms,omitempty"`
	Database          bool    `json:"database"`
	Ratio             float64 `json:"ratio"`
}

// cpuPerCancel divides each phase's CPU by its cancels.
func cpuPerCancel(m cpuMeter, alone cpuSample, nAlone int, waiting cpuSample, nWaiting int) *WaitlistCPU {
	if nAlone == 0 || nWaiting == 0 {
		return nil
	}
	per := func(sec float64, n int) float64 { return round2(sec * 1000 / float64(n)) }
	c := &WaitlistCPU{
		ServerAloneMs: per(alone.server, nAlone), ServerWaitingMs: per(waiting.server, nWaiting),
		Database: m.postgres,
	}
	if m.postgres {
		c.DatabaseAloneMs, c.DatabaseWaitingMs = per(alone.database, nAlone), per(waiting.database, nWaiting)
	}
	if a := c.ServerAloneMs + c.DatabaseAloneMs; a > 0 {
		c.Ratio = round2((c.ServerWaitingMs + c.DatabaseWaitingMs) / a)
	}
	return c
}

// offerDrain bounds the wait, after the second cancel phase, for offers
// still due (barberd's goal is 5 s from the freeing, at worst).
const offerDrain = time.Minute

// measureOffers waits until the freed times are worked off (no opening
// left), then reads the run's entries and its cancels from the database.
func (b *bench) measureOffers(ctx context.Context) (*WaitlistStats, error) {
	db, sys := b.floor.db, tenant.System(ctx)
	st := &WaitlistStats{}
	drain := time.Now()
	for {
		n, err := db.Opening.Query().Count(sys)
		if err != nil {
			return nil, fmt.Errorf("waitlist openings: %w", err)
		}
		if st.OpeningsLeft = n; n == 0 || time.Since(drain) > offerDrain || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	st.DrainSeconds = round2(time.Since(drain).Seconds())
	entries, err := db.WaitlistEntry.Query().Where(waitlistentry.ExternalReferenceHasPrefix(b.wl.prefix)).All(sys)
	if err != nil {
		return nil, fmt.Errorf("waitlist entries: %w", err)
	}
	cancelled := map[string][]*ent.Appointment{} // by barber, by start
	for ids := b.wl.cancelled; len(ids) > 0; {
		n := min(len(ids), 500)
		apts, err := db.Appointment.Query().Where(appointment.IDIn(ids[:n]...)).All(sys)
		if err != nil {
			return nil, fmt.Errorf("cancelled appointments: %w", err)
		}
		for _, a := range apts {
			cancelled[a.BarberID] = append(cancelled[a.BarberID], a)
		}
		ids = ids[n:]
	}
	for _, as := range cancelled {
		slices.SortFunc(as, func(x, y *ent.Appointment) int { return x.StartsAt.Compare(y.StartsAt) })
	}
	type start struct {
		barberID string
		at       int64
	}
	offered := map[start]bool{}
	var lat []time.Duration
	for _, e := range entries {
		if e.Status == waitlistentry.StatusWaiting {
			st.WaitingAtEnd++
		}
		if e.OfferedAt == nil || e.OfferStartsAt == nil || e.OfferBarberID == nil {
			continue
		}
		st.Offers++
		at := start{*e.OfferBarberID, e.OfferStartsAt.UnixMicro()}
		if offered[at] {
			st.DoubleOffers++
		}
		offered[at] = true
		a := freedBy(cancelled[*e.OfferBarberID], *e.OfferStartsAt)
		if a == nil || a.CancelledAt == nil || a.CancelledAt.After(*e.OfferedAt) {
			st.Untraced++
			continue
		}
		lat = append(lat, e.OfferedAt.Sub(*a.CancelledAt))
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		st.OfferP50Ms, st.OfferP99Ms, st.OfferMaxMs = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(lat[n-1])
	}
	return st, nil
}

// freedBy is the cancelled appointment, of those of a barber by start,
// whose time holds start.
func freedBy(as []*ent.Appointment, start time.Time) *ent.Appointment {
	i, _ := slices.BinarySearchFunc(as, start, func(a *ent.Appointment, t time.Time) int {
		if a.StartsAt.After(t) {
			return 1
		}
		return -1
	})
	if i == 0 || !start.Before(as[i-1].EndsAt) {
		return nil
	}
	return as[i-1]
}

// leaveWaitlist takes the run's entries off the waitlist, unmeasured: the
// waiting ones first, so that the offers' released holds go to nobody.
func (b *bench) leaveWaitlist(ctx context.Context) {
	for _, status := range []waitlistentry.Status{waitlistentry.StatusWaiting, waitlistentry.StatusOffered} {
		ids, err := b.floor.db.WaitlistEntry.Query().
			Where(waitlistentry.ExternalReferenceHasPrefix(b.wl.prefix), waitlistentry.StatusEQ(status)).
			IDs(tenant.System(ctx))
		if err != nil {
			fmt.Fprintf(b.logOut, "barberbench: waitlist entries left behind: %v\n", err)
			return
		}
		leave := make([]request, len(ids))
		for i, id := range ids {
			leave[i] = request{"/waitlist/" + id, nil}
		}
		b.sendEach(ctx, "leave", http.MethodDelete, leave)
	}
}

// write prints the waitlist scenario's figures for people.
func (s *WaitlistStats) write(w io.Writer) {
	fmt.Fprintf(w, "waitlist: %d entries (%d matchable), %d still waiting after the cancels; %d offers (%d untraced, %d double)\n",
		s.Entries, s.Matchable, s.WaitingAtEnd, s.Offers, s.Untraced, s.DoubleOffers)
	fmt.Fprintf(w, "waitlist: offer from the cancel's write p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal: p99 under 1 s); offers worked off %.1f s after the phase, %d freed times left undone\n",
		s.OfferP50Ms, s.OfferP99Ms, s.OfferMaxMs, s.DrainSeconds, s.OpeningsLeft)
	fmt.Fprintf(w, "waitlist: cancels %.1f/s with the entries waiting, %.1f/s with none (%.1f before, %.1f after): ×%.2f (goal ≥ 0.8)\n",
		s.CancelWaitingPerSec, s.CancelAlonePerSec, s.CancelBeforePerSec, s.CancelAfterPerSec, s.ThroughputRatio)
	if c := s.CPU; c != nil {
		of := "barberd's alone (the database is not on this machine)"
		if c.Database {
			of = fmt.Sprintf("barberd %.2f and %.2f, PostgreSQL %.2f and %.2f", c.ServerAloneMs, c.ServerWaitingMs, c.DatabaseAloneMs, c.DatabaseWaitingMs)
		}
		fmt.Fprintf(w, "waitlist: CPU a cancel %.2f ms with none, %.2f ms with the entries waiting: ×%.2f (%s)\n",
			c.ServerAloneMs+c.DatabaseAloneMs, c.ServerWaitingMs+c.DatabaseWaitingMs, c.Ratio, of)
	}
}
