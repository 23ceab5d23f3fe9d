package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"barberd/ent/apikey"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// replica starts a second barberd on the same database and clock, as
// another process would be, and returns its address.
func (e *env) replica() string {
	e.t.Helper()
	return v1Server(e.t, graph.New(e.res.Settings())).URL
}

// eachWindow runs fn against SQLite and PostgreSQL with each of the given
// freshness windows.
func eachWindow(t *testing.T, windows []time.Duration, fn func(t *testing.T, e *env)) {
	t.Helper()
	for _, w := range windows {
		t.Run("window="+w.String(), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) { fn(t, newEnvWindow(t, db, w)) })
		})
	}
}

// exactAndDefault are the windows of the tests of changes written straight
// to SQL: none (every request checks the database) and the default.
var exactAndDefault = []time.Duration{0, graph.DefaultFreshnessWindow}

// wroteSQL waits for a change written straight to SQL, behind barberd's
// back, to show: within the freshness window.
func (e *env) wroteSQL() { time.Sleep(e.res.Settings().FreshnessWindow) }

// freeStarts lists the local start times availability offers, at base, for
// a Lisbon service with a barber on a date.
func (e *env) freeStarts(base, key, svc, barberName, date string) []string {
	e.t.Helper()
	q := url.Values{"unit_id": {e.unit(lisbon)}, "service_id": {e.service(svc)}, "date": {date}}
	if barberName != "" {
		q.Set("barber_id", e.barber(barberName))
	}
	r := doRequest(e.t, base, "GET", "/availability?"+q.Encode(), key, nil, nil)
	expect(e.t, r, http.StatusOK, "")
	var av struct {
		Slots []struct {
			StartsAt string `json:"starts_at"`
		} `json:"slots"`
	}
	r.Decode(e.t, &av)
	starts := make([]string, len(av.Slots))
	for i, s := range av.Slots {
		starts[i] = s.StartsAt
	}
	return starts
}

// Availability is cached per process; whatever another process changes
// must show in the very next answer, with no write going through the
// process that answers; what is written straight to SQL, once the
// freshness window has passed.
func TestCachedAvailabilityFollowsEveryWriter(t *testing.T) {
	eachWindow(t, exactAndDefault, func(t *testing.T, e *env) {
		a, b := e.srv.URL, e.replica()
		key := e.keys.APIKey
		free := func() []string { return e.freeStarts(a, key, haircut, joao, tuesday) }
		offered := func(at string) bool { return slices.Contains(free(), tuesday+"T"+at) }
		for range 3 { // cache it
			if !offered("10:00:00") {
				t.Fatal("10:00 not offered to begin with")
			}
		}

		r := doRequest(t, b, "POST", "/appointments", key, map[string]any{
			"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
			"starts_at": tuesdayAt10, "client": map[string]any{"name": clientName, "phone": validPhone},
		}, nil)
		expect(t, r, http.StatusCreated, "")
		id, _ := r.JSON(t)["id"].(string)
		if offered("10:00:00") {
			t.Fatal("a slot booked through another process is still offered")
		}

		expect(t, doRequest(t, b, "POST", "/appointments/"+id+"/cancel", key, map[string]any{"reason": "changed plans"}, nil), http.StatusOK, "")
		if !offered("10:00:00") {
			t.Fatal("a slot cancelled through another process is not offered again")
		}

		// Time off written straight into the database, as an operator might.
		_, err := e.db.TimeOff.Create().SetAccountID(e.keys.AccountID).SetBarberID(e.barber(joao)).
			SetStartsAt(time.Date(2027, 3, 2, 13, 0, 0, 0, time.UTC)).SetEndsAt(time.Date(2027, 3, 2, 15, 0, 0, 0, time.UTC)).
			SetReason("dentist").Save(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		e.wroteSQL()
		if offered("13:30:00") || offered("14:00:00") {
			t.Fatal("time off added behind the cache's back is not honoured")
		}

		// A hold blocks its slot until it expires, and not a moment longer,
		// though nothing is written when it expires.
		r = doRequest(t, b, "POST", "/slots/hold", key, map[string]any{
			"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
			"starts_at": tuesdayAt11, "ttl_seconds": 60,
		}, nil)
		expect(t, r, http.StatusCreated, "")
		if offered("11:00:00") {
			t.Fatal("a held slot is offered")
		}
		e.clock.advance(59 * time.Second)
		if offered("11:00:00") {
			t.Fatal("a held slot is offered before the hold expires")
		}
		e.clock.advance(time.Second)
		if !offered("11:00:00") {
			t.Fatal("the slot of an expired hold is not offered again")
		}
	})
}

// The passing of time changes answers on its own: a slot closer than the
// unit's minimum lead (60 minutes for the demo unit) is no longer offered.
func TestCachedAvailabilityFollowsTheClock(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		monday := testNow.Format(time.DateOnly)
		starts := e.freeStarts(e.srv.URL, e.keys.APIKey, haircut, joao, monday)
		if len(starts) < 2 {
			t.Fatalf("monday offers %v", starts)
		}
		first, err := time.ParseInLocation("2006-01-02T15:04:05", starts[0], time.UTC) // Lisbon is on UTC in March
		if err != nil {
			t.Fatal(err)
		}
		e.clock.advance(first.Add(-60 * time.Minute).Sub(testNow))
		if got := e.freeStarts(e.srv.URL, e.keys.APIKey, haircut, joao, monday); got[0] != starts[0] {
			t.Fatalf("at exactly the lead the first slot is %s, want %s", got[0], starts[0])
		}
		e.clock.advance(time.Microsecond)
		if got := e.freeStarts(e.srv.URL, e.keys.APIKey, haircut, joao, monday); len(got) > 0 && got[0] == starts[0] {
			t.Fatalf("slot %s offered inside the minimum lead", starts[0])
		}
	})
}

// One cached day answers for every barber and for each one: a barber's
// answer is their slots of the every-barber answer, and the barber's own
// errors still come first, also once the catalog changes behind the
// cache's back.
func TestCachedDayAnswersEachBarber(t *testing.T) {
	eachWindow(t, exactAndDefault, func(t *testing.T, e *env) {
		base, key := e.srv.URL, e.keys.APIKey
		type slot struct {
			StartsAt, EndsAt, StartsAtUTC, EndsAtUTC, BarberID string
		}
		type answer struct {
			BarberID *string `json:"barber_id"`
			Slots    []struct {
				StartsAt    string `json:"starts_at"`
				EndsAt      string `json:"ends_at"`
				StartsAtUTC string `json:"starts_at_utc"`
				EndsAtUTC   string `json:"ends_at_utc"`
				BarberID    string `json:"barber_id"`
			} `json:"slots"`
		}
		get := func(barberID string, status int, code string) []slot {
			t.Helper()
			q := url.Values{"unit_id": {e.unit(lisbon)}, "service_id": {e.service(haircut)}, "date": {tuesday}}
			if barberID != "" {
				q.Set("barber_id", barberID)
			}
			r := doRequest(t, base, "GET", "/availability?"+q.Encode(), key, nil, nil)
			expect(t, r, status, code)
			if status != http.StatusOK {
				return nil
			}
			var a answer
			r.Decode(t, &a)
			if (a.BarberID == nil) != (barberID == "") || a.BarberID != nil && *a.BarberID != barberID {
				t.Fatalf("barber_id %v in the answer for %q", a.BarberID, barberID)
			}
			out := make([]slot, len(a.Slots))
			for i, s := range a.Slots {
				out[i] = slot(s)
			}
			return out
		}
		ofBarber := func(all []slot, id string) []slot {
			out := []slot{}
			for _, s := range all {
				if s.BarberID == id {
					out = append(out, s)
				}
			}
			return out
		}
		all := get("", http.StatusOK, "")
		joaoID, miguelID := e.barber(joao), e.barber(miguel)
		for _, id := range []string{joaoID, miguelID} {
			mine := ofBarber(all, id)
			if len(mine) == 0 {
				t.Fatalf("barber %s has no slots on %s", id, tuesday)
			}
			if got := get(id, http.StatusOK, ""); !slices.Equal(got, mine) {
				t.Fatalf("barber %s: %v, want %v", id, got, mine)
			}
		}
		get(e.barber(pedro), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)  // inactive
		get(e.barber(rafael), http.StatusUnprocessableEntity, domain.CodeBarberNotEligible) // another unit
		get("brb_01KAB3Y7W3QZ000000000000", http.StatusNotFound, domain.CodeBarberNotFound)

		// Miguel stops doing haircuts, written straight into the database.
		if err := e.db.Barber.UpdateOneID(miguelID).RemoveServiceIDs(e.service(haircut)).Exec(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.wroteSQL()
		get(miguelID, http.StatusUnprocessableEntity, domain.CodeBarberNotEligible)
		if got := ofBarber(get("", http.StatusOK, ""), miguelID); len(got) != 0 {
			t.Fatalf("a barber who no longer does the service is offered: %v", got)
		}
		if got := get(joaoID, http.StatusOK, ""); !slices.Equal(got, ofBarber(all, joaoID)) {
			t.Fatalf("joao after the change: %v", got)
		}
	})
}

// A key revoked straight in SQL is refused, by every process, on its next
// request once the freshness window has passed.
func TestCachedKeyRevocation(t *testing.T) {
	eachWindow(t, exactAndDefault, func(t *testing.T, e *env) {
		a, b := e.srv.URL, e.replica()
		key := e.key(domain.ScopeContextRead)
		for _, base := range []string{a, b, a, b} {
			expect(t, doRequest(t, base, "GET", "/context", key, nil, nil), http.StatusOK, "")
		}
		n, err := e.db.APIKey.Update().Where(apikey.Prefix(key[:11])).SetRevokedAt(testNow).Save(e.ctx)
		if err != nil || n != 1 {
			t.Fatalf("revoke: %d, %v", n, err)
		}
		e.wroteSQL()
		for _, base := range []string{a, b} {
			expect(t, doRequest(t, base, "GET", "/context", key, nil, nil), http.StatusUnauthorized, "invalid_api_key")
		}
	})
}

// Many readers racing one writer: once a create has answered, no reader
// that starts afterwards, on either process, sees its slot free; with a
// freshness window too, since a write waits it out before it answers.
func TestCachedAvailabilityUnderConcurrentBookings(t *testing.T) {
	eachWindow(t, []time.Duration{0, 100 * time.Millisecond}, func(t *testing.T, e *env) {
		a, b := e.srv.URL, e.replica()
		key := e.keys.APIKey
		starts := []string{"09:00:00", "09:30:00", "10:00:00", "10:30:00", "11:00:00", "11:30:00"}
		var booked sync.Map // start -> true once its create has answered
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				base := []string{a, b}[g%2]
				for {
					select {
					case <-stop:
						return
					default:
					}
					var done []string
					booked.Range(func(k, _ any) bool { done = append(done, k.(string)); return true })
					free := e.freeStarts(base, key, haircut, joao, tuesday)
					for _, s := range done {
						if slices.Contains(free, tuesday+"T"+s) {
							t.Errorf("%s offered after it was booked", s)
						}
					}
				}
			}()
		}
		for i, s := range starts {
			r := doRequest(t, []string{b, a}[i%2], "POST", "/appointments", key, map[string]any{
				"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
				"starts_at": tuesday + "T" + s, "client": map[string]any{"name": clientName, "phone": validPhone},
			}, nil)
			expect(t, r, http.StatusCreated, "")
			booked.Store(s, true)
			time.Sleep(20 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
	})
}

// With a freshness window, versions read that recently answer for the
// caches: a change written straight to SQL may go unseen for as long as the
// window, and no longer. A write through barberd waits the window out
// before it answers; a read, or a write that committed nothing, does not.
func TestFreshnessWindow(t *testing.T) {
	const window = time.Second
	eachWindow(t, []time.Duration{window}, func(t *testing.T, e *env) {
		base, key := e.srv.URL, e.key(domain.ScopeContextRead)
		expect(t, doRequest(t, base, "GET", "/context", key, nil, nil), http.StatusOK, "") // reads the key
		checked := time.Now()
		expect(t, doRequest(t, base, "GET", "/context", key, nil, nil), http.StatusOK, "") // checks its version
		if _, err := e.db.APIKey.Update().Where(apikey.Prefix(key[:11])).SetRevokedAt(testNow).Save(e.ctx); err != nil {
			t.Fatal(err)
		}
		revoked := time.Now()
		r := doRequest(t, base, "GET", "/context", key, nil, nil)
		if time.Since(checked) < window {
			// The versions read for the first request, before the
			// revocation, still answer.
			expect(t, r, http.StatusOK, "")
		}
		time.Sleep(window - time.Since(revoked))
		expect(t, doRequest(t, base, "GET", "/context", key, nil, nil), http.StatusUnauthorized, "invalid_api_key")

		start := time.Now()
		expect(t, doRequest(t, base, "POST", "/appointments", e.keys.APIKey, map[string]any{
			"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
			"starts_at": tuesdayAt10, "client": map[string]any{"name": clientName, "phone": validPhone},
		}, nil), http.StatusCreated, "")
		if d := time.Since(start); d < window {
			t.Fatalf("a create answered %v after it was sent, within the window of %v", d, window)
		}
		// A write that commits nothing has nothing to wait for.
		start = time.Now()
		expect(t, doRequest(t, base, "POST", "/appointments", e.keys.APIKey, map[string]any{
			"unit_id": e.unit(lisbon), "service_id": e.service(haircut), "barber_id": e.barber(joao),
			"starts_at": tuesdayAt10, "client": map[string]any{"name": clientName, "phone": validPhone},
		}, nil), http.StatusConflict, domain.CodeSlotUnavailable)
		if d := time.Since(start); d >= window {
			t.Fatalf("a refused create took %v: it committed nothing, so it should not wait out the window", d)
		}
		start = time.Now()
		e.freeStarts(base, e.keys.APIKey, haircut, joao, tuesday)
		if d := time.Since(start); d >= window {
			t.Fatalf("a read took %v: reads should not wait out the window", d)
		}
	})
}

// An appointment read (one, or a client's list) shows its unit, service
// and barber from the catalog cache while the account's configuration is
// unchanged, each appointment read once; what the cache does not hold
// (booked through another process) is read, alongside what it holds; and
// once the configuration changes (a barber renamed behind barberd's back)
// the next reads show the change.
func TestAppointmentReadsFollowTheCatalog(t *testing.T) {
	eachWindow(t, exactAndDefault, func(t *testing.T, e *env) {
		here := e.apCreate(e.apBody(haircut, tuesdayAt10, joao))
		// Any barber: João is taken, Miguel gets it (from the entry of
		// the unit and service with its eligible barbers).
		anyone := e.apCreate(e.apBody(haircut, tuesdayAt10, ""))
		if anyone.BarberID != e.barber(miguel) {
			t.Fatalf("any barber at 10:00 booked %s, want %s", anyone.BarberName, miguel)
		}
		// Booked through a replica: this process never resolved the
		// beard trim with Miguel.
		body := e.apBody(beardTrim, tuesdayAt11, miguel)
		r := doRequest(t, e.replica(), "POST", "/appointments", e.keys.APIKey, body, nil)
		expect(t, r, http.StatusCreated, "")
		there := apView(t, r)
		names := func(when string, joaoName string) {
			t.Helper()
			want := map[string]string{here.ID: joaoName + "/" + haircut, anyone.ID: miguel + "/" + haircut, there.ID: miguel + "/" + beardTrim}
			for _, id := range []string{here.ID, anyone.ID} {
				one := apView(t, e.apGet("/appointments/"+id))
				if got := one.BarberName + "/" + one.ServiceName; got != want[id] || one.UnitName != lisbon {
					t.Errorf("%s: GET /appointments/{id} shows %s at %s; want %s at %s", when, got, one.UnitName, want[id], lisbon)
				}
			}
			list := e.clFind(e.keys.APIKey, url.Values{"client_phone": {validPhone}}.Encode())
			if len(list) != len(want) {
				t.Fatalf("%s: %d appointments listed, want %d", when, len(list), len(want))
			}
			for _, a := range list {
				if got := a.BarberName + "/" + a.ServiceName; got != want[a.ID] || a.UnitName != lisbon {
					t.Errorf("%s: %s listed with %s at %s, want %s at %s", when, a.ID, got, a.UnitName, want[a.ID], lisbon)
				}
			}
		}
		names("as booked", joao)
		sys := tenant.System(context.Background())
		if err := e.res.Settings().DB.Barber.UpdateOneID(e.barber(joao)).SetName("João Renamed").Exec(sys); err != nil {
			t.Fatal(err)
		}
		e.wroteSQL()
		names("after a rename", "João Renamed")
	})
}

// The catalog lists (units, services, barbers) are cached per account
// while its configuration is unchanged: what changes behind barberd's
// back (a unit and a barber renamed, a service taken offline) shows once
// the freshness window has passed, and another account's key never sees
// the first account's lists.
func TestCatalogListsFollowTheCatalog(t *testing.T) {
	eachWindow(t, exactAndDefault, func(t *testing.T, e *env) {
		names := func(path string) []string {
			t.Helper()
			r := e.do("GET", path, e.keys.APIKey, nil)
			expect(t, r, http.StatusOK, "")
			var out []string
			for _, x := range dataOf[struct {
				Name string `json:"name"`
			}](t, r) {
				out = append(out, x.Name)
			}
			return out
		}
		unitQ := "?unit_id=" + e.unit(lisbon)
		barbersQ := unitQ + "&service_id=" + e.service(haircut)
		before := [][]string{names("/units"), names("/services" + unitQ), names("/barbers" + barbersQ)}
		for i, l := range before {
			if again := [][]string{names("/units"), names("/services" + unitQ), names("/barbers" + barbersQ)}[i]; !slices.Equal(again, l) {
				t.Fatalf("list %d read again: %v, want %v", i, again, l)
			}
		}
		if !slices.Contains(before[0], lisbon) || !slices.Contains(before[1], beardTrim) || !slices.Contains(before[2], joao) {
			t.Fatalf("lists %v", before)
		}
		// Another account asks for the first account's unit.
		other := e.otherAccount()
		r := e.do("GET", "/services"+unitQ, other.APIKey, nil)
		expect(t, r, http.StatusNotFound, "unit_not_found")

		sys := tenant.System(context.Background())
		db := e.res.Settings().DB
		if err := db.Unit.UpdateOneID(e.unit(lisbon)).SetName("Chiado Renamed").Exec(sys); err != nil {
			t.Fatal(err)
		}
		if err := db.Service.UpdateOneID(e.service(beardTrim)).SetBookableOnline(false).Exec(sys); err != nil {
			t.Fatal(err)
		}
		if err := db.Barber.UpdateOneID(e.barber(joao)).SetName("João Renamed").Exec(sys); err != nil {
			t.Fatal(err)
		}
		e.wroteSQL()
		if l := names("/units"); !slices.Contains(l, "Chiado Renamed") || slices.Contains(l, lisbon) {
			t.Errorf("units after a rename: %v", l)
		}
		if l := names("/services" + unitQ); slices.Contains(l, beardTrim) || len(l) != len(before[1])-1 {
			t.Errorf("services after one went offline: %v, was %v", l, before[1])
		}
		if l := names("/barbers" + barbersQ); !slices.Contains(l, "João Renamed") || slices.Contains(l, joao) {
			t.Errorf("barbers after a rename: %v", l)
		}
	})
}
