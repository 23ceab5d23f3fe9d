package graph_test

import (
	"context"
	"testing"

	"barberd/ent/barber"
	"barberd/ent/schema/tenant"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph"
	"barberd/graph/gqlserver/gqltest"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// A day's tag names its slots: it stays while the cached day is current,
// whoever asks (every barber or one), and changes once a booking changes
// the day.
func TestAvailabilityDayTags(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, keys := gqltest.Resolver(t, db)
		// gqltest's resolver has a freshness window of 0: versions are read
		// after each call, so a write shows at once.
		v, err := res.Authenticate(context.Background(), keys.APIKey)
		if err != nil {
			t.Fatal(err)
		}
		ctx := graph.WithViewer(context.Background(), v)
		actx := tenant.WithAccount(context.Background(), keys.AccountID)
		lisbon := db.Unit.Query().Where(unit.Name("Barbearia Chiado")).OnlyX(actx)
		haircut := db.Service.Query().Where(service.Name("Haircut")).OnlyX(actx)
		joao := db.Barber.Query().Where(barber.Name("João Silva")).OnlyX(actx)
		const date = "2027-03-02"
		day := func(barberID *string) *graph.Day {
			t.Helper()
			d, err := res.AvailabilityDay(ctx, lisbon.ID, haircut.ID, barberID, date)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}

		first := day(nil)
		if first.Tag == 0 {
			t.Fatal("a cacheable day has no tag")
		}
		if d := day(nil); d.Tag != first.Tag {
			t.Fatalf("tag %d, then %d, with nothing written", first.Tag, d.Tag)
		}
		if d := day(&joao.ID); d.Tag != first.Tag {
			t.Fatalf("one barber's day has tag %d, every barber's %d", d.Tag, first.Tag)
		}
		slots := first.Availability(&joao.ID).Slots
		if len(slots) == 0 {
			t.Fatal("João has no free slot")
		}

		if _, err := res.Mutation().HoldSlot(ctx, model.HoldSlotInput{
			UnitID: lisbon.ID, ServiceID: haircut.ID, BarberID: &joao.ID, StartsAt: slots[0].StartsAt,
		}); err != nil {
			t.Fatal(err)
		}
		held := day(nil)
		if held.Tag == first.Tag || held.Tag == 0 {
			t.Fatalf("tag %d after a hold, %d before", held.Tag, first.Tag)
		}
		if n := len(held.Availability(&joao.ID).Slots); n >= len(slots) {
			t.Fatalf("João has %d free slots after a hold, %d before", n, len(slots))
		}
	})
}
