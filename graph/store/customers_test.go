package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/customer"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestRideCustomer: a create's customer upsert rides in its barber's lock,
// or in its read of the barber's day (a guarded create's), and returns the
// record's id: a new record, then the phone's record with its name updated
// and its e-mail kept when none is given. On PostgreSQL the upsert takes
// the customer's row before the statement waits for the barber's (writers
// take them in that order, whether the upsert rides or goes alone), and
// the id comes from the lock or the read, no statement of its own; the
// read's caller sees the day's rows alone.
func TestRideCustomer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newMondays(t, db)
		sys, ctx, acc, u, b := s.sys, s.ctx, s.acc, s.unit, s.barber
		day := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		email := "rui@example.com"
		book := func(c store.Customer, read bool) string {
			t.Helper()
			tx, err := db.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback() //nolint:errcheck // committed below
			rctx, ride := store.RideCustomer(ctx, db.Dialect, c)
			if read {
				rows, err := store.ScheduleRows(rctx, tx, db.Dialect, u.ID, []string{b.ID}, []int{1}, day, day.AddDate(0, 0, 1), day.Add(-time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					if r.Kind != store.RowHours {
						t.Errorf("a row of kind %d in a day of working hours alone", r.Kind)
					}
				}
			} else if _, err := db.LockedSchedule(rctx, tx, u.ID, b.ID, []int{1}, day, day.AddDate(0, 0, 1), day.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			id, err := ride.ID(rctx, failing{})
			if db.Dialect != dialect.Postgres {
				id, err = ride.ID(rctx, tx) // no lock to ride in
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return id
		}
		first := book(store.Customer{AccountID: acc.ID, Name: "Rui", Phone: "+351912345678", Email: &email}, false)
		again := book(store.Customer{AccountID: acc.ID, Name: "Rui Costa", Phone: "+351912345678"}, true)
		if again != first {
			t.Fatalf("the phone's second booking made record %s, want %s", again, first)
		}
		c := db.Customer.GetX(sys, first)
		if c.Name != "Rui Costa" || c.Email != email || c.AccountID != acc.ID {
			t.Errorf("record after two bookings: %q %q %q, want the second name and the first e-mail", c.Name, c.Email, c.AccountID)
		}
		if n := db.Customer.Query().Where(customer.AccountID(acc.ID)).CountX(sys); n != 1 {
			t.Errorf("%d records of one phone", n)
		}
		if db.Dialect != dialect.Postgres {
			return
		}
		// The barber's row locked elsewhere: the riding lock waits for it,
		// holding the customer's row already.
		holder, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback() //nolint:errcheck // nothing to keep
		if _, err := holder.ExecContext(ctx, `SELECT 1 FROM barbers WHERE id = $1 FOR UPDATE`, b.ID); err != nil {
			t.Fatal(err)
		}
		done := goTx(ctx, db, func(tx *ent.Tx) error {
			rctx, _ := store.RideCustomer(ctx, db.Dialect, store.Customer{AccountID: acc.ID, Name: "Rui", Phone: "+351912345678"})
			_, err := db.LockedSchedule(rctx, tx, u.ID, b.ID, []int{1}, day, day.AddDate(0, 0, 1), day.Add(-time.Hour))
			return err
		})
		deadline := time.Now().Add(5 * time.Second)
		for {
			err := lockNowait(t, db, "customers", first)
			if store.Classify(err) == store.Retry {
				break // the waiting lock's upsert holds the customer
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Fatalf("the lock did not wait for the barber: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the lock waiting for the barber never took the customer's row")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := holder.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// failing is a Queryer that fails every statement: the id of a riding
// upsert that a lock sent must need none.
type failing struct{}

func (failing) QueryContext(context.Context, string, ...any) (*sql.Rows, error) {
	return nil, errors.New("a statement of its own")
}
