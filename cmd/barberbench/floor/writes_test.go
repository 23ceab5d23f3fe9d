package floor_test

import (
	"context"
	"errors"
	"testing"

	"barberd/cmd/barberbench/floor"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// The floors of a hold, a cancel and a reschedule write what barberd's
// would: a hold with its blocking reservation; a cancelled appointment
// without one; a moved appointment with its reservation at the new time;
// each change with its notification and delivery.
func TestWriteFloors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f, err := floor.Scratch(ctx, db.SQL, db.Dialect, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close(ctx) }()
		acc := f.Target().AccountID
		count := func(q string) int { return storetest.Count(t, db, q, acc) }

		for range 2 {
			if err := f.Hold(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := count(`SELECT count(*) FROM holds h JOIN reservations r ON r.hold_id = h.id
			WHERE h.account_id = ? AND h.status = 'active' AND r.expires_at = h.expires_at`); got != 2 {
			t.Errorf("%d holds with their reservations, want 2", got)
		}
		a, err := f.Book(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.Book(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Cancel(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := f.Cancel(ctx, a); !errors.Is(err, floor.ErrNotConfirmed) {
			t.Errorf("cancel again: %v, want ErrNotConfirmed", err)
		}
		moved, err := f.Reschedule(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if moved.ID != b.ID || moved.BarberID != b.BarberID || !moved.Start.After(b.Start) {
			t.Errorf("moved %+v from %+v", moved, b)
		}
		if got := count(`SELECT count(*) FROM appointments WHERE account_id = ? AND status = 'cancelled' AND version = 2`); got != 1 {
			t.Errorf("%d cancelled, want 1", got)
		}
		if got := count(`SELECT count(*) FROM reservations r JOIN appointments a ON a.id = r.appointment_id
			WHERE r.account_id = ? AND r.starts_at = a.starts_at AND a.status = 'confirmed' AND a.version = 2`); got != 1 {
			t.Errorf("%d moved appointments with their reservation, want 1", got)
		}
		if got := count(`SELECT count(*) FROM reservations WHERE account_id = ? AND appointment_id IS NOT NULL`); got != 1 {
			t.Errorf("%d appointment reservations, want 1", got)
		}
		if got := count(`SELECT count(*) FROM notifications n JOIN deliveries d ON d.notification_id = n.id
			WHERE n.account_id = ? AND n.type IN ('appointment.cancelled', 'appointment.rescheduled')`); got != 2 {
			t.Errorf("%d events delivered, want 2", got)
		}
	})
}
