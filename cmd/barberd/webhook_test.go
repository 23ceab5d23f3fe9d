package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"barberd/graph/storetest"
)

// TestWebhookSurvivesKill9 kills the process that is sending a webhook
// (SIGKILL, while the receiver holds the request), starts barberd again on
// the same database, and checks the event still arrives, with the same
// webhook-id: a crash mid-delivery is a retry, not a loss.
func TestWebhookSurvivesKill9(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()
			keys := seedDemo(t, dbURL)
			var (
				mu    sync.Mutex
				ids   []string
				first = make(chan struct{})
			)
			release := make(chan struct{})
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				ids = append(ids, r.Header.Get("webhook-id"))
				n := len(ids)
				mu.Unlock()
				if n == 1 {
					close(first)
					select { // hang until the sender is gone
					case <-r.Context().Done():
					case <-release:
					}
				}
			}))
			defer receiver.Close()
			defer close(release)
			// A short lease, so the restarted process takes over soon; a
			// long timeout, so the first request is still open when killed.
			args := []string{"serve", "--addr", "127.0.0.1:0", "--database-url", dbURL, "--rate-limit", "0",
				"--webhook-allow-private", "--webhook-lease", "1s", "--webhook-timeout", "60s"}
			s := startServer(t, dir, args...)
			created := call(t, "POST", s.URL+"/graphql", keys.AdminAPIKey, map[string]any{
				"query":     `mutation($u: String!) { createWebhookEndpoint(input: {url: $u}) { endpoint { id } } }`,
				"variables": map[string]any{"u": receiver.URL},
			}, 200).JSON(t)
			endpointID := created["data"].(map[string]any)["createWebhookEndpoint"].(map[string]any)["endpoint"].(map[string]any)["id"].(string)
			ids0 := lisbonIDs(t, s.URL, keys.APIKey)
			call(t, "POST", s.URL+"/api/integrations/v1/appointments", keys.APIKey, ids0.bookingAt(distinctSlots(t, 1)[0], "+351914000001", ""), 201)
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				t.Fatal("the first delivery never came")
			}
			if err := s.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-s.done
			killed := time.Now()

			s2 := startServer(t, dir, args...)
			deadline := time.Now().Add(15 * time.Second)
			for {
				mu.Lock()
				n := len(ids)
				mu.Unlock()
				if n >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the event did not arrive after the restart\nstderr: %s", s2.stderr)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("delivered again %v after the kill", time.Since(killed).Round(time.Millisecond))
			mu.Lock()
			if len(ids) != 2 || ids[0] != ids[1] || ids[0] == "" {
				t.Errorf("webhook-ids %v, want the same one twice", ids)
			}
			mu.Unlock()
			// The log shows it delivered, by the second process.
			var log struct {
				Data struct {
					WebhookDeliveries struct {
						Edges []struct {
							Node struct {
								Status   string
								Attempts []struct{ StatusCode *int }
							}
						}
					}
				}
			}
			for {
				r := call(t, "POST", s2.URL+"/graphql", keys.AdminAPIKey, map[string]any{
					"query":     `query($id: ID!) { webhookDeliveries(endpointId: $id) { edges { node { status attempts { statusCode } } } } }`,
					"variables": map[string]any{"id": endpointID},
				}, 200)
				if err := json.Unmarshal(r.Body, &log); err != nil {
					t.Fatal(err)
				}
				e := log.Data.WebhookDeliveries.Edges
				if len(e) == 1 && e[0].Node.Status == "delivered" {
					// The killed process recorded nothing: one attempt, the 200.
					if len(e[0].Node.Attempts) != 1 || *e[0].Node.Attempts[0].StatusCode != 200 {
						t.Errorf("attempts after the crash: %+v", e[0].Node.Attempts)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("delivery log: %s", r.Body)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if code, _ := s2.stop(); code != 0 {
				t.Fatalf("restarted serve exited %d\nstderr: %s", code, s2.stderr)
			}
		})
	}
}
