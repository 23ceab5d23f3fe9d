package store_test

import (
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestLockedScheduleGeneric: on PostgreSQL, a writer's locked read of its
// barber's time runs the day statement on its generic plan from the first
// transaction on (no planning of its own: PostgreSQL would plan it for its
// values on every run, its generic estimate being ten times theirs), and
// that plan reads the barber's thousands of reservations by their indexes,
// never by a scan; the rest of the transaction keeps generic plans, the
// next transaction does not. On SQLite it reads the same day.
func TestLockedScheduleGeneric(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newMondays(t, db)
		sys, ctx, acc, u, b := s.sys, s.ctx, s.acc, s.unit, s.barber
		monday := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		now := monday.Add(-24 * time.Hour)
		// A reservation every hour from the Monday on, 3,000 of them on
		// PostgreSQL, whose plans they are for (SQLite's trigger against
		// overlaps makes each insert read the others: 40 there), and an
		// expired hold's in the Monday's 17:00.
		n := 3000
		if db.Dialect != dialect.Postgres {
			n = 40
		}
		rs := make([]*ent.ReservationCreate, n)
		for i := range rs {
			start := monday.Add(time.Duration(i) * time.Hour)
			rs[i] = db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute))
			if i == 17 {
				rs[i].SetExpiresAt(now.Add(-time.Minute))
			}
		}
		db.Reservation.CreateBulk(rs...).ExecX(sys)
		if db.Dialect == dialect.Postgres {
			if _, err := db.SQL.ExecContext(sys, `ANALYZE reservations`); err != nil {
				t.Fatal(err)
			}
		}
		for run := range 3 {
			tx, err := db.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			row := func(q string, dest ...any) bool {
				t.Helper()
				rows, err := tx.QueryContext(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				if !rows.Next() {
					return false
				}
				if err := rows.Scan(dest...); err != nil {
					t.Fatal(err)
				}
				return true
			}
			scans := func() (n int64) {
				t.Helper()
				if db.Dialect == dialect.Postgres {
					row(`SELECT pg_stat_get_xact_numscans('reservations'::regclass)`, &n)
				}
				return n
			}
			before := scans()
			day, err := db.LockedSchedule(ctx, tx, u.ID, b.ID, []int{1}, monday.Add(9*time.Hour), monday.Add(18*time.Hour), now)
			if err != nil {
				t.Fatal(err)
			}
			if n := scans() - before; n != 0 {
				t.Errorf("run %d: the reservations were scanned %d times", run, n)
			}
			kept := 0
			for _, r := range day.Rows {
				if r.Kind == store.RowReservation {
					kept++
				}
			}
			if len(day.Expired) != 1 || kept != 8 {
				t.Errorf("run %d: %d expired, %d reservations in the day; want 1 and 8 (09:00 to 16:00; 17:00's expired)", run, len(day.Expired), kept)
			}
			if db.Dialect == dialect.Postgres {
				var mode string
				row(`SHOW plan_cache_mode`, &mode)
				if mode != "force_generic_plan" {
					t.Errorf("run %d: plan_cache_mode %s after the lock", run, mode)
				}
				// With the statement cache off (.ci/run's second pass) nothing
				// is prepared, and nothing is kept to plan again.
				var custom, generic int
				prepared := row(`SELECT custom_plans, generic_plans FROM pg_prepared_statements WHERE statement LIKE 'WITH expired AS%'`, &custom, &generic)
				if prepared != storetest.StatementCache() || prepared && (custom != 0 || generic < 1) {
					t.Errorf("run %d: the day statement prepared %v, planned for its values %d times, ran its generic plan %d times", run, prepared, custom, generic)
				}
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
		if db.Dialect == dialect.Postgres {
			var mode string
			if err := db.SQL.QueryRowContext(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil || mode != "auto" {
				t.Errorf("after the transactions: plan_cache_mode %q, %v", mode, err)
			}
		}
	})
}
