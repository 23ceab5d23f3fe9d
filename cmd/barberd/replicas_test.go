package main

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// TestReplicas runs two server processes on one database and races them:
// the no-double-booking and idempotency guarantees live in the database,
// so they must hold across processes. PostgreSQL is the production case
// (replicas behind a load balancer); SQLite serialises writers across
// processes with immediate transactions, so it must hold there too.
func TestReplicas(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()

			// Both replicas start (and migrate) at once.
			var servers [2]*server
			var wg sync.WaitGroup
			for i := range servers {
				wg.Go(func() {
					servers[i] = startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--database-url", dbURL)
				})
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			keys := seedDemo(t, dbURL)
			ids := lisbonIDs(t, servers[0].URL, keys.APIKey)
			day := nextWeekday(time.Tuesday)

			// One connection per contender, opened before the race.
			const n = 40
			tr := &http.Transport{MaxIdleConns: 2 * n, MaxIdleConnsPerHost: n, IdleConnTimeout: time.Minute}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: time.Minute}
			warm := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-warm
					r, err := apitest.Do(client, "GET", servers[i%2].URL+"/api/integrations/v1/units", keys.APIKey, nil)
					if err != nil || r.Status != 200 {
						t.Errorf("warm-up: %v %v", err, r)
					}
				})
			}
			close(warm)
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}

			race := func(n int, body func(i int) map[string]any) (map[string]int, []*reply) {
				out := make([]*reply, n)
				barrier := make(chan struct{})
				for i := range n {
					b := body(i)
					wg.Go(func() {
						<-barrier
						r, err := apitest.Do(client, "POST", servers[i%2].URL+"/api/integrations/v1/appointments", keys.APIKey, b)
						if err != nil {
							t.Errorf("contender %d: %v", i, err)
							return
						}
						out[i] = r
					})
				}
				close(barrier)
				wg.Wait()
				if t.Failed() {
					t.FailNow()
				}
				counts := map[string]int{}
				for _, r := range out {
					k := fmt.Sprint(r.Status)
					if r.Status >= 400 {
						k += " " + r.Code()
					}
					if r.Status >= 500 {
						t.Errorf("server error: %d %s", r.Status, r.Body)
					}
					counts[k]++
				}
				return counts, out
			}

			began := time.Now()
			counts, _ := race(n, func(i int) map[string]any {
				return ids.bookingAt(day+"T10:00:00", fmt.Sprintf("+3519110%05d", i), fmt.Sprintf("slot-%d", i))
			})
			t.Logf("same slot, %d creates over 2 processes in %v: %v", n, time.Since(began), counts)
			if len(counts) != 2 || counts["201"] != 1 || counts["409 slot_unavailable"] != n-1 {
				t.Fatalf("outcomes %v, want one 201 and %d 409 slot_unavailable", counts, n-1)
			}
			avail := call(t, "GET", fmt.Sprintf("%s/api/integrations/v1/availability?unit_id=%s&service_id=%s&barber_id=%s&date=%s",
				servers[1].URL, ids.unit, ids.haircut, ids.joao, day), keys.APIKey, nil, 200).JSON(t)
			for _, s := range avail["slots"].([]any) {
				if st := s.(map[string]any)["starts_at"]; st == day+"T10:00:00" || st == day+"T09:45:00" {
					t.Fatalf("availability still offers %v after the slot was booked", st)
				}
			}

			const m = 30
			began = time.Now()
			counts, out := race(m, func(i int) map[string]any {
				return ids.bookingAt(day+"T15:00:00", "+351911099999", "one-order")
			})
			t.Logf("one reference, %d creates over 2 processes in %v: %v", m, time.Since(began), counts)
			if len(counts) != 2 || counts["201"] != 1 || counts["200"] != m-1 {
				t.Fatalf("outcomes %v, want one 201 and %d 200", counts, m-1)
			}
			aptIDs := map[any]bool{}
			for _, r := range out {
				if r.Status == 200 && r.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("200 without Idempotent-Replayed: true")
				}
				aptIDs[r.JSON(t)["id"]] = true
			}
			if len(aptIDs) != 1 {
				t.Fatalf("responses name %d appointments: %v", len(aptIDs), aptIDs)
			}

			// The database holds exactly the two appointments, and each
			// key-holder was told of each exactly once.
			var notes []any
			for {
				r := call(t, "GET", servers[0].URL+"/api/integrations/v1/notifications/pending?limit=200", keys.APIKey, nil, 200).JSON(t)
				page, _ := r["data"].([]any)
				if len(page) == 0 {
					break
				}
				notes = append(notes, page...)
			}
			if len(notes) != 2 {
				t.Fatalf("%d notifications, want 2 (one per appointment): %v", len(notes), notes)
			}

			for i, s := range servers {
				if code, _ := s.stop(); code != 0 {
					t.Errorf("replica %d exited %d\nstderr: %s", i, code, s.stderr)
				}
			}
		})
	}
}

// TestConcurrentMigrate starts several migrations of one brand-new database
// at once, as replicas (or a deploy script and a replica) do: every one
// succeeds, and each migration is applied once.
func TestConcurrentMigrate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			const n = 4
			var wg sync.WaitGroup
			barrier := make(chan struct{})
			for range n {
				wg.Go(func() {
					<-barrier
					if _, stderr, code := runCLI(t, "", "migrate", "--database-url", dbURL); code != 0 {
						t.Errorf("concurrent migrate: exit %d: %s", code, stderr)
					}
				})
			}
			barberd(t) // build before the race
			close(barrier)
			wg.Wait()
			seedDemo(t, dbURL) // the schema is whole
		})
	}
}
