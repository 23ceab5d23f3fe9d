package graph_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestHoldGuardMoved: on PostgreSQL a hold reads its barber's day
// unlocked and takes the barber's lock in its insert's statement. When
// another writer books the barber between the read and the write, the
// hold still holds its start if that is free; if that is what was booked,
// the insert meets it, and the hold is made again the locking way: it
// refuses the start, or, asked for any barber, takes the next one free.
func TestHoldGuardMoved(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		_, res, s := openJobShop(t, db, "Guard moved", 2)
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		calls, booked := 0, ""
		// meanwhile books [at, at+30 min) with the hold's barber between
		// the hold's read and its write, in a transaction of its own.
		meanwhile := func(at time.Time) context.Context {
			return graph.BeforeGuardedWrite(s.ctx, func(barberID string) {
				calls, booked = calls+1, barberID
				if err := db.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(barberID).
					SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).Exec(actx); err != nil {
					t.Errorf("booking the barber meanwhile: %v", err)
				}
			})
		}
		hold := func(ctx context.Context, barber *string, start time.Time) (*model.HoldSlotInput, error) {
			in := model.HoldSlotInput{UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: barber, StartsAt: at(start)}
			h, err := res.Mutation().HoldSlot(ctx, in)
			if err == nil {
				in.BarberID = &h.BarberID
			}
			return &in, err
		}
		ana := s.barbers[0].ID
		ten := jobsTuesday.Add(10 * time.Hour)

		// Another time booked meanwhile: the start is still free.
		got, err := hold(meanwhile(ten.Add(2*time.Hour)), &ana, ten)
		if db.Dialect != dialect.Postgres {
			if calls != 0 {
				t.Fatalf("a guarded write on %s", db.Dialect)
			}
			return
		}
		if err != nil || calls != 1 || *got.BarberID != ana {
			t.Fatalf("a hold whose barber was booked at another time meanwhile: %v (guarded writes %d)", err, calls)
		}

		// The start itself booked meanwhile: refused, nothing held.
		halfPast := ten.Add(30 * time.Minute)
		if _, err := hold(meanwhile(halfPast), &ana, halfPast); domain.ErrorCode(err) != domain.CodeSlotUnavailable {
			t.Fatalf("a hold whose start was booked meanwhile: %v, want slot_unavailable", err)
		}

		// Any barber: the one read free was booked meanwhile, the other
		// holds the start.
		eleven := ten.Add(time.Hour)
		got, err = hold(meanwhile(eleven), nil, eleven)
		if err != nil || *got.BarberID == booked {
			t.Fatalf("a hold with any barber, the first booked meanwhile: %v", err)
		}
		if calls != 3 {
			t.Fatalf("%d guarded writes, want 3", calls)
		}
		n, err := db.Hold.Query().Count(actx)
		if err != nil || n != 2 {
			t.Fatalf("%d holds written (%v), want 2", n, err)
		}
		if n, err := db.Reservation.Query().Count(actx); err != nil || n != 5 {
			t.Fatalf("%d reservations (%v), want the 2 holds' and the 3 booked meanwhile", n, err)
		}
	})
}
