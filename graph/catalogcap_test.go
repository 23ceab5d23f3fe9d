package graph_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"barberd/ent"
	"barberd/ent/barber"
	"barberd/ent/schema/tenant"
	"barberd/graph/admin"
	"barberd/graph/domain"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// An account has at most graph.MaxCatalog units, services and barbers,
// inactive ones included, and a barber at most graph.MaxCatalog time off
// entries: creates past the cap are refused with catalog_full, exactly at
// the cap however many race for the last places, so every list and edge of
// the catalog fits in one page.
func TestCatalogCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := gqltest.NewServer(t, db)
		ctx := tenant.WithAccount(context.Background(), s.Keys.AccountID)
		const free, racers = 3, 8
		anyBarber := db.Barber.Query().Where(barber.Active(true)).FirstX(ctx)

		// Each kind is filled to MaxCatalog-free with past or inactive rows.
		day := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		acc := s.Keys.AccountID
		var (
			units    []*ent.UnitCreate
			services []*ent.ServiceCreate
			barbers  []*ent.BarberCreate
			timeOff  []*ent.TimeOffCreate
		)
		for i := db.Unit.Query().CountX(ctx); i < admin.MaxCatalog-free; i++ {
			units = append(units, db.Unit.Create().SetAccountID(acc).SetName(fmt.Sprintf("Old unit %d", i)).SetTimezone("Europe/Lisbon").SetActive(false))
		}
		for i := db.Service.Query().CountX(ctx); i < admin.MaxCatalog-free; i++ {
			services = append(services, db.Service.Create().SetAccountID(acc).SetName(fmt.Sprintf("Old service %d", i)).
				SetDurationMinutes(30).SetPriceAmount(1000).SetPriceCurrency("EUR").SetActive(false))
		}
		for i := db.Barber.Query().CountX(ctx); i < admin.MaxCatalog-free; i++ {
			barbers = append(barbers, db.Barber.Create().SetAccountID(acc).SetName(fmt.Sprintf("Old barber %d", i)).SetActive(false))
		}
		for i := anyBarber.QueryTimeOff().CountX(ctx); i < admin.MaxCatalog-free; i++ {
			at := day.AddDate(0, 0, i)
			timeOff = append(timeOff, db.TimeOff.Create().SetAccountID(acc).SetBarberID(anyBarber.ID).SetStartsAt(at).SetEndsAt(at.Add(time.Hour)))
		}
		db.Unit.CreateBulk(units...).ExecX(ctx)
		db.Service.CreateBulk(services...).ExecX(ctx)
		db.Barber.CreateBulk(barbers...).ExecX(ctx)
		db.TimeOff.CreateBulk(timeOff...).ExecX(ctx)

		kinds := []struct {
			name, mutation string
			vars           func(i int) map[string]any
			count          func() int
		}{
			{"units", `mutation($n: String!) { createUnit(input: {name: $n, timezone: "Europe/Lisbon"}) { id } }`,
				func(i int) map[string]any { return map[string]any{"n": fmt.Sprintf("New unit %d", i)} },
				func() int { return db.Unit.Query().CountX(ctx) }},
			{"services", `mutation($n: String!) { createService(input: {name: $n, durationMinutes: 30, priceAmount: 1000, priceCurrency: "EUR"}) { id } }`,
				func(i int) map[string]any { return map[string]any{"n": fmt.Sprintf("New service %d", i)} },
				func() int { return db.Service.Query().CountX(ctx) }},
			{"barbers", `mutation($n: String!) { createBarber(input: {name: $n}) { id } }`,
				func(i int) map[string]any { return map[string]any{"n": fmt.Sprintf("New barber %d", i)} },
				func() int { return db.Barber.Query().CountX(ctx) }},
			{"time off", `mutation($b: ID!, $from: Time!, $to: Time!) { addTimeOff(input: {barberId: $b, startsAt: $from, endsAt: $to}) { id } }`,
				func(i int) map[string]any {
					at := day.AddDate(1, 0, i)
					return map[string]any{"b": anyBarber.ID, "from": at, "to": at.Add(time.Hour)}
				},
				func() int { return anyBarber.QueryTimeOff().CountX(ctx) }},
		}
		for _, k := range kinds {
			if n := k.count(); n != admin.MaxCatalog-free {
				t.Fatalf("%s: filled to %d, want %d", k.name, n, admin.MaxCatalog-free)
			}
			var (
				wg            sync.WaitGroup
				mu            sync.Mutex
				made, refused int
			)
			for i := range racers {
				wg.Go(func() {
					a := s.Query(t, s.Keys.AdminAPIKey, k.mutation, k.vars(i))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case len(a.Errors) == 0:
						made++
					case a.Code() == domain.CodeCatalogFull:
						refused++
					default:
						t.Errorf("%s: %q %s", k.name, a.Code(), a.Messages())
					}
				})
			}
			wg.Wait()
			if made != free || refused != racers-free {
				t.Errorf("%s: %d racers made %d and were refused %d times, want %d and %d", k.name, racers, made, refused, free, racers-free)
			}
			if n := k.count(); n != admin.MaxCatalog {
				t.Errorf("%s: %d after the race, want %d", k.name, n, admin.MaxCatalog)
			}
		}

		// A page of MaxCatalog holds the whole catalog.
		all := s.Query(t, s.Keys.AdminAPIKey, `{ barbers(first: 500) { totalCount edges { node { id } } } }`, nil).OK(t)["barbers"].(map[string]any)
		if n := len(all["edges"].([]any)); n != admin.MaxCatalog || all["totalCount"] != float64(admin.MaxCatalog) {
			t.Errorf("barbers(first: 500): %d of %v", n, all["totalCount"])
		}
	})
}
