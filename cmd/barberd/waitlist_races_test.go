package main

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"barberd/ent/waitlistentry"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// raceCancellations: in each group both barbers are booked for the hour;
// five entries wait for parts of it (one for the start that straddles the
// two half hours, one for any barber), and both half hours of one barber
// are cancelled at once, on two replicas. However the two commits and
// their offers interleave, the offers go oldest first, never overlap, and
// leave no waiting entry a free start.
func (w *wlRig) raceCancellations(t *testing.T) {
	type group struct {
		barber int
		apts   [2][2]string
		js     []*wlJoin
	}
	groups := make([]*group, 6)
	for k := range groups {
		g := w.group(t)
		gr := &group{barber: k % 2, apts: w.block(t, g)}
		b := w.barbers[gr.barber]
		gr.js = []*wlJoin{
			w.waiter(g, b, 15, 30, 600), // only the start over both half hours
			w.waiter(g, "", 0, 60, 600), // any barber
			w.waiter(g, b, 0, 60, 600),
			w.waiter(g, b, 30, 60, 300),
			w.waiter(g, b, 0, 60, 600),
		}
		w.mustJoin(t, gr.js...)
		groups[k] = gr
	}
	barrier := make(chan struct{})
	var wg sync.WaitGroup
	for k, gr := range groups {
		for h := range 2 {
			w.goCancel(t, &wg, barrier, 2*k+h, gr.apts[gr.barber][h])
		}
	}
	close(barrier)
	wg.Wait()
	var outcomes tally
	for _, gr := range groups {
		offers := checkOffers(t, gr.js, w.settle(t, gr.js))
		if len(offers) != 2 {
			t.Errorf("the freed hour made %d offers, want 2 (two half hours, whatever the order): %v; %s", len(offers), offers, w.describe(t, gr.js))
		}
		outcomes.add(strings.Join(offers, ", "))
	}
	checkWaitlist(t, w.db)
	t.Logf("offers per group: %s", &outcomes)
}

// describe shows what a failed group's hour holds: its entries, and the
// barbers' appointments and holds then.
func (w *wlRig) describe(t *testing.T, js []*wlJoin) string {
	es := w.entries(t, js)
	var out []string
	for i, j := range js {
		e := es[j.id]
		out = append(out, fmt.Sprintf("#%d %s %s (%s-%s barber %q)", i, e.ID, e.Status, j.timeFrom, j.timeTo, j.barber))
	}
	from, _ := time.ParseInLocation("2006-01-02T15:04:05", js[0].group.at(0), lisbon)
	rs, err := w.db.Reservation.Query().All(w.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.StartsAt.Before(from.Add(2*time.Hour)) && r.EndsAt.After(from.Add(-time.Hour)) {
			out = append(out, fmt.Sprintf("reservation %s-%s %s hold %v appointment %v expires %v", local(r.StartsAt), local(r.EndsAt)[11:], r.BarberID, ptr(r.HoldID), ptr(r.AppointmentID), r.ExpiresAt))
		}
	}
	return strings.Join(out, "\n  ")
}

func ptr(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// goCancel cancels an appointment through replica i once barrier opens.
func (w *wlRig) goCancel(t *testing.T, wg *sync.WaitGroup, barrier chan struct{}, i int, id string) {
	wg.Go(func() {
		<-barrier
		if code, err := w.cancel(i, id); err != nil || code != "" {
			t.Errorf("cancel %s: %v %s", id, err, code)
		}
	})
}

// raceCancelBooking: an appointment is cancelled on one replica while two
// clients book its start on the two others; one entry waits for it. Either
// a booking wins and the entry gets no offer, or the entry is offered the
// start and every booking is refused: never both, never neither.
func (w *wlRig) raceCancelBooking(t *testing.T) {
	type group struct {
		barber, apt string
		g           wlGroup
		j           *wlJoin
		codes       [2]string
	}
	groups := make([]*group, 10)
	for k := range groups {
		gr := &group{barber: w.barbers[k%2], g: w.group(t)}
		gr.apt = w.mustBook(t, gr.barber, gr.g.at(0))
		gr.j = w.waiter(gr.g, gr.barber, 0, 30, 600)
		w.mustJoin(t, gr.j)
		groups[k] = gr
	}
	barrier := make(chan struct{})
	var wg sync.WaitGroup
	for k, gr := range groups {
		w.goCancel(t, &wg, barrier, k, gr.apt)
		for i := range gr.codes {
			wg.Go(func() {
				<-barrier
				_, code, err := w.book(k+1+i, gr.barber, gr.g.at(0))
				if err != nil {
					t.Errorf("book: %v", err)
				}
				gr.codes[i] = code
			})
		}
	}
	close(barrier)
	wg.Wait()
	var outcomes tally
	for _, gr := range groups {
		e := w.settle(t, []*wlJoin{gr.j})[gr.j.id]
		booked := 0
		for _, c := range gr.codes {
			switch c {
			case "":
				booked++
			case "slot_unavailable":
			default:
				t.Errorf("booking %s: %s, want success or slot_unavailable", gr.g.at(0), c)
			}
		}
		offered := e.OfferStartsAt != nil
		switch {
		case booked > 1:
			t.Errorf("%s booked %d times", gr.g.at(0), booked)
		case booked == 1 && offered:
			t.Errorf("%s booked and also offered to %s (%s at %s)", gr.g.at(0), e.ID, e.Status, local(*e.OfferStartsAt))
		case booked == 0 && (!offered || local(*e.OfferStartsAt) != gr.g.at(0)):
			t.Errorf("%s freed, every booking refused (%v), yet entry %s is %s with offer %v", gr.g.at(0), gr.codes, e.ID, e.Status, e.OfferStartsAt)
		}
		outcomes.add(map[bool]string{true: "booking won", false: "offer won"}[booked == 1])
	}
	checkWaitlist(t, w.db)
	t.Logf("outcomes: %s", &outcomes)
}

// raceJoinCancel: a client joins for a start while its appointment is
// cancelled on another replica. Either the join sees the start free
// (slot_available) or the entry is made and offered the start: it never
// waits with the start free.
func (w *wlRig) raceJoinCancel(t *testing.T) {
	type group struct {
		apt string
		g   wlGroup
		j   *wlJoin
	}
	groups := make([]*group, 10)
	for k := range groups {
		gr := &group{g: w.group(t)}
		barber := w.barbers[k%2]
		gr.apt = w.mustBook(t, barber, gr.g.at(0))
		gr.j = w.waiter(gr.g, barber, 0, 30, 600)
		groups[k] = gr
	}
	barrier := make(chan struct{})
	var wg sync.WaitGroup
	for k, gr := range groups {
		w.goCancel(t, &wg, barrier, k, gr.apt)
		wg.Go(func() {
			<-barrier
			// The join's two reads take a few milliseconds: from 0 to 18 ms
			// later, the cancellation meets it at different points.
			time.Sleep(time.Duration(2*k) * time.Millisecond)
			if err := w.join(k+1, gr.j); err != nil {
				t.Errorf("join: %v", err)
			}
		})
	}
	close(barrier)
	wg.Wait()
	var outcomes tally
	var joined []*wlJoin
	for _, gr := range groups {
		switch gr.j.code {
		case "":
			if gr.j.id != "" {
				joined = append(joined, gr.j)
			}
		case "slot_available":
			outcomes.add("slot_available")
		default:
			t.Errorf("join racing a cancellation: %s", gr.j.code)
		}
	}
	es := w.settle(t, joined)
	for _, j := range joined {
		e := es[j.id]
		if e.OfferStartsAt == nil || local(*e.OfferStartsAt) != j.group.at(0) {
			t.Errorf("entry %s joined as %s was cancelled: %s with offer %v", e.ID, j.group.at(0), e.Status, e.OfferStartsAt)
		}
		outcomes.add("joined and offered")
	}
	checkWaitlist(t, w.db)
	t.Logf("outcomes: %s", &outcomes)
}

// raceOfferEnd: an entry's offer holds the start for 10 s; a second entry
// waits for the same start. The hold ends (it expires, is released, or its
// entry leaves) while three clients keep trying to book the start, one per
// replica. Either a booking gets it and the second entry stays waiting, or
// the second entry is offered it and no booking succeeds: never both.
func (w *wlRig) raceOfferEnd(t *testing.T) {
	ends := []string{"expires", "released", "leaves"}
	type group struct {
		end, barber, apt string
		g                wlGroup
		first, second    *wlJoin
		holdID           string
		expires          time.Time
		bookedAt         atomic.Pointer[time.Time]
		booked           atomic.Int32
		refused          atomic.Int32
	}
	groups := make([]*group, 6)
	for k := range groups {
		gr := &group{end: ends[k%3], barber: w.barbers[k%2], g: w.group(t)}
		gr.apt = w.mustBook(t, gr.barber, gr.g.at(0))
		gr.first, gr.second = w.waiter(gr.g, gr.barber, 0, 30, 10), w.waiter(gr.g, gr.barber, 0, 30, 600)
		w.mustJoin(t, gr.first, gr.second)
		if code, err := w.cancel(k, gr.apt); err != nil || code != "" {
			t.Fatalf("cancel: %v %s", err, code)
		}
		e := w.settle(t, []*wlJoin{gr.first, gr.second})[gr.first.id]
		if e.OfferHoldID == nil || local(*e.OfferStartsAt) != gr.g.at(0) {
			t.Fatalf("the oldest entry %s is %s with offer %v, want %s held", e.ID, e.Status, e.OfferStartsAt, gr.g.at(0))
		}
		h, err := w.db.Hold.Get(w.ctx(), *e.OfferHoldID)
		if err != nil {
			t.Fatal(err)
		}
		gr.holdID, gr.expires = h.ID, h.ExpiresAt
		groups[k] = gr
	}
	var wg sync.WaitGroup
	for k, gr := range groups {
		wg.Go(func() {
			start := time.Now()
			if gr.end == "expires" {
				// From just before the expiry, or once the job may have
				// offered the start to the next entry.
				start = gr.expires.Add(time.Duration(400*k-300) * time.Millisecond)
			}
			time.Sleep(time.Until(start))
			stop := start.Add(3 * time.Second)
			if gr.end == "expires" {
				stop = gr.expires.Add(6 * time.Second)
			}
			var race sync.WaitGroup
			race.Go(func() {
				var code string
				var err error
				switch gr.end {
				case "released":
					_, code, err = w.gql(k, `mutation($id: ID!) { releaseHold(id: $id) { status } }`, map[string]any{"id": gr.holdID})
				case "leaves":
					var r *reply
					if r, err = apitest.Do(w.client, "DELETE", w.servers[k%3].URL+"/api/integrations/v1/waitlist/"+gr.first.id, w.key, nil); err == nil && r.Status != 200 {
						code = fmt.Sprintf("%d %s", r.Status, r.Body)
					}
				}
				if err != nil || code != "" {
					t.Errorf("%s: %v %s", gr.end, err, code)
				}
			})
			for i := range 3 {
				race.Go(func() {
					for time.Now().Before(stop) && gr.booked.Load() == 0 {
						_, code, err := w.book(k+i, gr.barber, gr.g.at(0))
						switch {
						case err != nil:
							t.Errorf("book: %v", err)
							return
						case code == "":
							at := time.Now()
							gr.bookedAt.Store(&at)
							gr.booked.Add(1)
						case code == "slot_unavailable":
							gr.refused.Add(1)
							time.Sleep(20 * time.Millisecond)
						default:
							t.Errorf("booking %s: %s", gr.g.at(0), code)
							return
						}
					}
				})
			}
			race.Wait()
		})
	}
	wg.Wait()
	var outcomes tally
	for _, gr := range groups {
		es := w.settle(t, []*wlJoin{gr.first, gr.second})
		first, second := es[gr.first.id], es[gr.second.id]
		wantFirst := map[string]waitlistentry.Status{"expires": "offered", "released": "offered", "leaves": "cancelled"}[gr.end]
		if first.Status != wantFirst {
			t.Errorf("after its hold %s, the first entry is %s, want %s", gr.end, first.Status, wantFirst)
		}
		h, err := w.db.Hold.Get(w.ctx(), gr.holdID)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"expires": "expired", "released": "released", "leaves": "released"}[gr.end]; string(h.Status) != want {
			t.Errorf("offer hold %s %s: status %s, want %s", h.ID, gr.end, h.Status, want)
		}
		booked := gr.booked.Load()
		switch {
		case booked > 1:
			t.Errorf("%s booked %d times", gr.g.at(0), booked)
		case booked == 1 && second.OfferStartsAt != nil:
			t.Errorf("%s booked and also offered to the next entry %s (%s)", gr.g.at(0), second.ID, local(*second.OfferStartsAt))
		case booked == 0 && (second.OfferStartsAt == nil || local(*second.OfferStartsAt) != gr.g.at(0)):
			t.Errorf("the hold %s, no booking got %s (%d refused), yet the next entry %s is %s with offer %v",
				gr.end, gr.g.at(0), gr.refused.Load(), second.ID, second.Status, second.OfferStartsAt)
		case booked == 1 && gr.end == "expires" && gr.bookedAt.Load().Before(gr.expires):
			t.Errorf("%s booked at %s, before the offer hold expired at %s", gr.g.at(0), gr.bookedAt.Load(), gr.expires)
		}
		outcomes.add(fmt.Sprintf("hold %s, %s (%d refused)", gr.end, map[bool]string{true: "booking won", false: "next entry offered"}[booked == 1], gr.refused.Load()))
	}
	checkWaitlist(t, w.db)
	t.Logf("outcomes: %s", &outcomes)
}

// raceJoins: one client joins for the same hour 30 times at once over the
// replicas: one entry, the rest already_waiting. Then another client
// repeats one join with one external reference 20 times at once: one entry,
// the rest replays of it.
func (w *wlRig) raceJoins(t *testing.T) {
	g := w.group(t)
	w.block(t, g)
	race := func(n int, newJoin func() *wlJoin) []*wlJoin {
		js := make([]*wlJoin, n)
		for i := range js {
			js[i] = newJoin()
		}
		barrier := make(chan struct{})
		var wg sync.WaitGroup
		for i, j := range js {
			wg.Go(func() {
				<-barrier
				if err := w.join(i, j); err != nil {
					t.Errorf("join: %v", err)
				}
			})
		}
		close(barrier)
		wg.Wait()
		return js
	}
	phone := w.nextPhone()
	var first *wlJoin
	codes := map[string]int{}
	js := race(30, func() *wlJoin {
		j := w.waiter(g, "", 0, 60, 600)
		j.phone = phone
		return j
	})
	for _, j := range js {
		codes[j.code]++
		if j.code == "" {
			first = j
		}
	}
	if codes[""] != 1 || codes["already_waiting"] != 29 {
		t.Fatalf("30 joins of one client at once: %v, want one success and 29 already_waiting", codes)
	}
	if n := storetest.Count(t, w.db, "SELECT COUNT(*) FROM waitlist_entries WHERE client_phone = ? AND status = 'waiting'", phone); n != 1 {
		t.Errorf("client %s has %d waiting entries, want 1", phone, n)
	}
	for _, j := range js {
		if j.code == "already_waiting" && j.waiting != first.id {
			t.Errorf("already_waiting names %q, the entry is %s", j.waiting, first.id)
		}
	}
	phone = w.nextPhone()
	ids, replays := map[string]int{}, 0
	for _, j := range race(20, func() *wlJoin {
		j := w.waiter(g, w.barbers[0], 0, 60, 600)
		j.phone, j.ref = phone, "one-join"
		return j
	}) {
		if j.code != "" {
			t.Errorf("a repeated join: %s, want the entry", j.code)
		}
		ids[j.id]++
		if j.replayed {
			replays++
		}
	}
	if len(ids) != 1 || replays != 19 {
		t.Errorf("20 joins with one reference at once: entries %v, %d replays; want one entry and 19 replays", ids, replays)
	}
	if first != nil {
		w.settle(t, []*wlJoin{first})
	}
	checkWaitlist(t, w.db)
}

// waitlistInvariants hold whatever races the waitlist ran. "?" is now.
var waitlistInvariants = []invariant{
	{"entries given more than one offer hold", `SELECT COUNT(*) FROM (SELECT waitlist_entry_id FROM holds
		WHERE waitlist_entry_id IS NOT NULL GROUP BY waitlist_entry_id HAVING COUNT(*) > 1) d`},
	{"entries told of more than one offer", `SELECT COUNT(*) FROM (SELECT offer->'waitlist_entry'->>'id' FROM notifications
		WHERE type = 'slot.available' GROUP BY 1 HAVING COUNT(*) > 1) d`},
	{"offered entries without exactly one slot.available", `SELECT COUNT(*) FROM waitlist_entries e WHERE e.offered_at IS NOT NULL
		AND (SELECT COUNT(*) FROM notifications n WHERE n.type = 'slot.available' AND n.offer->'waitlist_entry'->>'id' = e.id) <> 1`},
	{"live offers overlapping", `SELECT COUNT(*) FROM waitlist_entries e1 JOIN waitlist_entries e2
		ON e1.id < e2.id AND e1.offer_barber_id = e2.offer_barber_id AND e1.offer_starts_at < e2.offer_ends_at AND e2.offer_starts_at < e1.offer_ends_at
		JOIN holds h1 ON h1.id = e1.offer_hold_id JOIN holds h2 ON h2.id = e2.offer_hold_id
		WHERE h1.status = 'active' AND h1.expires_at > ? AND h2.status = 'active' AND h2.expires_at > ?`},
	{"offer holds not of their entry's offer", `SELECT COUNT(*) FROM waitlist_entries e JOIN holds h ON h.id = e.offer_hold_id
		WHERE h.waitlist_entry_id IS DISTINCT FROM e.id OR h.barber_id <> e.offer_barber_id OR h.starts_at <> e.offer_starts_at`},
	{"entries whose status and offer disagree", `SELECT COUNT(*) FROM waitlist_entries WHERE
		(status = 'waiting' AND (offered_at IS NOT NULL OR waiting IS NOT TRUE))
		OR (status <> 'waiting' AND waiting IS NOT NULL)
		OR (status IN ('offered', 'booked') AND (offer_starts_at IS NULL OR offered_at IS NULL))
		OR ((status = 'booked') <> (appointment_id IS NOT NULL))`},
	{"booked entries whose appointment did not use the offer hold", `SELECT COUNT(*) FROM waitlist_entries e JOIN appointments a ON a.id = e.appointment_id
		WHERE a.hold_id IS DISTINCT FROM e.offer_hold_id`},
	{"clients waiting twice for one service at one unit", `SELECT COUNT(*) FROM (SELECT 1 FROM waitlist_entries WHERE status = 'waiting'
		GROUP BY account_id, client_phone, unit_id, service_id HAVING COUNT(*) > 1) d`},
}

// checkWaitlist fails the test for every waitlist invariant the database
// (PostgreSQL) breaks.
func checkWaitlist(t *testing.T, db *store.DB) {
	t.Helper()
	checkInvariantList(t, db, waitlistInvariants)
}
