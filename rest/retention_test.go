package rest_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestRetentionKeepsFeedAndLogWorking prunes the older of an account's
// notifications, read or not, with their feed rows, webhook deliveries and
// attempts, while the webhook worker runs; the feed and the delivery log
// go on showing, and taking, what is newer, and new events flow as before.
func TestRetentionKeepsFeedAndLogWorking(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e, gql := hookEnv(t, db)
		reader, idle := e.ntReader(), e.ntReader() // idle never reads
		rc := newReceiver(t, ok200)
		id, _ := endpoint(t, gql, rc.srv.URL)
		runWorker(t, fastHooks(e.res))
		delivered := func(n int) {
			t.Helper()
			waitFor(t, "deliveries", func() bool {
				ds := deliveries(t, gql, id)
				for _, d := range ds {
					if d.Status != "delivered" {
						return false
					}
				}
				return len(ds) == n
			})
		}

		old := e.ntEvents("2027-03-02", 3)
		delivered(3)
		if got := len(e.ntPending(reader, "?consume=true")); got != 3 {
			t.Fatalf("%d read before the prune", got)
		}
		time.Sleep(5 * time.Millisecond) // notification ids carry the millisecond
		cutoff := time.Now()
		time.Sleep(5 * time.Millisecond)
		kept := e.ntEvents("2027-03-03", 2)
		delivered(5)

		sys := tenant.System(context.Background())
		rows := db.Delivery.Query().CountX(sys)                             // every reading key's of every event
		n, err := e.res.PruneNotifications(context.Background(), cutoff, 2) // batches of 2
		if err != nil || n != 3 {
			t.Fatalf("pruned %d, %v; want the 3 older", n, err)
		}
		if n, err := e.res.PruneNotifications(context.Background(), cutoff, 2); err != nil || n != 0 {
			t.Fatalf("pruned again %d, %v", n, err)
		}
		if c := db.WebhookAttempt.Query().CountX(sys); c != 2 {
			t.Errorf("%d webhook attempts left, want the 2 of the kept deliveries", c)
		}
		if c := db.Delivery.Query().CountX(sys); c != rows/5*2 {
			t.Errorf("%d feed rows left of %d, want those of 2 events of 5", c, rows)
		}

		// The feed: the idle key's unread older ones are gone, the newer
		// are there for both keys, and acknowledging them works.
		for _, k := range []string{reader, idle} {
			ns := e.ntPending(k, "")
			var apts []string
			for _, n := range ns {
				apts = append(apts, n.AppointmentID)
			}
			if want := []string{kept[0].ID, kept[1].ID}; !reflect.DeepEqual(apts, want) {
				t.Errorf("pending after the prune: %v, want %v (older: %s...)", apts, want, old[0].ID)
			}
			r := e.do("POST", "/notifications/ack", k, map[string]any{"through": ns[1].ID})
			expect(t, r, http.StatusOK, "")
		}
		// The delivery log shows the kept deliveries, with their attempts.
		ds := deliveries(t, gql, id)
		if len(ds) != 2 || len(ds[0].Attempts) != 1 || len(ds[1].Attempts) != 1 {
			t.Errorf("log after the prune: %+v", ds)
		}
		// New events flow on: a delivery, and a feed item.
		e.ntEvents("2027-03-04", 1)
		delivered(3)
		if got := len(e.ntPending(reader, "")); got != 1 {
			t.Errorf("%d pending after a new event, want 1", got)
		}
	})
}

// TestRetentionPrunesEndedHolds deletes released, expired and consumed
// holds that expired before the cutoff; an active one stays, and the
// appointment booked with a pruned hold stays whole but for its hold_id.
func TestRetentionPrunesEndedHolds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		released := e.apHold(haircut, "2027-03-02T15:00:00", joao, nil)
		expect(t, e.apPost("/slots/hold/"+released+"/release", nil), http.StatusOK, "")
		consumed := e.apHold(haircut, "2027-03-02T16:00:00", joao, nil)
		body := e.apBody(haircut, "2027-03-02T16:00:00", joao)
		body["hold_id"] = consumed
		a := e.apCreate(body)
		expired := e.apHold(haircut, "2027-03-02T17:00:00", joao, nil)
		e.clock.advance(time.Hour) // past every hold's expiry
		if _, err := e.res.ExpireHolds(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		active := e.apHold(haircut, "2027-03-02T14:00:00", joao, nil)
		if e.apHoldStatus(expired) != hold.StatusExpired || e.apHoldStatus(consumed) != hold.StatusConsumed {
			t.Fatalf("holds %s, %s", e.apHoldStatus(expired), e.apHoldStatus(consumed))
		}

		n, err := e.res.PruneHolds(context.Background(), e.clock.now().Add(time.Hour), 2)
		if err != nil || n != 3 {
			t.Fatalf("pruned %d holds, %v; want 3", n, err)
		}
		left := db.Hold.Query().IDsX(tenant.System(context.Background()))
		if !reflect.DeepEqual(left, []string{active}) {
			t.Errorf("holds left %v, want the active %s", left, active)
		}
		if got := e.appointment(a.ID); got.HoldID != nil || got.StartsAt.IsZero() {
			t.Errorf("the appointment after its hold was pruned: hold_id %v", got.HoldID)
		}
		expect(t, e.apGet("/appointments/"+a.ID), http.StatusOK, "")
		// The active hold still books.
		body = e.apBody(haircut, "2027-03-02T14:00:00", joao)
		body["hold_id"] = active
		e.apCreate(body)
	})
}
