package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"barberd/ent/hold"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/slots"
)

// holdTimes are the starts of distinct 30-minute Lisbon slots on Tuesday
// and Wednesday, in hours (09:00-12:00, 13:00-19:00).
func holdTimes() []string { return slotsOn("2027-03-02", "2027-03-03") }

// slotsOn are the starts of the 30-minute Lisbon slots of weekdays (Monday
// to Friday) in a demo barber's hours.
func slotsOn(days ...string) []string {
	var out []string
	for _, day := range days {
		for m := 9 * 60; m < 19*60; m += 30 {
			if m >= 12*60 && m < 13*60 {
				continue
			}
			out = append(out, fmt.Sprintf("%sT%02d:%02d:00", day, m/60, m%60))
		}
	}
	return out
}

// capKey gives the key with the given secret a hold cap of its own (nil:
// back to the server's default), as a dashboard does (updateApiKey).
func (e *env) capKey(t *testing.T, secret string, most *int) {
	t.Helper()
	admin, err := e.res.Authenticate(context.Background(), e.keys.AdminAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	in := model.UpdateAPIKeyInput{MaxActiveHolds: most}
	if most == nil {
		clear := true
		in.ClearMaxActiveHolds = &clear
	}
	k, err := e.res.Mutation().UpdateAPIKey(domain.WithViewer(context.Background(), admin), e.keyID(t, secret), in)
	if err != nil {
		t.Fatal(err)
	}
	if (k.MaxActiveHolds == nil) != (most == nil) || most != nil && *k.MaxActiveHolds != *most {
		t.Fatalf("key's cap %v after updateApiKey, want %v", k.MaxActiveHolds, most)
	}
}

// limitsOf reads GET /context's limits with the given key.
func limitsOf(t *testing.T, e *env, key string) map[string]any {
	t.Helper()
	r := call(t, e, "GET", "/context", key, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)["limits"].(map[string]any)
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

// TestHoldCap: a key has at most its cap of active holds (here one of its
// own, 10); releasing, using or outliving one makes room, other keys have
// caps of their own, and the refusal names the oldest active hold.
func TestHoldCap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		if d := graph.DefaultLimits.ActiveHoldsPerKey; d != 100 || e.res.Settings().Limits.ActiveHoldsPerKey != d {
			t.Fatalf("default cap %d (resolver %d), want 100", d, e.res.Settings().Limits.ActiveHoldsPerKey)
		}
		most := 10
		k, jo := e.keys.APIKey, e.barber(joao)
		e.capKey(t, k, &most)
		times := holdTimes()
		var ids []string
		for i := range most {
			ids = append(ids, holdOK(t, e, holdRequest(e, haircut, times[i], "barber_id", jo)).HoldID)
		}
		over := func(t *testing.T, key string) {
			t.Helper()
			r := call(t, e, "POST", "/slots/hold", key, holdRequest(e, haircut, times[most], "barber_id", jo))
			expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyHolds)
			var p struct {
				Detail              string
				ActiveHolds         int    `json:"active_holds"`
				ActiveHoldsMax      int    `json:"active_holds_max"`
				OldestHoldID        string `json:"oldest_hold_id"`
				OldestHoldExpiresAt string `json:"oldest_hold_expires_at"`
			}
			r.Decode(t, &p)
			if !strings.Contains(p.Detail, "release a hold") || !strings.Contains(p.Detail, "booking") {
				t.Errorf("detail does not say what to do: %q", p.Detail)
			}
			if ra := r.Header.Get("Retry-After"); ra != "" {
				t.Errorf("Retry-After %q: releasing or booking is the remedy, not waiting", ra)
			}
			if p.ActiveHolds != most || p.ActiveHoldsMax != most {
				t.Errorf("problem says %d of %d active holds, want %d of %d", p.ActiveHolds, p.ActiveHoldsMax, most, most)
			}
			oldest, err := e.db.Hold.Get(e.ctx, p.OldestHoldID)
			if err != nil {
				t.Fatalf("oldest_hold_id %q: %v", p.OldestHoldID, err)
			}
			if oldest.Status != hold.StatusActive || slots.UTC(oldest.ExpiresAt) != p.OldestHoldExpiresAt || !strings.Contains(p.Detail, oldest.ID) {
				t.Errorf("oldest hold %s (%s, expires %s), problem says it expires %s: %q", oldest.ID, oldest.Status, slots.UTC(oldest.ExpiresAt), p.OldestHoldExpiresAt, p.Detail)
			}
			newer, err := e.db.Hold.Query().Where(hold.APIKeyID(e.keyID(t, key)), hold.StatusEQ(hold.StatusActive),
				hold.ExpiresAtGT(e.clock.now()), hold.CreatedAtLT(oldest.CreatedAt)).Exist(e.ctx)
			if err != nil || newer {
				t.Errorf("an active hold older than %s exists (%v)", oldest.ID, err)
			}
		}
		over(t, k)
		if n := e.activeHolds(t, e.keyID(t, k)); n != most {
			t.Fatalf("%d active holds, want %d", n, most)
		}

		t.Run("the cap comes before a taken slot", func(t *testing.T) {
			for _, body := range []map[string]any{
				holdRequest(e, haircut, times[0], "barber_id", jo), // held: refused under the barber's lock
				holdRequest(e, haircut, "2027-03-02T20:00:00"),     // after hours: refused before any lock
			} {
				r := call(t, e, "POST", "/slots/hold", k, body)
				expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyHolds)
			}
		})
		t.Run("context shows the cap and the count", func(t *testing.T) {
			limits := limitsOf(t, e, k)
			if got, _ := limits["active_holds_max"].(float64); int(got) != most {
				t.Fatalf("active_holds_max %v, want %d", limits["active_holds_max"], most)
			}
			if got, _ := limits["active_holds"].(float64); int(got) != most {
				t.Fatalf("active_holds %v, want %d", limits["active_holds"], most)
			}
			v, err := e.res.Authenticate(context.Background(), k)
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.res.Query().Context(domain.WithViewer(context.Background(), v))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Limits.ActiveHoldsMax; got == nil || *got != most || c.Limits.ActiveHolds != most {
				t.Fatalf("GraphQL limits.activeHoldsMax %v, activeHolds %d, want %d and %d", got, c.Limits.ActiveHolds, most, most)
			}
		})
		t.Run("another key has its own cap", func(t *testing.T) {
			other := e.key(domain.ScopeHoldsWrite, domain.ScopeContextRead)
			if got, _ := limitsOf(t, e, other)["active_holds_max"].(float64); int(got) != graph.DefaultActiveHoldsPerKey {
				t.Fatalf("a key without a cap of its own: active_holds_max %v, want the default %d", got, graph.DefaultActiveHoldsPerKey)
			}
			holdOK2 := call(t, e, "POST", "/slots/hold", other, holdRequest(e, haircut, times[most], "barber_id", jo))
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
		t.Run("a lower cap applies to the next hold, a higher one makes room", func(t *testing.T) {
			lower := 3
			e.capKey(t, k, &lower)
			r := call(t, e, "POST", "/slots/hold", k, holdRequest(e, haircut, times[most+1], "barber_id", jo))
			expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyHolds)
			higher := most + 1
			e.capKey(t, k, &higher)
			id := holdOK(t, e, holdRequest(e, haircut, times[most+1], "barber_id", jo)).HoldID
			release(t, e, id)
			e.capKey(t, k, &most)
		})
		t.Run("expired holds make room", func(t *testing.T) {
			e.clock.advance(graph.DefaultLimits.HoldTTLDefault)
			for i := range most {
				holdOK(t, e, holdRequest(e, haircut, times[most+1+i], "barber_id", jo))
			}
			over(t, k)
		})
		t.Run("release-all frees the key's holds, not another's", func(t *testing.T) {
			other := e.key(domain.ScopeHoldsWrite)
			r := call(t, e, "POST", "/slots/hold", other, holdRequest(e, haircut, times[2*most+1], "barber_id", jo))
			expect(t, r, http.StatusCreated, "")
			r = call(t, e, "POST", "/slots/hold/release-all", k, nil)
			expect(t, r, http.StatusOK, "")
			if got, _ := r.JSON(t)["released"].(float64); int(got) != most {
				t.Fatalf("released %v, want %d", r.JSON(t)["released"], most)
			}
			if n := e.activeHolds(t, e.keyID(t, k)); n != 0 {
				t.Fatalf("%d active holds after release-all", n)
			}
			if n := e.activeHolds(t, e.keyID(t, other)); n != 1 {
				t.Fatalf("the other key has %d active holds, want its 1", n)
			}
			r = call(t, e, "POST", "/slots/hold/release-all", k, nil)
			expect(t, r, http.StatusOK, "")
			if got, _ := r.JSON(t)["released"].(float64); got != 0 {
				t.Fatalf("released %v the second time, want 0", got)
			}
			// The freed slots are free again.
			holdOK(t, e, holdRequest(e, haircut, times[most+1], "barber_id", jo))
		})
	})
}

// TestConversationsKeepHolding: 16 chatbot conversations at once on one
// key, a quarter of them abandoned after their hold (which then stays
// active: the test clock does not move), the rest booking or releasing,
// never meet the default cap, which still refuses a key past it.
func TestConversationsKeepHolding(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		const workers, rounds = 16, 6
		barbers := []string{joao, miguel}
		times := slotsOn("2027-03-02", "2027-03-03", "2027-03-04")
		var mu sync.Mutex
		tally := map[string]int{}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for round := range rounds {
					i := round*workers + w
					name, at := barbers[i%2], times[i/2]
					if r := doRequest(t, e.srv.URL, "GET", "/context", e.keys.APIKey, nil, nil); r.Status != http.StatusOK {
						t.Errorf("conversation %d: context %d %s", i, r.Status, r.Body)
					}
					r := doRequest(t, e.srv.URL, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, at, "barber_id", e.barber(name)), nil)
					mu.Lock()
					tally[fmt.Sprint("hold ", r.Status)]++
					mu.Unlock()
					if r.Status != http.StatusCreated {
						t.Errorf("conversation %d: hold %d %s", i, r.Status, r.Body)
						continue
					}
					id := r.JSON(t)["hold_id"].(string)
					switch i % 4 {
					case 0: // the person stopped answering
					case 1:
						r = doRequest(t, e.srv.URL, "POST", releasePath(id), e.keys.APIKey, nil, nil)
					default:
						b := e.apBody(haircut, at, name)
						b["hold_id"] = id
						r = doRequest(t, e.srv.URL, "POST", "/appointments", e.keys.APIKey, b, nil)
					}
					if r.Status >= 300 {
						t.Errorf("conversation %d: %d %s", i, r.Status, r.Body)
					}
				}
			})
		}
		wg.Wait()
		abandoned := workers * rounds / 4
		if tally["hold 201"] != workers*rounds {
			t.Fatalf("holds: %v, want %d of 201", tally, workers*rounds)
		}
		if n := e.activeHolds(t, e.keyID(t, e.keys.APIKey)); n != abandoned {
			t.Fatalf("%d active holds left, want the %d abandoned", n, abandoned)
		}
		if got, _ := limitsOf(t, e, e.keys.APIKey)["active_holds"].(float64); int(got) != abandoned {
			t.Fatalf("GET /context active_holds %v, want %d", got, abandoned)
		}
		// The default cap still binds: fill it up, and one more is refused.
		most := graph.DefaultActiveHoldsPerKey
		free := slotsOn("2027-03-05", "2027-03-08", "2027-03-09")
		for i := range most - abandoned {
			holdOK(t, e, holdRequest(e, haircut, free[i/2], "barber_id", e.barber(barbers[i%2])))
		}
		r := call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, free[len(free)-1], "barber_id", e.barber(miguel)))
		expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyHolds)
	})
}

// TestHoldCapOff: with the cap at 0 a key may hold as many slots as it
// likes, and GET /context says there is no cap, until the key gets a cap
// of its own.
func TestHoldCapOff(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		e.reconfigure(func(c *graph.Settings) { c.Limits.ActiveHoldsPerKey = 0 })
		times := holdTimes()
		for i := range 12 {
			holdOK(t, e, holdRequest(e, haircut, times[i], "barber_id", e.barber(joao)))
		}
		r := call(t, e, "GET", "/context", e.keys.APIKey, nil)
		expect(t, r, http.StatusOK, "")
		limits := r.JSON(t)["limits"].(map[string]any)
		if v, ok := limits["active_holds_max"]; !ok || v != nil {
			t.Fatalf("active_holds_max %v (present %v), want null", v, ok)
		}
		// A cap written straight to SQL on the key, which the server keeps
		// cached without one (and so holds without counting), holds once
		// the freshness window has passed: it raises the account's config
		// version.
		if _, err := e.db.SQL.ExecContext(e.ctx, "UPDATE api_keys SET max_active_holds = 12 WHERE id = $1", e.keyID(t, e.keys.APIKey)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * graph.DefaultFreshnessWindow)
		r = call(t, e, "POST", "/slots/hold", e.keys.APIKey, holdRequest(e, haircut, times[12], "barber_id", e.barber(joao)))
		expect(t, r, http.StatusTooManyRequests, domain.CodeTooManyHolds)
	})
}

// TestRaceHoldCap: many holds of one key at once, on different barbers and
// times, through two servers on one database (two replicas): exactly the
// cap of them succeed.
func TestRaceHoldCap(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		most := 10 // the key's own cap: one read under the key's lock, as the default is
		e.capKey(t, e.keys.APIKey, &most)
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
