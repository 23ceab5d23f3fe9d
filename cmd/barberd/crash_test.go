package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/apitest"
)

// distinctSlots returns n Lisbon wall times ("2006-01-02T15:04:05") of
// half-hour slots that do not overlap, inside the demo barbers' hours, from
// two days ahead on: one 30-minute haircut fits each.
func distinctSlots(t testing.TB, n int) []string {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	d := time.Now().In(loc).AddDate(0, 0, 2)
	for len(out) < n {
		var spans [][2]int // minutes of the day, [from, to)
		switch d.Weekday() {
		case time.Sunday:
		case time.Saturday:
			spans = [][2]int{{9 * 60, 14 * 60}}
		default:
			spans = [][2]int{{9 * 60, 12 * 60}, {13 * 60, 19 * 60}}
		}
		for _, sp := range spans {
			for m := sp[0]; m+30 <= sp[1] && len(out) < n; m += 30 {
				out = append(out, fmt.Sprintf("%sT%02d:%02d:00", d.Format("2006-01-02"), m/60, m%60))
			}
		}
		d = d.AddDate(0, 0, 1)
	}
	return out
}

// invariant is one check of what the database holds: a query counting the
// rows that break it.
type invariant struct{ name, query string }

// invariants hold after any load, crash or outage. "?" is now.
var invariants = []invariant{
	{"overlapping blocking reservations of one barber", `SELECT COUNT(*) FROM reservations r1 JOIN reservations r2
		ON r1.barber_id = r2.barber_id AND r1.id < r2.id AND r1.starts_at < r2.ends_at AND r2.starts_at < r1.ends_at
		WHERE (r1.expires_at IS NULL OR r1.expires_at > ?) AND (r2.expires_at IS NULL OR r2.expires_at > ?)`},
	{"overlapping confirmed appointments of one barber", `SELECT COUNT(*) FROM appointments a1 JOIN appointments a2
		ON a1.barber_id = a2.barber_id AND a1.id < a2.id AND a1.starts_at < a2.ends_at AND a2.starts_at < a1.ends_at
		WHERE a1.status = 'confirmed' AND a2.status = 'confirmed'`},
	{"confirmed appointments without exactly one reservation", `SELECT COUNT(*) FROM appointments a
		WHERE a.status = 'confirmed' AND (SELECT COUNT(*) FROM reservations r WHERE r.appointment_id = a.id) <> 1`},
	{"reservations of a confirmed appointment not at its time", `SELECT COUNT(*) FROM reservations r JOIN appointments a
		ON a.id = r.appointment_id WHERE NOT (r.starts_at <= a.starts_at AND r.ends_at >= a.ends_at AND r.barber_id = a.barber_id)`},
	{"reservations of neither a confirmed appointment nor a live hold", `SELECT COUNT(*) FROM reservations r
		WHERE NOT (
			(r.appointment_id IS NOT NULL AND r.hold_id IS NULL AND EXISTS (SELECT 1 FROM appointments a WHERE a.id = r.appointment_id AND a.status = 'confirmed'))
			OR (r.hold_id IS NOT NULL AND r.appointment_id IS NULL AND EXISTS (SELECT 1 FROM holds h WHERE h.id = r.hold_id AND (h.status = 'active' OR r.expires_at <= ?))))`},
	{"unexpired active holds without a reservation", `SELECT COUNT(*) FROM holds h
		WHERE h.status = 'active' AND h.expires_at > ? AND NOT EXISTS (SELECT 1 FROM reservations r WHERE r.hold_id = h.id)`},
	{"appointments sharing (api_key_id, external_reference)", `SELECT COUNT(*) FROM (SELECT api_key_id, external_reference
		FROM appointments WHERE external_reference IS NOT NULL GROUP BY api_key_id, external_reference HAVING COUNT(*) > 1) d`},
	{"appointments without exactly one appointment.created notification", `SELECT COUNT(*) FROM appointments a
		WHERE (SELECT COUNT(*) FROM notifications n WHERE n.appointment_id = a.id AND n.type = 'appointment.created') <> 1`},
	{"notifications (but waitlist offers) without their appointment", `SELECT COUNT(*) FROM notifications n
		WHERE n.type <> 'slot.available' AND NOT EXISTS (SELECT 1 FROM appointments a WHERE a.id = n.appointment_id)`},
	{"deliveries without their notification", `SELECT COUNT(*) FROM deliveries d
		WHERE NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = d.notification_id)`},
	{"notifications owed twice to one key", `SELECT COUNT(*) FROM (SELECT api_key_id, notification_id FROM deliveries
		GROUP BY api_key_id, notification_id HAVING COUNT(*) > 1) d`},
}

// checkInvariants fails the test for every invariant the database breaks.
func checkInvariants(t testing.TB, db *store.DB) {
	t.Helper()
	checkInvariantList(t, db, invariants)
}

// checkInvariantList fails the test for every one of invs the database
// breaks.
func checkInvariantList(t testing.TB, db *store.DB, invs []invariant) {
	t.Helper()
	now := time.Now().UTC()
	var summary []string
	for _, inv := range invs {
		args := make([]any, strings.Count(inv.query, "?"))
		for i := range args {
			args[i] = now
		}
		n := storetest.Count(t, db, inv.query, args...)
		if n != 0 {
			t.Errorf("invariant broken: %d %s", n, inv.name)
		}
		summary = append(summary, fmt.Sprintf("%s: %d", inv.name, n))
	}
	t.Logf("invariants (%s): %s", db.Dialect, strings.Join(summary, "; "))
}

// TestCrashSafety kills the server with SIGKILL under a load of creates, on
// each database, restarts it on the same database, and checks that every
// create answered 201 is there with its notification, nothing is
// half-written, and a retry of an unanswered create never duplicates it.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			began := time.Now()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()
			keys := seedDemo(t, dbURL)
			t.Logf("database seeded in %v", time.Since(began).Round(time.Millisecond))
			s := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--database-url", dbURL)
			api := s.URL + "/api/integrations/v1"
			ids := lisbonIDs(t, s.URL, keys.APIKey)
			const workers, total = 24, 3000
			slots := distinctSlots(t, total)
			body := func(i int) map[string]any {
				return ids.bookingAt(slots[i], fmt.Sprintf("+3519140%05d", i), fmt.Sprintf("crash-%d", i))
			}

			tr := &http.Transport{MaxIdleConnsPerHost: workers}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			var (
				mu         sync.Mutex
				answered   = map[int]map[string]any{} // slot index -> the 201's appointment
				unanswered []int
				other      = map[string]int{}
				next       int
				wg         sync.WaitGroup
			)
			take := func() (int, bool) {
				mu.Lock()
				defer mu.Unlock()
				if next >= total {
					return 0, false
				}
				next++
				return next - 1, true
			}
			for range workers {
				wg.Go(func() {
					for {
						i, ok := take()
						if !ok {
							return
						}
						r, err := apitest.Do(client, "POST", api+"/appointments", keys.APIKey, body(i))
						mu.Lock()
						switch {
						case err != nil:
							unanswered = append(unanswered, i)
						case r.Status == 201:
							var a map[string]any
							if json.Unmarshal(r.Body, &a) != nil {
								unanswered = append(unanswered, i) // cut mid-body counts as unanswered
							} else {
								answered[i] = a
							}
						default:
							other[fmt.Sprintf("%d %s", r.Status, r.Code())]++
						}
						mu.Unlock()
						if err != nil {
							return // the server is gone
						}
					}
				})
			}
			// Kill it once the load is well under way.
			loadBegan := time.Now()
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				n := len(answered)
				mu.Unlock()
				if n >= 150 || time.Now().After(deadline) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			if err := s.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-s.done
			wg.Wait()
			if len(other) > 0 {
				t.Errorf("creates on distinct free slots answered otherwise: %v", other)
			}
			t.Logf("kill -9 %v into the load: %d answered 201, %d unanswered (in flight or refused), %d never sent",
				time.Since(loadBegan).Round(time.Millisecond), len(answered), len(unanswered), total-len(answered)-len(unanswered))

			// Restart on the same database: every 201 is there, unchanged.
			s2 := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0", "--database-url", dbURL)
			api = s2.URL + "/api/integrations/v1"
			present := 0
			for i, a := range answered {
				r, err := apitest.Do(client, "GET", api+"/appointments/"+a["id"].(string), keys.APIKey, nil)
				if err != nil || r.Status != 200 {
					t.Errorf("appointment %v answered 201 before the crash: %v %s", a["id"], err, replyText(r))
					continue
				}
				got := r.JSON(t)
				for _, k := range []string{"id", "starts_at", "barber_id", "external_reference", "status"} {
					if got[k] != a[k] {
						t.Errorf("slot %d: %s %v after the crash, %v answered", i, k, got[k], a[k])
					}
				}
				present++
			}
			// A retry of each unanswered create makes it or replays it.
			sort.Ints(unanswered)
			retried := map[string]int{}
			for _, i := range unanswered {
				r, err := apitest.Do(client, "POST", api+"/appointments", keys.APIKey, body(i))
				if err != nil {
					t.Fatal(err)
				}
				retried[fmt.Sprint(r.Status)]++
				if r.Status != 201 && !(r.Status == 200 && r.Header.Get("Idempotent-Replayed") == "true") {
					t.Errorf("retry of unanswered create %d: %d %s", i, r.Status, r.Body)
				}
			}
			t.Logf("after restart: %d of %d answered creates present; retries of the unanswered: %v (200 = had been committed unanswered)",
				present, len(answered), retried)
			// Every create made one created notification, visible to the key.
			var peek struct{ Data []map[string]any }
			if err := json.Unmarshal(call(t, "GET", api+"/notifications/pending?peek=true&limit=200", keys.AdminAPIKey, nil, 200).Body, &peek); err != nil {
				t.Fatal(err)
			}
			if len(peek.Data) == 0 || peek.Data[0]["type"] != "appointment.created" {
				t.Errorf("pending notifications after the crash: %v", peek.Data)
			}
			if code, _ := s2.stop(); code != 0 {
				t.Fatalf("restarted serve exited %d\nstderr: %s", code, s2.stderr)
			}

			db := openDB(t, dbURL)
			want := len(answered) + retried["201"] + retried["200"]
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM appointments"); n != want {
				t.Errorf("%d appointments in the database, want %d (answered + retried)", n, want)
			}
			if n := storetest.Count(t, db, "SELECT COUNT(*) FROM notifications WHERE type = 'appointment.created'"); n != want {
				t.Errorf("%d created notifications, want %d", n, want)
			}
			checkInvariants(t, db)
		})
	}
}

// replyText is a reply for a message.
func replyText(r *reply) string {
	if r == nil {
		return "no reply"
	}
	return fmt.Sprintf("%d %s", r.Status, r.Body)
}
