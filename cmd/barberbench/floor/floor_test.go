package floor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/cmd/barberbench/floor"
	"barberd/ent/schema/pulid"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// accountTables are the tables whose rows belong to an account.
var accountTables = []string{
	"deliveries", "notifications", "reservations", "appointments", "holds", "time_offs",
	"customers", "api_keys", "barbers", "services", "units",
}

func TestScratchFloor(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f, err := floor.Scratch(ctx, db.SQL, db.Dialect, 64)
		if err != nil {
			t.Fatal(err)
		}
		closed := false
		defer func() {
			if !closed {
				_ = f.Close(ctx)
			}
		}()
		acc := f.Target().AccountID

		// A few creates at once, as the benchmarks run them.
		const workers, each = 4, 5
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Go(func() {
				for range each {
					if err := f.Create(ctx); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		const n = workers * each
		for _, table := range []string{"appointments", "reservations", "notifications", "deliveries", "customers"} {
			if got := storetest.Count(t, db, "SELECT count(*) FROM "+table+" WHERE account_id = ?", acc); got != n {
				t.Errorf("%s: %d rows, want %d", table, got, n)
			}
		}
		// Every appointment is confirmed, with its reservation, its
		// notification and the notification's delivery.
		joined := storetest.Count(t, db, `SELECT count(*) FROM appointments a
			JOIN reservations r ON r.appointment_id = a.id
			JOIN notifications n ON n.appointment_id = a.id
			JOIN deliveries d ON d.notification_id = n.id
			JOIN customers c ON c.id = a.customer_id
			WHERE a.account_id = ? AND a.status = 'confirmed' AND a.external_reference IS NOT NULL
			AND r.starts_at = a.starts_at AND r.barber_id = a.barber_id`, acc)
		if joined != n {
			t.Errorf("%d complete creates, want %d", joined, n)
		}

		// The conflict check reads time off: a second floor on the same
		// target starts at the first barber's first slot, now taken.
		tg := f.Target()
		again, err := floor.New(db.SQL, db.Dialect, tg)
		if err != nil {
			t.Fatal(err)
		}
		if err := again.Create(ctx); !errors.Is(err, floor.ErrSlotTaken) {
			t.Errorf("create on a booked slot: %v, want ErrSlotTaken", err)
		}
		// ... and time off.
		off := tg
		off.BarberIDs = tg.BarberIDs[len(tg.BarberIDs)-1:]
		off.Start = tg.Start.Add(30 * 24 * time.Hour)
		ins := `INSERT INTO time_offs (id, created_at, updated_at, starts_at, ends_at, reason, barber_id, account_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
		if db.Dialect == dialect.SQLite {
			ins = `INSERT INTO time_offs (id, created_at, updated_at, starts_at, ends_at, reason, barber_id, account_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
		}
		now := time.Now().UTC()
		if _, err := db.SQL.Exec(ins, pulid.New("tof"), now, now, off.Start.Add(-time.Hour), off.Start.Add(15*time.Minute),
			"", off.BarberIDs[0], acc); err != nil {
			t.Fatal(err)
		}
		offFloor, err := floor.New(db.SQL, db.Dialect, off)
		if err != nil {
			t.Fatal(err)
		}
		if err := offFloor.Create(ctx); !errors.Is(err, floor.ErrSlotTaken) {
			t.Errorf("create over time off: %v, want ErrSlotTaken", err)
		}
		if got := storetest.Count(t, db, "SELECT count(*) FROM appointments WHERE account_id = ?", acc); got != n {
			t.Errorf("%d appointments after refused creates, want %d", got, n)
		}

		// Teardown removes the account and every row of it.
		closed = true
		if err := f.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, table := range accountTables {
			if got := storetest.Count(t, db, "SELECT count(*) FROM "+table+" WHERE account_id = ?", acc); got != 0 {
				t.Errorf("%s: %d rows left", table, got)
			}
		}
		if got := storetest.Count(t, db, "SELECT count(*) FROM accounts WHERE id = ?", acc); got != 0 {
			t.Error("the scratch account is left")
		}
		if db.Dialect == dialect.Postgres {
			// The indexes the teardown builds for its foreign-key checks
			// go with its transaction.
			if got := storetest.Count(t, db, "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'barberbench_teardown_%'"); got != 0 {
				t.Errorf("%d teardown indexes left", got)
			}
		}
	})
}

func TestStatements(t *testing.T) {
	pg, lite := floor.Statements(dialect.Postgres), floor.Statements(dialect.SQLite)
	if len(pg) != 8 || len(lite) != 7 {
		t.Fatalf("%d PostgreSQL and %d SQLite statements, want 8 and 7", len(pg), len(lite))
	}
	for _, q := range lite {
		if strings.Contains(q, "$") {
			t.Errorf("SQLite statement with $: %s", q)
		}
	}
}
