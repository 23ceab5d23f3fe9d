package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"barberd/ent/appointment"
	"barberd/ent/reservation"
	"barberd/graph/domain"
	"barberd/rest"
	"barberd/rest/apitest"
)

// The race tests fire many identical or conflicting requests at once and
// check that the database, not luck, decides the outcome. Every connection
// is opened before the race (a race over connection set-up is no race), and
// every goroutine waits on one barrier.

// racer is an HTTP client with a connection per contender, opened in
// advance.
type racer struct {
	t      *testing.T
	base   string
	client *http.Client
}

// newRacer opens n keep-alive connections to the env's server and keeps
// them idle for the race.
func newRacer(t *testing.T, e *env, n int) *racer {
	t.Helper()
	return newRacerAt(t, e.srv.URL, e.keys.APIKey, n)
}

// newRacerAt is newRacer for the server at base, warmed up with key.
func newRacerAt(t *testing.T, base, key string, n int) *racer {
	t.Helper()
	tr := &http.Transport{
		MaxIdleConns:        2 * n,
		MaxIdleConnsPerHost: 2 * n,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	r := &racer{t: t, base: base, client: &http.Client{Transport: tr, Timeout: time.Minute}}
	// Warm up: n simultaneous GETs make the transport open n connections,
	// which then wait idle in the pool.
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			res, err := r.send("GET", "/units", key, nil)
			if err != nil {
				t.Errorf("warm-up: %v", err)
			} else if res.Status != http.StatusOK {
				t.Errorf("warm-up: status %d: %s", res.Status, res.Body)
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return r
}

// send is doRequest for goroutines: it returns errors instead of stopping
// the test, and checks the exchange against the OpenAPI document.
func (r *racer) send(method, path, key string, body any) (*response, error) {
	req, err := apitest.NewRequest(method, r.base+rest.BasePath+path, key, body)
	if err != nil {
		return nil, err
	}
	res, err := apitest.Send(r.client, req)
	if err != nil {
		return nil, err
	}
	if err := openAPI(r.t).Check(req, res.Status, res.Header, res.Body); err != nil {
		r.t.Errorf("response does not match openapi.json: %v\nbody: %s", err, res.Body)
	}
	return res, nil
}

// race runs n contenders at once, released together by one barrier, and
// returns their responses in contender order.
func (r *racer) race(n int, contender func(i int) (method, path, key string, body any)) []*response {
	r.t.Helper()
	out := make([]*response, n)
	var wg sync.WaitGroup
	barrier := make(chan struct{})
	for i := range n {
		method, path, key, body := contender(i)
		wg.Go(func() {
			<-barrier
			res, err := r.send(method, path, key, body)
			if err != nil {
				r.t.Errorf("contender %d: %v", i, err)
				return
			}
			out[i] = res
		})
	}
	close(barrier)
	wg.Wait()
	if r.t.Failed() {
		r.t.FailNow()
	}
	return out
}

// tally counts responses by status and problem code, e.g. "201", "409
// slot_unavailable", and fails the test on any 5xx.
func tally(t *testing.T, rs []*response) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, r := range rs {
		k := fmt.Sprint(r.Status)
		if r.Status >= 400 {
			k += " " + r.Code()
		}
		if r.Status >= 500 {
			t.Errorf("server error: %d %s", r.Status, r.Body)
		}
		counts[k]++
	}
	t.Logf("outcomes: %v", counts)
	return counts
}

// wantTally fails unless the outcomes are exactly want.
func wantTally(t *testing.T, got, want map[string]int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
}

// raceBooking is a create body for contender i: its own phone and reference.
func (e *env) raceBooking(i int, service, barberID, startsAt string) map[string]any {
	b := e.booking(service, startsAt)
	b["client"] = map[string]any{"name": fmt.Sprintf("Racer %d", i), "phone": fmt.Sprintf("+3519100%05d", i)}
	b["external_reference"] = fmt.Sprintf("race-%d", i)
	if barberID != "" {
		b["barber_id"] = barberID
	}
	return b
}

// raceHold is a hold body for the Lisbon unit.
func (e *env) raceHold(service, barberID, startsAt string) map[string]any {
	b := map[string]any{"unit_id": e.unit(lisbon), "service_id": e.service(service), "starts_at": startsAt}
	if barberID != "" {
		b["barber_id"] = barberID
	}
	return b
}

// blocking counts what occupies the barber at start: confirmed appointments
// starting then, and reservation rows (of appointments and holds).
func (e *env) blocking(t *testing.T, barberID, startsAt string) (appointments, reservations int) {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	start, err := time.ParseInLocation("2006-01-02T15:04:05", startsAt, loc)
	if err != nil {
		t.Fatal(err)
	}
	appointments, err = e.db.Appointment.Query().Where(
		appointment.BarberID(barberID), appointment.StatusEQ(appointment.StatusConfirmed),
		appointment.StartsAt(start.UTC()),
	).Count(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	reservations, err = e.db.Reservation.Query().Where(reservation.BarberID(barberID)).Count(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return appointments, reservations
}

const racers = 40

func TestRaceCreateSameSlot(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, racers)
		joaoID := e.barber(joao)
		rs := r.race(racers, func(i int) (string, string, string, any) {
			return "POST", "/appointments", e.keys.APIKey, e.raceBooking(i, haircut, joaoID, tuesdayAt10)
		})
		wantTally(t, tally(t, rs), map[string]int{"201": 1, "409 slot_unavailable": racers - 1})
		apts, rsvs := e.blocking(t, joaoID, tuesdayAt10)
		if apts != 1 || rsvs != 1 {
			t.Fatalf("database: %d confirmed appointments, %d reservations at the slot; want 1 and 1", apts, rsvs)
		}
		total, err := e.db.Appointment.Query().Count(e.ctx)
		if err != nil || total != 1 {
			t.Fatalf("%d appointments in the account (err %v), want 1", total, err)
		}
	})
}

func TestRaceHoldSameSlot(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, racers)
		joaoID := e.barber(joao)
		rs := r.race(racers, func(int) (string, string, string, any) {
			return "POST", "/slots/hold", e.keys.APIKey, e.raceHold(haircut, joaoID, tuesdayAt10)
		})
		wantTally(t, tally(t, rs), map[string]int{"201": 1, "409 slot_unavailable": racers - 1})
		if _, rsvs := e.blocking(t, joaoID, tuesdayAt10); rsvs != 1 {
			t.Fatalf("database: %d reservations, want 1", rsvs)
		}
	})
}

func TestRaceHoldsAndCreatesMixed(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, racers)
		joaoID := e.barber(joao)
		rs := r.race(racers, func(i int) (string, string, string, any) {
			if i%2 == 0 {
				return "POST", "/slots/hold", e.keys.APIKey, e.raceHold(haircut, joaoID, tuesdayAt10)
			}
			return "POST", "/appointments", e.keys.APIKey, e.raceBooking(i, haircut, joaoID, tuesdayAt10)
		})
		wantTally(t, tally(t, rs), map[string]int{"201": 1, "409 slot_unavailable": racers - 1})
		apts, rsvs := e.blocking(t, joaoID, tuesdayAt10)
		holds, err := e.db.Hold.Query().Count(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rsvs != 1 || apts+holds != 1 {
			t.Fatalf("database: %d reservations, %d appointments, %d holds; want one reservation of one winner", rsvs, apts, holds)
		}
	})
}

func TestRaceAutoAssign(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, racers)
		rs := r.race(racers, func(i int) (string, string, string, any) {
			return "POST", "/appointments", e.keys.APIKey, e.raceBooking(i, haircut, "", tuesdayAt10)
		})
		wantTally(t, tally(t, rs), map[string]int{"201": 2, "409 slot_unavailable": racers - 2})
		barbers := map[string]bool{}
		for _, res := range rs {
			if res.Status == http.StatusCreated {
				barbers[res.JSON(t)["barber_id"].(string)] = true
			}
		}
		if !barbers[e.barber(joao)] || !barbers[e.barber(miguel)] {
			t.Fatalf("winners' barbers %v, want João and Miguel", barbers)
		}
		for _, name := range []string{joao, miguel} {
			if apts, rsvs := e.blocking(t, e.barber(name), tuesdayAt10); apts != 1 || rsvs != 1 {
				t.Fatalf("%s: %d appointments, %d reservations; want 1 and 1", name, apts, rsvs)
			}
		}
	})
}

func TestRaceIdempotentCreate(t *testing.T) {
	t.Parallel()
	const n = 30
	each(t, func(t *testing.T, e *env) {
		r := newRacer(t, e, n)
		joaoID := e.barber(joao)
		body := e.raceBooking(0, haircut, joaoID, tuesdayAt10)
		body["external_reference"] = "crm-order-4711"
		rs := r.race(n, func(int) (string, string, string, any) {
			return "POST", "/appointments", e.keys.APIKey, body
		})
		wantTally(t, tally(t, rs), map[string]int{"201": 1, "200": n - 1})
		ids := map[string]bool{}
		for _, res := range rs {
			replayed := res.Header.Get("Idempotent-Replayed")
			if res.Status == http.StatusOK && replayed != "true" {
				t.Errorf("200 without Idempotent-Replayed: true (got %q)", replayed)
			}
			if res.Status == http.StatusCreated && replayed != "" {
				t.Errorf("201 with Idempotent-Replayed: %q", replayed)
			}
			ids[res.JSON(t)["id"].(string)] = true
		}
		if len(ids) != 1 {
			t.Fatalf("responses name %d appointments, want 1: %v", len(ids), ids)
		}
		total, err := e.db.Appointment.Query().Count(e.ctx)
		if err != nil || total != 1 {
			t.Fatalf("%d appointments in the database (err %v), want 1", total, err)
		}
		created, err := e.db.Notification.Query().Count(e.ctx)
		if err != nil || created != 1 {
			t.Fatalf("%d notifications (err %v), want 1 appointment.created", created, err)
		}
	})
}

// lisbonStarts are n distinct bookable (barber, start) pairs on the demo
// Tuesday for a 30-minute haircut.
func (e *env) lisbonStarts(n int) [][2]string {
	var out [][2]string
	for _, b := range []string{e.barber(joao), e.barber(miguel)} {
		for m := 9 * 60; m < 19*60; m += 30 {
			if m >= 12*60 && m < 13*60 {
				continue
			}
			out = append(out, [2]string{b, fmt.Sprintf("%sT%02d:%02d:00", tuesday, m/60, m%60)})
		}
	}
	if len(out) < n {
		panic("not enough slots")
	}
	return out[:n]
}

func TestRaceNotificationPolls(t *testing.T) {
	t.Parallel()
	const (
		n       = 18 // half the demo Tuesday's haircut slots
		pollers = 8
	)
	each(t, func(t *testing.T, e *env) {
		second := e.key(domain.ScopeNotificationsRead) // made before the events, so owed all of them
		want := map[string]bool{}
		for i, s := range e.lisbonStarts(n) {
			res := e.do("POST", "/appointments", e.keys.APIKey, e.raceBooking(i, haircut, s[0], s[1]))
			expect(t, res, http.StatusCreated, "")
			want[res.JSON(t)["id"].(string)] = false
		}
		r := newRacer(t, e, 2*pollers)

		// poll drains the key's pending notifications with pollers
		// concurrent loops and returns what each notification id was
		// received as, and how often.
		poll := func(keys ...string) map[string]map[string]int {
			got := map[string]map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			barrier := make(chan struct{})
			for _, key := range keys {
				got[key] = map[string]int{}
				for range pollers {
					wg.Go(func() {
						<-barrier
						for {
							res, err := r.send("GET", "/notifications/pending?limit=3", key, nil)
							if err != nil {
								t.Errorf("poll: %v", err)
								return
							}
							if res.Status != http.StatusOK {
								t.Errorf("poll: %d %s", res.Status, res.Body)
								return
							}
							var raw struct {
								Data []map[string]any `json:"data"`
							}
							if err := json.Unmarshal(res.Body, &raw); err != nil {
								t.Errorf("poll: %v: %s", err, res.Body)
								return
							}
							if len(raw.Data) == 0 {
								return
							}
							if len(raw.Data) > 3 {
								t.Errorf("poll returned %d notifications, limit 3", len(raw.Data))
							}
							mu.Lock()
							for _, nt := range raw.Data {
								if nt["type"] != domain.EventCreated {
									t.Errorf("notification type %v", nt["type"])
								}
								got[key][nt["id"].(string)+" "+nt["appointment_id"].(string)]++
							}
							mu.Unlock()
						}
					})
				}
			}
			close(barrier)
			wg.Wait()
			return got
		}
		check := func(name string, got map[string]int) {
			t.Helper()
			seen := map[string]bool{}
			for k, c := range got {
				if c != 1 {
					t.Errorf("%s: notification %s received %d times", name, k, c)
				}
				_, apt, _ := strings.Cut(k, " ")
				if _, ok := want[apt]; !ok {
					t.Errorf("%s: notification for unknown appointment %s", name, apt)
				}
				seen[apt] = true
			}
			if len(got) != n || len(seen) != n {
				ids := make([]string, 0, len(got))
				for k := range got {
					ids = append(ids, k)
				}
				sort.Strings(ids)
				t.Errorf("%s: received %d notifications about %d appointments, want %d: %v", name, len(got), len(seen), n, ids)
			}
		}

		t.Run("one key", func(t *testing.T) {
			got := poll(e.keys.APIKey)
			check("demo key", got[e.keys.APIKey])
		})
		t.Run("two keys", func(t *testing.T) {
			// The demo key has drained its notifications; a fresh round of
			// events goes to both keys, and the second key still owes the
			// first round too.
			got := poll(second, e.keys.APIKey)
			check("second key", got[second])
			if len(got[e.keys.APIKey]) != 0 {
				t.Errorf("demo key got %d notifications again", len(got[e.keys.APIKey]))
			}
		})
		t.Run("two fresh keys", func(t *testing.T) {
			k1, k2 := e.key(domain.ScopeNotificationsRead), e.key(domain.ScopeNotificationsRead)
			want = map[string]bool{}
			starts := e.lisbonStarts(2 * n)[n:]
			for i, s := range starts {
				res := e.do("POST", "/appointments", e.keys.APIKey, e.raceBooking(100+i, haircut, s[0], s[1]))
				expect(t, res, http.StatusCreated, "")
				want[res.JSON(t)["id"].(string)] = false
			}
			got := poll(k1, k2)
			check("key 1", got[k1])
			check("key 2", got[k2])
		})
	})
}
