package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/graph"
)

// holdTimes are the starts of distinct 30-minute Lisbon slots on Tuesday
// and Wednesday, in hours (09:00-12:00, 13:00-19:00).
func holdTimes() []string {
	var out []string
	for _, day := range []string{"2027-03-02", "2027-03-03"} {
		for m := 9 * 60; m < 19*60; m += 30 {
			if m >= 12*60 && m < 13*60 {
				continue
			}
			out = append(out, fmt.Sprintf("%sT%02d:%02d:00", day, m/60, m%60))
		}
	}
	return out
}

// activeHolds counts the key's holds that are active now, in the database.
func (e *env) activeHolds(t *testing.T, keyID string) int {
	t.Helper()
	n, err := e.db.Hold.Query().Where(hold.APIKeyID(keyID), hold.StatusEQ(hold.StatusActive),
		hold.ExpiresAtGT(e.clock.now())).Count(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keyID is the id of the key with the given secret.
func (e *env) keyID(t *testing.T, secret string) string {
	t.Helper()
	v, err := e.res.Authenticate(context.Background(), secret)
	if err != nil {
		t.Fatal(err)
	}
	return v.KeyID
}

// TestHoldCap: a key has at most Limits.ActiveHoldsPerKey active holds;
// releasing, using or outliving one makes room, and other keys have caps
// of their own.
func TestHoldCap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		most := graph.DefaultLimits.ActiveHoldsPerKey
		if most != 10 || e.res.Settings().Limits.ActiveHoldsPerKey != most {
			t.Fatalf("default cap %d (resolver %d), want 10", most, e.res.Settings().Limits.ActiveHoldsPerKey)
		}
		k, jo := e.keys.APIKey, e.barber(joao)
		times := holdTimes()
		var ids []string
		for i := range most {
			ids = append(ids, holdOK(t, e, holdRequest(e, haircut, times[i], "barber_id", jo)).HoldID)
		}
		over := func(t *testing.T, key string) {
			t.Helper()
			r := call(t, e, "POST", "/slots/hold", key, holdRequest(e, haircut, times[most], "barber_id", jo))
			expect(t, r, http.StatusTooManyRequests, graph.CodeTooManyHolds)
			var p struct{ Detail string }
			r.Decode(t, &p)
			if !strings.Contains(p.Detail, "release a hold") || !strings.Contains(p.Detail, "booking") {
				t.Errorf("detail does not say what to do: %q", p.Detail)
			}
			if ra := r.Header.Get("Retry-After"); ra != "" {
				t.Errorf("Retry-After %q: releasing or booking is the remedy, not waiting", ra)
			}
		}
		over(t, k)
		if n := e.activeHolds(t, e.keyID(t, k)); n != most {
			t.Fatalf("%d active holds, want %d", n, most)
		}

		t.Run("context shows the cap", func(t *testing.T) {
			r := call(t, e, "GET", "/context", k, nil)
			expect(t, r, http.StatusOK, "")
			limits := r.JSON(t)["limits"].(map[string]any)
			if got, _ := limits["active_holds_max"].(float64); int(got) != most {
				t.Fatalf("active_holds_max %v, want %d", limits["active_holds_max"], most)
			}
			v, err := e.res.Authenticate(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.res.Query().Context(graph.WithViewer(context.Background(), v))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Limits.ActiveHoldsMax; got == nil || *got != most {
				t.Fatalf("GraphQL limits.activeHoldsMax %v, want %d", got, most)
			}
		})
		t.Run("another key has its own cap", func(t *testing.T) {
			holdOK2 := call(t, e, "POST", "/slots/hold", e.key(graph.ScopeHoldsWrite), holdRequest(e, haircut, times[most], "barber_id", jo))
			expect(t, holdOK2, http.StatusCreated, "")
			release(t, e, holdOK2.JSON(t)["hold_id"].(string))
		})
		t.Run("a released hold makes room", func(t *testing.T) {
			release(t, e, ids[0])
			ids[0] = holdOK(t, e, holdRequest(e, haircut, times[0], "barber_id", jo)).HoldID
			over(t, k)
		})
		t.Run("a hold used in a booking makes room", func(t *testing.T) {
			b := e.apBody(haircut, times[1], joao)
			b["hold_id"] = ids[1]
			e.apOn(t).apCreate(b)
			holdOK(t, e, holdRequest(e, haircut, times[most], "barber_id", jo))
			over(t, k)
		})
		t.Run("expired holds make room", func(t *testing.T) {
			e.clock.advance(graph.DefaultLimits.HoldTTLDefault)
			for i := range most {
				holdOK(t, e, holdRequest(e, haircut, times[most+1+i], "barber_id", jo))
			}
			over(t, k)
		})
	})
}

// TestHoldCapOff: with the cap at 0 a key may hold as many slots as it
// likes, and GET /context says there is no cap.
func TestHoldCapOff(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		e.reconfigure(func(c *graph.Settings) { c.Limits.ActiveHoldsPerKey = 0 })
		times := holdTimes()
		for i := range graph.DefaultLimits.ActiveHoldsPerKey + 2 {
			holdOK(t, e, holdRequest(e, haircut, times[i], "barber_id", e.barber(joao)))
		}
		r := call(t, e, "GET", "/context", e.keys.APIKey, nil)
		expect(t, r, http.StatusOK, "")
		limits := r.JSON(t)["limits"].(map[string]any)
		if v, ok := limits["active_holds_max"]; !ok || v != nil {
			t.Fatalf("active_holds_max %v (present %v), want null", v, ok)
		}
	})
}

// TestRaceHoldCap: many holds of one key at once, on different barbers and
// times, through two servers on one database (two replicas): exactly the
// cap of them succeed.
func TestRaceHoldCap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		most := e.res.Settings().Limits.ActiveHoldsPerKey
		barbers := []string{e.barber(joao), e.barber(miguel)}
		times := holdTimes()
		replicas := []*racer{newRacer(t, e, racers), newRacerAt(t, e.replica(), e.keys.APIKey, racers)}
		// Every contender's slot is its own: only the cap can refuse it.
		contender := func(i int) (string, string, string, any) {
			return "POST", "/slots/hold", e.keys.APIKey, e.raceHold(haircut, barbers[i%2], times[i/2])
		}
		rs := raceAll(t, replicas, racers, contender)
		wantTally(t, tally(t, rs), map[string]int{"201": most, "429 too_many_holds": racers - most})
		if n := e.activeHolds(t, e.keyID(t, e.keys.APIKey)); n != most {
			t.Fatalf("database: %d active holds, want %d", n, most)
		}
		// The cap holds after the race too: each replica refuses another.
		for _, r := range replicas {
			res, err := r.send(contender(racers))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != http.StatusTooManyRequests {
				t.Fatalf("after the race: %d %s", res.Status, res.Body)
			}
		}
	})
}

// raceAll runs n contenders at once, contender i through replica i mod
// len(replicas), released together by one barrier.
func raceAll(t *testing.T, replicas []*racer, n int, contender func(i int) (method, path, key string, body any)) []*response {
	t.Helper()
	out := make([]*response, n)
	barrier := make(chan struct{})
	done := make(chan struct{}, n)
	for i := range n {
		method, path, key, body := contender(i)
		go func() {
			defer func() { done <- struct{}{} }()
			<-barrier
			res, err := replicas[i%len(replicas)].send(method, path, key, body)
			if err != nil {
				t.Errorf("contender %d: %v", i, err)
				return
			}
			out[i] = res
		}()
	}
	start := time.Now()
	close(barrier)
	for range n {
		<-done
	}
	t.Logf("%d contenders in %v", n, time.Since(start))
	if t.Failed() {
		t.FailNow()
	}
	return out
}
