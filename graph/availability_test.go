package graph_test

import (
	"context"
	"testing"

	"barberd/graph"
	"barberd/graph/domain"
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
		ctx := domain.WithViewer(context.Background(), v)
		lisbon, haircut, joao := keys.IDs["Barbearia Chiado"], keys.IDs["Haircut"], keys.IDs["João Silva"]
		const date = "2027-03-02"
		day := func(barberID *string) *graph.Day {
			t.Helper()
			d, err := res.AvailabilityDay(ctx, lisbon, haircut, barberID, date)
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
		if d := day(&joao); d.Tag != first.Tag {
			t.Fatalf("one barber's day has tag %d, every barber's %d", d.Tag, first.Tag)
		}
		slots := first.Availability(&joao).Slots
		if len(slots) == 0 {
			t.Fatal("João has no free slot")
		}

		if _, err := res.Mutation().HoldSlot(ctx, model.HoldSlotInput{
			UnitID: lisbon, ServiceID: haircut, BarberID: &joao, StartsAt: slots[0].StartsAt,
		}); err != nil {
			t.Fatal(err)
		}
		held := day(nil)
		if held.Tag == first.Tag || held.Tag == 0 {
			t.Fatalf("tag %d after a hold, %d before", held.Tag, first.Tag)
		}
		if n := len(held.Availability(&joao).Slots); n >= len(slots) {
			t.Fatalf("João has %d free slots after a hold, %d before", n, len(slots))
		}
	})
}
