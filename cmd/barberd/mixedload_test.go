package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// TestReplicasMixedLoad runs three server processes on one PostgreSQL, as
// replicas behind a load balancer, under a mixed load aimed at a few slots
// (holds, creates with and without holds, repeats of one reference,
// reschedules, cancels, releases, notification polls with two keys, and the
// background jobs of every replica), then checks the invariants in the
// database and that every notification reached each key exactly once.
func TestReplicasMixedLoad(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, dialect.Postgres)
	dir := t.TempDir()
	var servers [3]*server
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			servers[i] = startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--max-holds-per-key", "0", "--jobs-interval", "500ms", "--database-url", dbURL)
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	keys := seedDemo(t, dbURL)
	ids := lisbonIDs(t, servers[0].URL, keys.APIKey)
	var barbers struct{ Data []map[string]any }
	if err := json.Unmarshal(call(t, "GET", servers[0].URL+"/api/integrations/v1/barbers?unit_id="+ids.unit, keys.APIKey, nil, 200).Body, &barbers); err != nil {
		t.Fatal(err)
	}
	barberIDs := []string{ids.joao}
	for _, b := range barbers.Data {
		if b["name"] == "Miguel Costa" {
			barberIDs = append(barberIDs, b["id"].(string))
		}
	}
	if len(barberIDs) != 2 {
		t.Fatalf("barbers: %v", barbers.Data)
	}
	// A few overlapping half-hour slots, so the clients fight over them.
	day := nextWeekday(time.Wednesday)
	var starts []string
	for _, hm := range []string{"10:00", "10:15", "10:30", "10:45", "11:00", "11:15", "11:30", "14:00", "14:15", "14:30", "14:45", "15:00"} {
		starts = append(starts, day+"T"+hm+":00")
	}
	keyList := []string{keys.APIKey, keys.AdminAPIKey}

	const clients = 12
	const loadFor = 10 * time.Second
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	httpClient := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var (
		mu       sync.Mutex
		ops      = map[string]int{} // "op status code" -> count
		total    int
		apts     []string                    // appointments made, to reschedule and cancel
		received = [2]map[string]int{{}, {}} // per key: notification id -> times received
	)
	record := func(op string, r *reply, err error) {
		mu.Lock()
		defer mu.Unlock()
		total++
		if err != nil {
			t.Errorf("%s: %v", op, err)
			ops[op+" transport error"]++
			return
		}
		k := fmt.Sprintf("%s %d", op, r.Status)
		if r.Status >= 400 {
			k += " " + r.Code()
		}
		ops[k]++
		switch {
		case r.Status >= 500:
			t.Errorf("%s: %d %s", op, r.Status, r.Body)
		case r.Status == 400 || r.Status == 404 || r.Status == 422 || r.Status == 429:
			t.Errorf("%s: %d %s", op, r.Status, r.Body)
		}
	}
	poll := func(c *http.Client, base string, k int, limit int) int {
		r, err := apitest.Do(c, "GET", fmt.Sprintf("%s/api/integrations/v1/notifications/pending?limit=%d", base, limit), keyList[k], nil)
		record("poll", r, err)
		if err != nil || r.Status != 200 {
			return 0
		}
		var page struct{ Data []struct{ ID string } }
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Errorf("poll: %v", err)
			return 0
		}
		mu.Lock()
		for _, n := range page.Data {
			received[k][n.ID]++
		}
		mu.Unlock()
		return len(page.Data)
	}

	stop := time.Now().Add(loadFor)
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 42))
			base := servers[c%len(servers)].URL
			api := base + "/api/integrations/v1"
			k := c % 2
			key := keyList[k]
			pick := func(l []string) string { return l[rng.IntN(len(l))] }
			booking := func(start, barber string) map[string]any {
				b := ids.bookingAt(start, fmt.Sprintf("+3519150%05d", rng.IntN(100000)), "")
				b["barber_id"] = barber
				if rng.IntN(5) > 0 {
					// A small pool of references, shared by both keys.
					b["external_reference"] = fmt.Sprintf("mix-%d", rng.IntN(40))
				}
				return b
			}
			knownApt := func() string {
				mu.Lock()
				defer mu.Unlock()
				if len(apts) == 0 {
					return ""
				}
				return apts[rng.IntN(len(apts))]
			}
			created := func(r *reply) {
				if r.Status == 201 { // a replay names one already known
					var a struct{ ID string }
					if json.Unmarshal(r.Body, &a) == nil && a.ID != "" {
						mu.Lock()
						apts = append(apts, a.ID)
						mu.Unlock()
					}
				}
			}
			for time.Now().Before(stop) {
				switch p := rng.IntN(100); {
				case p < 20: // hold, then book it, release it, or let it expire
					start, barber := pick(starts), pick(barberIDs)
					r, err := apitest.Do(httpClient, "POST", api+"/slots/hold", key, map[string]any{
						"unit_id": ids.unit, "service_id": ids.haircut, "barber_id": barber, "starts_at": start, "ttl_seconds": 10})
					record("hold", r, err)
					if err != nil || r.Status != 201 {
						continue
					}
					var h struct {
						HoldID string `json:"hold_id"`
					}
					_ = json.Unmarshal(r.Body, &h)
					switch rng.IntN(4) {
					case 0, 1:
						b := booking(start, barber)
						b["hold_id"] = h.HoldID
						r, err := apitest.Do(httpClient, "POST", api+"/appointments", key, b)
						record("create with hold", r, err)
						if err == nil {
							created(r)
						}
					case 2:
						r, err := apitest.Do(httpClient, "POST", api+"/slots/hold/"+h.HoldID+"/release", key, nil)
						record("release", r, err)
					}
				case p < 45:
					r, err := apitest.Do(httpClient, "POST", api+"/appointments", key, booking(pick(starts), pick(barberIDs)))
					record("create", r, err)
					if err == nil {
						created(r)
					}
				case p < 60:
					if id := knownApt(); id != "" {
						r, err := apitest.Do(httpClient, "POST", api+"/appointments/"+id+"/reschedule", key,
							map[string]any{"starts_at": pick(starts), "barber_id": pick(barberIDs)})
						record("reschedule", r, err)
					}
				case p < 63: // rarely, so confirmed appointments remain to check
					if id := knownApt(); id != "" {
						r, err := apitest.Do(httpClient, "POST", api+"/appointments/"+id+"/cancel", key,
							map[string]any{"reason": "mixed load"})
						record("cancel", r, err)
						if err == nil && r.Status == 200 {
							mu.Lock()
							apts = slices.DeleteFunc(apts, func(a string) bool { return a == id })
							mu.Unlock()
						}
					}
				default:
					poll(httpClient, base, k, 1+rng.IntN(20))
				}
			}
		})
	}
	wg.Wait()

	// Drain what is still pending, each key through another replica.
	for k := range keyList {
		for poll(httpClient, servers[(k+1)%len(servers)].URL, k, 200) > 0 {
		}
	}
	for i, s := range servers {
		if code, _ := s.stop(); code != 0 {
			t.Errorf("replica %d exited %d\nstderr: %.2000s", i, code, s.stderr)
		}
	}

	var lines []string
	for k, n := range ops {
		lines = append(lines, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(lines)
	t.Logf("%d operations from %d clients over 3 replicas in %v:\n  %s", total, clients, loadFor, strings.Join(lines, "\n  "))

	db := openDB(t, dbURL)
	checkInvariants(t, db)
	notes := storetest.Count(t, db, "SELECT COUNT(*) FROM notifications")
	for k := range keyList {
		dups := 0
		for id, n := range received[k] {
			if n > 1 {
				dups++
				t.Errorf("key %d received notification %s %d times", k, id, n)
			}
		}
		if len(received[k]) != notes {
			t.Errorf("key %d received %d distinct notifications, the database holds %d", k, len(received[k]), notes)
		}
		t.Logf("key %d: %d notifications received, %d more than once; the database holds %d", k, len(received[k]), dups, notes)
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM deliveries WHERE delivered_at IS NULL"); n != 0 {
		t.Errorf("%d deliveries still pending after the drain", n)
	}
	if n := storetest.Count(t, db, "SELECT COUNT(*) FROM deliveries"); n != 2*notes {
		t.Errorf("%d deliveries, want %d (two keys x %d notifications)", n, 2*notes, notes)
	}
	t.Logf("database: %d appointments (%d confirmed), %d holds (%d expired), %d notifications",
		storetest.Count(t, db, "SELECT COUNT(*) FROM appointments"), storetest.Count(t, db, "SELECT COUNT(*) FROM appointments WHERE status = 'confirmed'"),
		storetest.Count(t, db, "SELECT COUNT(*) FROM holds"), storetest.Count(t, db, "SELECT COUNT(*) FROM holds WHERE status = 'expired'"), notes)
}
