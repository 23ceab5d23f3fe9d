package graph_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/metrics"
	"barberd/graph/quota"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// lookups counts the availability cache's lookups: one per day a request
// reads, so none means no day was computed or read.
type lookups struct {
	metrics.None
	days atomic.Int64
}

func (l *lookups) CacheLookup(cache string, _ bool) {
	if cache == "availability" {
		l.days.Add(1)
	}
}

// largeUnit is a resolver over db with the demo account and its Large
// unit, a context acting as its booking key, and the day lookups.
func largeUnit(t *testing.T, db *store.DB) (*graph.Resolver, context.Context, *demo.Large, *lookups) {
	t.Helper()
	counts := &lookups{}
	res := graph.New(graph.Settings{DB: db, Metrics: counts, Now: func() time.Time { return time.Date(2027, 3, 1, 6, 0, 0, 0, time.UTC) }})
	keys, err := demo.Seed(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	large, err := demo.SeedLarge(context.Background(), db, keys.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := res.Authenticate(context.Background(), keys.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	return res, domain.WithViewer(context.Background(), v), large, counts
}

func fields(t *testing.T, err error, code string) []string {
	t.Helper()
	e, ok := domain.AsError(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field)
	}
	return out
}

// On the largest unit the caps allow, an answer over the slot budget is
// refused before any day is read, naming what to narrow; a day of every
// barber and a month of one barber fit.
func TestLargeUnitSlotBudget(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, ctx, l, counts := largeUnit(t, db)
		_, err := res.AvailabilityRange(ctx, l.UnitID, l.ServiceID, nil, "2027-03-02", "2027-04-01")
		if got := fields(t, err, domain.CodeValidationFailed); !slices.Equal(got, []string{"to", "barber_id"}) {
			t.Errorf("31 days refused naming %v, want to and barber_id", got)
		}
		if n := counts.days.Load(); n != 0 {
			t.Errorf("the refused range read %d days, want none", n)
		}
		_, err = res.AvailabilityRange(ctx, l.UnitID, l.ServiceID, nil, "2027-03-02", "2027-03-03")
		if got := fields(t, err, domain.CodeValidationFailed); !slices.Equal(got, []string{"to", "barber_id"}) {
			t.Errorf("2 days refused naming %v, want to and barber_id", got)
		}

		day, err := res.AvailabilityDay(ctx, l.UnitID, l.ServiceID, nil, "2027-03-02")
		if err != nil {
			t.Fatal(err)
		}
		// 288 starts a day, the last 5 too late for a 30-minute service.
		if n, want := len(day.Availability(nil).Slots), demo.LargeBarbers*(288-5); n != want {
			t.Errorf("a day of every barber has %d slots, want %d", n, want)
		}
		one := l.BarberIDs[7]
		days, err := res.AvailabilityRange(ctx, l.UnitID, l.ServiceID, &one, "2027-03-02", "2027-04-01")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range days {
			want := 288 - 5
			if d.Date() == "2027-03-28" {
				want -= 12 // Lisbon skips 01:00-02:00
			}
			if n := len(d.Availability(&one).Slots); n != want {
				t.Fatalf("%s: one barber has %d slots, want %d", d.Date(), n, want)
			}
		}

		// A surface with smaller answers (MCP) lowers the budget.
		small := quota.WithSlots(ctx, 5000)
		_, err = res.AvailabilityDay(small, l.UnitID, l.ServiceID, nil, "2027-03-02")
		if got := fields(t, err, domain.CodeValidationFailed); !slices.Equal(got, []string{"barber_id"}) {
			t.Errorf("a day over a budget of 5000 refused naming %v, want barber_id", got)
		}
		if _, err := res.AvailabilityRange(small, l.UnitID, l.ServiceID, &one, "2027-03-02", "2027-03-08"); err != nil {
			t.Errorf("a week of one barber (2,000 slots) within 5000: %v", err)
		}
	})
}

// A search for the next free times in a daily window no slot can start in
// reads no day; one that finds nothing within its budget of slots refuses,
// telling where to go on.
func TestLargeUnitNextBounded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		res, ctx, l, counts := largeUnit(t, db)
		str := func(s string) *string { return &s }
		next, err := res.NextFreeSlots(ctx, domain.NextSlotsQuery{UnitID: l.UnitID, ServiceID: l.ServiceID, TimeFrom: str("23:57"), TimeTo: str("23:58")})
		if err != nil {
			t.Fatal(err)
		}
		if len(next.Slots) != 0 || next.Reason == nil || *next.Reason != graph.ReasonNoneWithinHorizon {
			t.Errorf("23:57-23:58 on a 5-minute grid: %d slots, reason %v", len(next.Slots), next.Reason)
		}
		if n := counts.days.Load(); n != 0 {
			t.Errorf("the search read %d days, want none", n)
		}

		// Sundays 23:30 only, after the first Sunday's: the next Sunday
		// would pass the budget of 100,000 (57,600 a day).
		q := domain.NextSlotsQuery{UnitID: l.UnitID, ServiceID: l.ServiceID, After: str("2027-03-07T23:31:00"),
			TimeFrom: str("23:30"), TimeTo: str("23:31"), Weekdays: []int{7}}
		_, err = res.NextFreeSlots(ctx, q)
		if got := fields(t, err, domain.CodeValidationFailed); !slices.Equal(got, []string{"after", "barber_id"}) {
			t.Errorf("an exhausted search refused naming %v, want after and barber_id", got)
		}
		if n := counts.days.Load(); n != 1 {
			t.Errorf("the exhausted search read %d days, want 1", n)
		}
		// One barber's days cost 288 slots each: the search goes on.
		q.BarberID = &l.BarberIDs[0]
		next, err = res.NextFreeSlots(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(next.Slots) != 3 || next.Slots[0].StartsAt != "2027-03-14T23:30:00" {
			t.Errorf("one barber's Sundays at 23:30: %+v", next.Slots)
		}

		// A request whose caller left, or whose time ran out, stops before
		// reading a day.
		before := counts.days.Load()
		gone, cancel := context.WithCancel(ctx)
		cancel()
		q.BarberID = nil
		q.After, q.TimeFrom, q.TimeTo, q.Weekdays = nil, nil, nil, nil
		if _, err := res.NextFreeSlots(gone, q); domain.ErrorCode(err) != domain.CodeCanceled {
			t.Errorf("a canceled search: %v, want %s", err, domain.CodeCanceled)
		}
		late, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel()
		if _, err := res.NextFreeSlots(late, q); domain.ErrorCode(err) != domain.CodeUnavailable {
			t.Errorf("a search past its deadline: %v, want %s", err, domain.CodeUnavailable)
		}
		if n := counts.days.Load() - before; n != 0 {
			t.Errorf("the canceled searches read %d days", n)
		}
	})
}
