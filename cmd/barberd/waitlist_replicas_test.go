package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/ent/waitlistentry"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// TestWaitlistReplicaRaces runs three server processes on one PostgreSQL and
// races the waitlist's writers across them, through REST (joins, leaves) and
// GraphQL: cancellations freeing adjacent and overlapping starts at once, a
// cancellation against a booking of the start it frees, a join against a
// cancellation of the start it asks for, an offer's hold ending against
// bookings, and one client joining many times at once. Each race ends with
// the invariants checked in the database and, through the API, that no
// waiting entry keeps a free matching start for more than 5 s.
func TestWaitlistReplicaRaces(t *testing.T) {
	t.Parallel()
	w := startWaitlistRig(t)
	for round := range 2 { // more interleavings
		t.Run(fmt.Sprintf("two cancellations at once %d", round), w.raceCancellations)
		t.Run(fmt.Sprintf("cancellation against a booking %d", round), w.raceCancelBooking)
	}
	t.Run("join against a cancellation", w.raceJoinCancel)
	t.Run("offer hold ending against bookings", w.raceOfferEnd)
	t.Run("one client joining at once", w.raceJoins)
	if t.Failed() {
		return
	}
	w.settle(t, w.allJoined())
	for i, s := range w.servers {
		if code, _ := s.stop(); code != 0 {
			t.Errorf("replica %d exited %d\nstderr: %.2000s", i, code, s.stderr)
		}
	}
	checkInvariants(t, w.db)
	checkWaitlist(t, w.db)
}

// wlRig is three replicas on one database holding the demo account.
type wlRig struct {
	servers [3]*server
	client  *http.Client
	key     string
	account string
	ids     demoIDs
	barbers [2]string // João, Miguel: both cut hair
	db      *store.DB

	mu     sync.Mutex
	groups []wlGroup // unused (day, time) pairs, each a group's own hour
	joined []*wlJoin // every entry made, oldest first
	phone  atomic.Int64
}

// wlGroup is a race's own hour: one day at one local time, where the test
// alone books and waits.
type wlGroup struct{ day, hour string }

// wlJoin is an entry as joined: what it asks for and its id.
type wlJoin struct {
	id, phone, ref   string
	barber           string // "": any barber
	from, to         string // dates
	timeFrom, timeTo string // HH:MM
	holdSeconds      int
	created          int // order of creation
	group            wlGroup
	code             string // of the join, when refused
	waiting          string // the entry already_waiting names
	replayed         bool
}

func startWaitlistRig(t *testing.T) *wlRig {
	dbURL := storetest.URL(t, dialect.Postgres)
	dir := t.TempDir()
	w := &wlRig{}
	var wg sync.WaitGroup
	for i := range w.servers {
		wg.Go(func() {
			w.servers[i] = startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0",
				"--max-holds-per-key", "0", "--jobs-interval", "500ms", "--database-url", dbURL)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	keys := seedDemo(t, dbURL)
	w.key, w.account = keys.APIKey, keys.AccountID
	w.ids = lisbonIDs(t, w.servers[0].URL, w.key)
	var barbers struct{ Data []map[string]any }
	if err := json.Unmarshal(call(t, "GET", w.servers[0].URL+"/api/integrations/v1/barbers?unit_id="+w.ids.unit, w.key, nil, 200).Body, &barbers); err != nil {
		t.Fatal(err)
	}
	w.barbers[0] = w.ids.joao
	for _, b := range barbers.Data {
		if b["name"] == "Miguel Costa" {
			w.barbers[1] = b["id"].(string)
		}
	}
	if w.barbers[1] == "" {
		t.Fatalf("no Miguel Costa in %v", barbers.Data)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	w.client = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	w.db = openDB(t, dbURL)
	w.phone.Store(time.Now().UnixNano() % 1_000_000)

	// Weekdays from two days ahead until four weeks ahead (an entry spans at
	// most 31 days from today), each with hours to spare at these times:
	// a group's hour is [at, at+60m), clear of the 12:00-13:00 break.
	loc, _ := time.LoadLocation("Europe/Lisbon")
	d := time.Now().In(loc).AddDate(0, 0, 2)
	for range 26 {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			for _, at := range []string{"09:30", "14:00", "16:00", "17:30"} {
				w.groups = append(w.groups, wlGroup{d.Format(time.DateOnly), at})
			}
		}
		d = d.AddDate(0, 0, 1)
	}
	return w
}

// group takes an hour no other race uses.
func (w *wlRig) group(t *testing.T) wlGroup {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.groups) == 0 {
		t.Fatal("out of free hours")
	}
	g := w.groups[0]
	w.groups = w.groups[1:]
	return g
}

// at is the local wall time minutes after the group's hour begins.
func (g wlGroup) at(minutes int) string {
	c, _ := time.Parse("15:04", g.hour)
	return g.day + "T" + c.Add(time.Duration(minutes)*time.Minute).Format("15:04") + ":00"
}

func (g wlGroup) clock(minutes int) string { return g.at(minutes)[11:16] }

// gql posts one GraphQL operation to replica i and returns its data and
// the code of its first error ("" when none).
func (w *wlRig) gql(i int, query string, vars map[string]any) (map[string]json.RawMessage, string, error) {
	data, ext, err := w.gqlExt(i, query, vars)
	code, _ := ext["code"].(string)
	return data, code, err
}

// gqlExt is gql returning the first error's extensions (nil when none).
func (w *wlRig) gqlExt(i int, query string, vars map[string]any) (map[string]json.RawMessage, map[string]any, error) {
	a, err := apitest.Do(w.client, "POST", w.servers[i%len(w.servers)].URL+"/graphql", w.key, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		Data   map[string]json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.Unmarshal(a.Body, &out); err != nil {
		return nil, nil, fmt.Errorf("%d %s: %w", a.Status, a.Body, err)
	}
	if len(out.Errors) > 0 {
		ext := out.Errors[0].Extensions
		if ext == nil {
			ext = map[string]any{}
		}
		if code, _ := ext["code"].(string); code == "" {
			ext["code"] = "no code: " + out.Errors[0].Message
		}
		return out.Data, ext, nil
	}
	return out.Data, nil, nil
}

// must is gql that fails the test on any error.
func (w *wlRig) must(t *testing.T, i int, query string, vars map[string]any, field string, into any) {
	t.Helper()
	data, code, err := w.gql(i, query, vars)
	if err != nil || code != "" {
		t.Fatalf("%s: %v %s", query, err, code)
	}
	if err := json.Unmarshal(data[field], into); err != nil {
		t.Fatalf("%s: %v: %s", query, err, data[field])
	}
}

func (w *wlRig) nextPhone() string { return fmt.Sprintf("+35192%07d", w.phone.Add(1)%10_000_000) }

const gqlBook = `mutation($in: CreateAppointmentInput!) { createAppointment(input: $in) { appointment { id } } }`

// book books a haircut at startsAt with barber on replica i and returns the
// appointment id, or the refusal's code.
func (w *wlRig) book(i int, barber, startsAt string) (string, string, error) {
	data, code, err := w.gql(i, gqlBook, map[string]any{"in": map[string]any{
		"unitId": w.ids.unit, "serviceId": w.ids.haircut, "barberId": barber, "startsAt": startsAt,
		"client": map[string]any{"name": "Race Client", "phone": w.nextPhone()},
	}})
	if err != nil || code != "" {
		return "", code, err
	}
	var p struct{ Appointment struct{ ID string } }
	err = json.Unmarshal(data["createAppointment"], &p)
	return p.Appointment.ID, "", err
}

func (w *wlRig) mustBook(t *testing.T, barber, startsAt string) string {
	t.Helper()
	id, code, err := w.book(0, barber, startsAt)
	if err != nil || code != "" {
		t.Fatalf("book %s with %s: %v %s", startsAt, barber, err, code)
	}
	return id
}

func (w *wlRig) cancel(i int, id string) (string, error) {
	_, code, err := w.gql(i, `mutation($id: ID!) { cancelAppointment(id: $id, reason: "race") { id } }`, map[string]any{"id": id})
	return code, err
}

// block books both barbers at the group's hour, [at, at+60m), in two
// half hours each, and returns the appointments by barber.
func (w *wlRig) block(t *testing.T, g wlGroup) [2][2]string {
	var out [2][2]string
	for b := range w.barbers {
		for h := range 2 {
			out[b][h] = w.mustBook(t, w.barbers[b], g.at(30*h))
		}
	}
	return out
}

// join puts j on the waitlist with POST /waitlist on replica i, setting
// its id, or its refusal's code (and the entry already_waiting names).
func (w *wlRig) join(i int, j *wlJoin) error {
	in := map[string]any{
		"unit_id": w.ids.unit, "service_id": w.ids.haircut, "from": j.from, "to": j.to,
		"time_from": j.timeFrom, "time_to": j.timeTo, "offer_hold_seconds": j.holdSeconds,
		"client": map[string]any{"name": "Waiting Client", "phone": j.phone},
	}
	if j.barber != "" {
		in["barber_id"] = j.barber
	}
	if j.ref != "" {
		in["external_reference"] = j.ref
	}
	r, err := apitest.Do(w.client, "POST", w.servers[i%len(w.servers)].URL+"/api/integrations/v1/waitlist", w.key, in)
	if err != nil {
		return err
	}
	if r.Status >= 400 {
		var p struct {
			Existing string `json:"waitlist_entry_id"`
		}
		j.code, j.waiting = r.Code(), ""
		if json.Unmarshal(r.Body, &p) == nil {
			j.waiting = p.Existing
		}
		return nil
	}
	var e struct{ ID, Status string }
	if err := json.Unmarshal(r.Body, &e); err != nil {
		return fmt.Errorf("%d %s: %w", r.Status, r.Body, err)
	}
	replayed := r.Header.Get("Idempotent-Replayed") == "true"
	switch {
	case r.Status != map[bool]int{true: 200, false: 201}[replayed]:
		return fmt.Errorf("join answered %d (replayed %v): %s", r.Status, replayed, r.Body)
	case e.Status != "waiting" && (e.Status != "offered" || replayed):
		// A join that raced a freeing may come back offered already.
		return fmt.Errorf("joined entry %s is %s", e.ID, e.Status)
	}
	j.id, j.replayed = e.ID, replayed
	if !replayed {
		w.mu.Lock()
		j.created = len(w.joined)
		w.joined = append(w.joined, j)
		w.mu.Unlock()
	}
	return nil
}

// waiter is an entry of the group's hour, minutes [from, to) of it.
func (w *wlRig) waiter(g wlGroup, barber string, from, to, hold int) *wlJoin {
	return &wlJoin{phone: w.nextPhone(), barber: barber, from: g.day, to: g.day,
		timeFrom: g.clock(from), timeTo: g.clock(to), holdSeconds: hold, group: g}
}

func (w *wlRig) mustJoin(t *testing.T, js ...*wlJoin) {
	t.Helper()
	for _, j := range js {
		if err := w.join(0, j); err != nil || j.id == "" {
			t.Fatalf("join %+v: %v %s", j, err, j.code)
		}
	}
}

func (w *wlRig) allJoined() []*wlJoin {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.joined)
}

// entries reads the entries of js from the database, by id.
func (w *wlRig) entries(t *testing.T, js []*wlJoin) map[string]*ent.WaitlistEntry {
	t.Helper()
	ids := make([]string, len(js))
	for i, j := range js {
		ids[i] = j.id
	}
	es, err := w.db.WaitlistEntry.Query().Where(waitlistentry.IDIn(ids...)).All(w.ctx())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ent.WaitlistEntry{}
	for _, e := range es {
		out[e.ID] = e
	}
	return out
}

func (w *wlRig) ctx() context.Context { return tenant.WithAccount(context.Background(), w.account) }

var lisbon, _ = time.LoadLocation("Europe/Lisbon")

// local is an instant as a Lisbon wall time, the API's form.
func local(t time.Time) string { return t.In(lisbon).Format("2006-01-02T15:04:05") }

// matches says whether the entry j asks for a start at barber's local time.
func (j *wlJoin) matches(barber, startsAt string) bool {
	d, c := startsAt[:10], startsAt[11:16]
	return (j.barber == "" || j.barber == barber) && d >= j.from && d <= j.to && c >= j.timeFrom && c < j.timeTo
}

const gqlNext = `query($u: ID!, $s: ID!, $b: ID, $after: String, $tf: String, $tt: String) {
	nextFreeSlots(unitId: $u, serviceId: $s, barberId: $b, after: $after, limit: 1, timeFrom: $tf, timeTo: $tt) { slots { startsAt barberId } } }`

// freeFor asks replica i for the first free start an entry asks for, or "".
func (w *wlRig) freeFor(t *testing.T, i int, j *wlJoin) string {
	t.Helper()
	vars := map[string]any{"u": w.ids.unit, "s": w.ids.haircut, "after": j.from + "T00:00:00", "tf": j.timeFrom, "tt": j.timeTo}
	if j.barber != "" {
		vars["b"] = j.barber
	}
	var next struct {
		Slots []struct{ StartsAt, BarberID string }
	}
	w.must(t, i, gqlNext, vars, "nextFreeSlots", &next)
	if len(next.Slots) == 0 || !j.matches(next.Slots[0].BarberID, next.Slots[0].StartsAt) {
		return ""
	}
	return next.Slots[0].StartsAt + " with " + next.Slots[0].BarberID
}

// settle waits until no waiting entry of js has a free matching start (as
// availability shows it), failing after 5 s, and returns the entries then.
func (w *wlRig) settle(t *testing.T, js []*wlJoin) map[string]*ent.WaitlistEntry {
	t.Helper()
	began := time.Now()
	for try := 0; ; try++ {
		es := w.entries(t, js)
		var missed []string
		for _, j := range js {
			if e := es[j.id]; e != nil && e.Status == waitlistentry.StatusWaiting {
				if free := w.freeFor(t, try, j); free != "" {
					missed = append(missed, fmt.Sprintf("%s (created #%d, %s %s-%s, barber %q) has %s free", j.id, j.created, j.from, j.timeFrom, j.timeTo, j.barber, free))
				}
			}
		}
		// Settled, unless an offer was made while the starts were checked.
		if len(missed) == 0 && sameEntries(es, w.entries(t, js)) {
			if try > 0 {
				t.Logf("settled after %v", time.Since(began).Round(time.Millisecond))
			}
			return es
		}
		if time.Since(began) > 5*time.Second {
			t.Fatalf("waiting entries with a free matching start for over 5 s (%d openings left to offer):\n  %s",
				storetest.Count(t, w.db, "SELECT COUNT(*) FROM openings"), strings.Join(missed, "\n  "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameEntries says whether two reads of entries found them as they were.
func sameEntries(a, b map[string]*ent.WaitlistEntry) bool {
	for id, e := range a {
		if f := b[id]; f == nil || f.Status != e.Status || (f.OfferedAt == nil) != (e.OfferedAt == nil) {
			return false
		}
	}
	return len(a) == len(b)
}

// checkOffers checks a group's entries js (oldest first) as settled: each
// offer is one the entry asked for, held as it asked, and no older entry
// that the offered start suits still waits (oldest first). It returns the
// offers as "#index start". (checkWaitlist: live offers never overlap.)
func checkOffers(t *testing.T, js []*wlJoin, es map[string]*ent.WaitlistEntry) []string {
	t.Helper()
	var out []string
	for i, j := range js {
		e := es[j.id]
		if e == nil {
			t.Fatalf("entry %s is gone", j.id)
		}
		if e.OfferStartsAt == nil {
			if e.Status == waitlistentry.StatusOffered || e.Status == waitlistentry.StatusBooked || e.OfferHoldID != nil {
				t.Errorf("entry %s is %s without a whole offer: %+v", e.ID, e.Status, e)
			}
			continue
		}
		start := local(*e.OfferStartsAt)
		out = append(out, fmt.Sprintf("#%d %s", i, start[11:16]))
		if !j.matches(*e.OfferBarberID, start) {
			t.Errorf("entry %s (%s %s-%s, barber %q) offered %s with %s", e.ID, j.from, j.timeFrom, j.timeTo, j.barber, start, *e.OfferBarberID)
		}
		if e.OfferEndsAt.Sub(*e.OfferStartsAt) != 30*time.Minute {
			t.Errorf("entry %s offered %s-%s, not a haircut's 30 minutes", e.ID, e.OfferStartsAt, e.OfferEndsAt)
		}
		if (e.OfferHoldID != nil) != (j.holdSeconds > 0) {
			t.Errorf("entry %s with offer_hold_seconds %d: offer hold %v", e.ID, j.holdSeconds, e.OfferHoldID)
		}
		for _, o := range js[:i] {
			if oe := es[o.id]; oe.Status == waitlistentry.StatusWaiting && o.matches(*e.OfferBarberID, start) {
				t.Errorf("entry #%d %s offered %s while the older #%d %s, which asks for it too, waits", i, e.ID, start, slices.Index(js, o), o.id)
			}
		}
	}
	return out
}

// tally counts outcomes for the log.
type tally struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *tally) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[k]++
}

func (c *tally) String() string {
	var lines []string
	for k, n := range c.m {
		lines = append(lines, fmt.Sprintf("%dx %s", n, k))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}
