package graph_test

import (
	"context"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestGuardMoved: on PostgreSQL a hold, or a create or a reschedule
// without a hold, reads its barber's day unlocked and takes the barber's
// lock in its write's statement (a create's or a reschedule's: its
// event's, which carries the appointment or its move).
// When another writer books the barber between the read and the write,
// the write still takes its start if that is free; if that is what was
// booked, the write meets it: with the barber named it refuses the start;
// asked for any barber, it is made again the locking way and takes the
// next one free. Nothing of a refused write is left: no row, no
// reservation, no event.
func TestGuardMoved(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// A reschedule moves an appointment of the barber booked first,
		// from 16:00 on, without the test's hook. It keeps its barber
		// when none is named: it has no "any barber".
		var setup *jobShop
		setups := 0
		for _, w := range []struct {
			name  string
			write func(res *graph.Resolver, ctx context.Context, in model.HoldSlotInput) (barberID string, err error)
			count func(ctx context.Context) (int, error)
			// rows: what the writes leave (two done, one refused, and, for
			// any barber, one more done); events: the notifications they
			// write
			rows, events int
			anyBarber    bool
		}{
			{"hold", func(res *graph.Resolver, ctx context.Context, in model.HoldSlotInput) (string, error) {
				h, err := res.Mutation().HoldSlot(ctx, in)
				if err != nil {
					return "", err
				}
				return h.BarberID, nil
			}, func(ctx context.Context) (int, error) { return db.Hold.Query().Count(ctx) }, 2, 0, true},
			{"create", func(res *graph.Resolver, ctx context.Context, in model.HoldSlotInput) (string, error) {
				p, err := res.Mutation().CreateAppointment(ctx, model.CreateAppointmentInput{UnitID: in.UnitID, ServiceID: in.ServiceID,
					BarberID: in.BarberID, StartsAt: in.StartsAt, Client: &model.ClientInput{Name: "Guarded Client", Phone: "+351912000111"}})
				if err != nil {
					return "", err
				}
				return p.Appointment.BarberID, nil
			}, func(ctx context.Context) (int, error) { return db.Appointment.Query().Count(ctx) }, 2, 2, true},
			{"reschedule", func(res *graph.Resolver, ctx context.Context, in model.HoldSlotInput) (string, error) {
				a := setup.book(0, jobsTuesday.Add(16*time.Hour+time.Duration(setups)*time.Hour))
				setups++
				moved, err := res.Mutation().RescheduleAppointment(ctx, a.ID, model.RescheduleAppointmentInput{BarberID: in.BarberID, StartsAt: in.StartsAt})
				if err != nil {
					return "", err
				}
				return moved.BarberID, nil
			}, func(ctx context.Context) (int, error) { return db.Appointment.Query().Count(ctx) }, 2, 3, false},
		} {
			t.Run(w.name, func(t *testing.T) {
				_, res, s := openJobShop(t, db, "Guard moved "+w.name, 2)
				setup = s
				actx := tenant.WithAccount(context.Background(), s.acc.ID)
				calls, booked := 0, ""
				// meanwhile books [at, at+30 min) with the write's barber
				// between its read and its write, in a transaction of its
				// own.
				meanwhile := func(at time.Time) context.Context {
					return graph.BeforeGuardedWrite(s.ctx, func(barberID string) {
						calls, booked = calls+1, barberID
						if err := db.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(barberID).
							SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).Exec(actx); err != nil {
							t.Errorf("booking the barber meanwhile: %v", err)
						}
					})
				}
				write := func(ctx context.Context, barber *string, start time.Time) (string, error) {
					return w.write(res, ctx, model.HoldSlotInput{UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: barber, StartsAt: at(start)})
				}
				ana := s.barbers[0].ID
				ten := jobsTuesday.Add(10 * time.Hour)

				// Another time booked meanwhile: the start is still free.
				got, err := write(meanwhile(ten.Add(2*time.Hour)), &ana, ten)
				if db.Dialect != dialect.Postgres {
					if calls != 0 {
						t.Fatalf("a guarded write on %s", db.Dialect)
					}
					return
				}
				if err != nil || calls != 1 || got != ana {
					t.Fatalf("a %s whose barber was booked at another time meanwhile: %v (guarded writes %d)", w.name, err, calls)
				}

				// The start itself booked meanwhile: refused, nothing written.
				halfPast := ten.Add(30 * time.Minute)
				if _, err := write(meanwhile(halfPast), &ana, halfPast); domain.ErrorCode(err) != domain.CodeSlotUnavailable {
					t.Fatalf("a %s whose start was booked meanwhile: %v, want slot_unavailable", w.name, err)
				}

				// Any barber: the one read free was booked meanwhile, the
				// other takes the start.
				if w.anyBarber {
					eleven := ten.Add(time.Hour)
					got, err = write(meanwhile(eleven), nil, eleven)
					if err != nil || got == booked {
						t.Fatalf("a %s with any barber, the first booked meanwhile: %v", w.name, err)
					}
					if calls != 3 {
						t.Fatalf("%d guarded writes, want 3", calls)
					}
				}
				n, err := w.count(actx)
				if err != nil || n != w.rows {
					t.Fatalf("%d written (%v), want %d", n, err, w.rows)
				}
				if n, err := db.Reservation.Query().Count(actx); err != nil || n != w.rows+calls {
					t.Fatalf("%d reservations (%v), want the %d written and the %d booked meanwhile", n, err, w.rows, calls)
				}
				if n, err := db.Notification.Query().Count(actx); err != nil || n != w.events {
					t.Fatalf("%d events (%v), want %d", n, err, w.events)
				}
			})
		}
	})
}

// TestGuardHeld: on PostgreSQL a create or a reschedule with a hold reads
// the hold unlocked, and its write's statement consumes it under the
// barber's lock. A hold untouched meanwhile is consumed; one released or
// used between the read and the write is refused as the locking way
// refuses it (hold_expired, hold_already_used), and nothing of the
// refused write is left: no appointment, no reservation, no event.
func TestGuardHeld(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, reschedule := range []bool{false, true} {
			name := map[bool]string{false: "create", true: "reschedule"}[reschedule]
			t.Run(name, func(t *testing.T) {
				_, res, s := openJobShop(t, db, "Guard held "+name, 1)
				actx := tenant.WithAccount(context.Background(), s.acc.ID)
				ana := s.barbers[0].ID
				ten := jobsTuesday.Add(10 * time.Hour)
				hold := func(start time.Time) string {
					t.Helper()
					h, err := res.Mutation().HoldSlot(s.ctx, model.HoldSlotInput{UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: &ana, StartsAt: at(start)})
					if err != nil {
						t.Fatal(err)
					}
					return h.ID
				}
				var moving string // the appointment a reschedule moves
				if reschedule {
					moving = s.book(0, jobsTuesday.Add(16*time.Hour)).ID
				}
				// write books start with holdID, calling meanwhile between
				// its read and its write.
				calls := 0
				write := func(holdID string, start time.Time, meanwhile func()) error {
					ctx := graph.BeforeGuardedWrite(s.ctx, func(string) {
						calls++
						meanwhile()
					})
					if reschedule {
						_, err := res.Mutation().RescheduleAppointment(ctx, moving, model.RescheduleAppointmentInput{HoldID: &holdID, StartsAt: at(start)})
						return err
					}
					_, err := res.Mutation().CreateAppointment(ctx, model.CreateAppointmentInput{UnitID: s.unit.ID, ServiceID: s.svc.ID,
						StartsAt: at(start), HoldID: &holdID, Client: &model.ClientInput{Name: "Held Client", Phone: "+351912000222"}})
					return err
				}
				status := func(id string) string {
					t.Helper()
					h, err := db.Hold.Get(actx, id)
					if err != nil {
						t.Fatal(err)
					}
					return string(h.Status)
				}
				counts := func() [3]int {
					t.Helper()
					var n [3]int
					var err [3]error
					n[0], err[0] = db.Appointment.Query().Count(actx)
					n[1], err[1] = db.Reservation.Query().Count(actx)
					n[2], err[2] = db.Notification.Query().Count(actx)
					for _, e := range err {
						if e != nil {
							t.Fatal(e)
						}
					}
					return n
				}

				first := hold(ten)
				if err := write(first, ten, func() {}); err != nil {
					t.Fatalf("a %s with a hold untouched meanwhile: %v", name, err)
				}
				if st := status(first); st != "consumed" {
					t.Fatalf("the hold used is %s", st)
				}
				if db.Dialect != dialect.Postgres {
					if calls != 0 {
						t.Fatalf("a guarded write on %s", db.Dialect)
					}
					return
				}
				if calls != 1 {
					t.Fatalf("%d guarded writes, want 1", calls)
				}

				released := hold(ten.Add(time.Hour))
				before := counts()
				err := write(released, ten.Add(time.Hour), func() {
					if _, err := res.Mutation().ReleaseHold(s.ctx, released); err != nil {
						t.Errorf("releasing the hold meanwhile: %v", err)
					}
				})
				if domain.ErrorCode(err) != domain.CodeHoldExpired || status(released) != "released" {
					t.Fatalf("a %s whose hold was released meanwhile: %v, the hold %s; want hold_expired", name, err, status(released))
				}
				before[1]-- // the released hold's
				if got := counts(); got != before {
					t.Fatalf("appointments, reservations, events: %v after a refused %s, want %v", got, name, before)
				}

				used := hold(ten.Add(2 * time.Hour))
				before = counts()
				err = write(used, ten.Add(2*time.Hour), func() {
					if _, err := res.Mutation().CreateAppointment(s.ctx, model.CreateAppointmentInput{UnitID: s.unit.ID, ServiceID: s.svc.ID,
						StartsAt: at(ten.Add(2 * time.Hour)), HoldID: &used, Client: &model.ClientInput{Name: "Other Client", Phone: "+351912000333"}}); err != nil {
						t.Errorf("using the hold meanwhile: %v", err)
					}
				})
				if domain.ErrorCode(err) != domain.CodeHoldAlreadyUsed {
					t.Fatalf("a %s whose hold was used meanwhile: %v, want hold_already_used", name, err)
				}
				before[0]++ // the other create's appointment, its reservation in its hold's place, and its event
				before[2]++
				if got := counts(); got != before {
					t.Fatalf("appointments, reservations, events: %v after a refused %s, want %v", got, name, before)
				}
				if calls != 3 {
					t.Fatalf("%d guarded writes, want 3", calls)
				}
			})
		}
	})
}

// TestGuardCapped: a key's cap on active holds holds when another hold of
// the key takes its last one between a hold's count and its write. On
// PostgreSQL the other hold commits between the two (the guarded write's
// hook), and the first hold's COMMIT, which counts the key's holds again
// under the key's lock, refuses it; tried again, its count refuses it as
// a key at its cap is refused. SQLite writes serially, so there the other
// hold comes after. Either way one hold is written and the other refused
// with too_many_holds, naming the one written.
func TestGuardCapped(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := &jobClock{}
		clock.set(jobsMonday)
		res := limitedResolver(db, clock, func(l *graph.Limits) { l.ActiveHoldsPerKey = 1 })
		s := newJobShop(t, res, "Guard capped", 2)
		ten := jobsTuesday.Add(10 * time.Hour)
		var (
			other    *ent.Hold
			otherErr error
			calls    int
		)
		ctx := graph.BeforeGuardedWrite(s.ctx, func(string) {
			if calls++; calls == 1 {
				other, otherErr = s.hold(res, 1, ten, 300)
			}
		})
		first, err := res.Mutation().HoldSlot(ctx, model.HoldSlotInput{UnitID: s.unit.ID, ServiceID: s.svc.ID, BarberID: &s.barbers[0].ID, StartsAt: at(ten)})
		if db.Dialect == dialect.Postgres {
			if calls != 1 {
				t.Fatalf("%d guarded writes, want 1: the second try refused before its write", calls)
			}
		} else {
			other, otherErr = s.hold(res, 1, ten, 300)
			first, err, other, otherErr = other, otherErr, first, err // the refused one first, as on PostgreSQL
		}
		if otherErr != nil {
			t.Fatalf("the hold written: %v", otherErr)
		}
		e, ok := domain.AsError(err)
		if !ok || e.Code != domain.CodeTooManyHolds || e.HoldCap == nil || e.HoldCap.Active != 1 || e.HoldCap.Max != 1 || e.HoldCap.OldestHoldID != other.ID {
			t.Fatalf("the hold refused: %v (%+v), %v; want too_many_holds naming %s", err, e, first, other.ID)
		}
		actx := tenant.WithAccount(context.Background(), s.acc.ID)
		if n, err := db.Hold.Query().Count(actx); err != nil || n != 1 {
			t.Fatalf("%d holds (%v), want 1", n, err)
		}
		if n, err := db.Reservation.Query().Count(actx); err != nil || n != 1 {
			t.Fatalf("%d reservations (%v), want 1", n, err)
		}
	})
}
