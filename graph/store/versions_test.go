package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// The change versions are what every cache's correctness rests on: each
// change to an account's configuration must raise its config version, each
// change to a barber's reservations its bookings version, and the frequent
// writes that change neither (a key's last use, a bookings version) must
// leave the config version alone.
func TestChangeVersions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.System(context.Background())
		var version func() (config, bookings int64)
		step := func(what string, wantConfig, wantBookings bool, change func() error) {
			t.Helper()
			c0, b0 := version()
			if err := change(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			c1, b1 := version()
			if (c1 > c0) != wantConfig || c1 < c0 {
				t.Errorf("%s: config version %d -> %d, want raised: %v", what, c0, c1, wantConfig)
			}
			if (b1 > b0) != wantBookings || b1 < b0 {
				t.Errorf("%s: bookings version %d -> %d, want raised: %v", what, b0, b1, wantBookings)
			}
		}
		acc := db.Account.Create().SetName("Chain").SaveX(ctx)
		u := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(ctx)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		version = func() (int64, int64) {
			return db.Account.GetX(ctx, acc.ID).ConfigVersion, db.Barber.GetX(ctx, b.ID).BookingsVersion
		}
		var svcID, keyID, offID, rsvID string
		start := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		step("unit update", true, false, func() error { return db.Unit.UpdateOne(u).SetMinLeadMinutes(30).Exec(ctx) })
		step("service create", true, false, func() error {
			s, err := db.Service.Create().SetAccountID(acc.ID).SetName("Cut").SetDurationMinutes(30).
				SetPriceAmount(1000).SetPriceCurrency("EUR").Save(ctx)
			if err == nil {
				svcID = s.ID
			}
			return err
		})
		step("service offered at the unit", true, false, func() error { return db.Unit.UpdateOne(u).AddServiceIDs(svcID).Exec(ctx) })
		step("barber works at the unit", true, false, func() error { return db.Barber.UpdateOne(b).AddUnitIDs(u.ID).Exec(ctx) })
		step("barber performs the service", true, false, func() error { return db.Barber.UpdateOne(b).AddServiceIDs(svcID).Exec(ctx) })
		step("barber stops performing it", true, false, func() error { return db.Barber.UpdateOne(b).RemoveServiceIDs(svcID).Exec(ctx) })
		step("barber renamed", true, false, func() error { return db.Barber.UpdateOne(b).SetName("Ana B.").Exec(ctx) })
		step("working hours", true, false, func() error {
			return db.WorkingHours.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetUnitID(u.ID).
				SetWeekday(2).SetOpensAt("09:00").SetClosesAt("18:00").Exec(ctx)
		})
		step("time off", true, false, func() error {
			o, err := db.TimeOff.Create().SetAccountID(acc.ID).SetBarberID(b.ID).
				SetStartsAt(start).SetEndsAt(start.Add(time.Hour)).Save(ctx)
			if err == nil {
				offID = o.ID
			}
			return err
		})
		step("time off removed", true, false, func() error { return db.TimeOff.DeleteOneID(offID).Exec(ctx) })
		step("API key created", true, false, func() error {
			k, err := db.APIKey.Create().SetAccountID(acc.ID).SetName("bot").SetPrefix("bk_abcdefgh").
				SetSecretHash("hash").SetScopes([]string{"context:read"}).Save(ctx)
			if err == nil {
				keyID = k.ID
			}
			return err
		})
		step("API key used", false, false, func() error { return db.APIKey.UpdateOneID(keyID).SetLastUsedAt(start).Exec(ctx) })
		step("API key revoked", true, false, func() error { return db.APIKey.UpdateOneID(keyID).SetRevokedAt(start).Exec(ctx) })
		step("reservation made", false, true, func() error {
			r, err := db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).
				SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute)).Save(ctx)
			if err == nil {
				rsvID = r.ID
			}
			return err
		})
		step("reservation moved", false, true, func() error {
			return db.Reservation.UpdateOneID(rsvID).SetStartsAt(start.Add(time.Hour)).SetEndsAt(start.Add(90 * time.Minute)).Exec(ctx)
		})
		step("reservation removed", false, true, func() error { return db.Reservation.DeleteOneID(rsvID).Exec(ctx) })

		// A reservation that changes barbers changes both barbers' versions.
		other := db.Barber.Create().SetAccountID(acc.ID).SetName("Rui").SaveX(ctx)
		otherVersion := func() int64 { return db.Barber.GetX(ctx, other.ID).BookingsVersion }
		r := db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(other.ID).
			SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute)).SaveX(ctx)
		o0 := otherVersion()
		step("reservation given to this barber", false, true, func() error {
			return db.Reservation.UpdateOne(r).SetBarberID(b.ID).Exec(ctx)
		})
		o1 := otherVersion()
		step("reservation given back", false, true, func() error {
			return db.Reservation.UpdateOne(r).SetBarberID(other.ID).Exec(ctx)
		})
		if o2 := otherVersion(); o1 <= o0 || o2 <= o1 {
			t.Errorf("the other barber's bookings version went %d, %d, %d; want it raised each time", o0, o1, o2)
		}
		// Many reservations in one statement, as a bulk import writes them.
		step("reservations inserted at once", false, true, func() error {
			var values []string
			var args []any
			for i := range 20 {
				at := start.Add(time.Duration(24+i) * time.Hour)
				n := len(args)
				values = append(values, fmt.Sprintf("($%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5))
				args = append(args, fmt.Sprintf("rsv_bulk_%02d", i), at, at.Add(30*time.Minute), acc.ID, b.ID)
			}
			_, err := db.SQL.ExecContext(ctx, "INSERT INTO reservations (id, starts_at, ends_at, account_id, barber_id) VALUES "+
				strings.Join(values, ", "), args...)
			return err
		})
		step("reservations removed at once", false, true, func() error {
			_, err := db.SQL.ExecContext(ctx, "DELETE FROM reservations WHERE id LIKE 'rsv_bulk_%'")
			return err
		})
		// A reservation deleted after it ended (the pruning of past
		// appointments' time) frees no slot: on PostgreSQL it leaves the
		// barber's cached days alone; SQLite's triggers bump regardless.
		past := time.Now().Add(-3 * time.Hour).Truncate(time.Second)
		step("past reservation made", false, true, func() error {
			var err error
			r, err = db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).
				SetStartsAt(past).SetEndsAt(past.Add(30 * time.Minute)).Save(ctx)
			return err
		})
		step("past reservation pruned", false, db.Dialect != dialect.Postgres, func() error {
			return db.Reservation.DeleteOneID(r.ID).Exec(ctx)
		})
		db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(past).SetEndsAt(past.Add(30 * time.Minute)).ExecX(ctx)
		db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute)).ExecX(ctx)
		step("an ended and a future reservation removed at once", false, true, func() error {
			_, err := db.SQL.ExecContext(ctx, "DELETE FROM reservations WHERE barber_id = $1", b.ID)
			return err
		})
	})
}

// Every bump of a bookings version on PostgreSQL appends the barber to the
// log of changes the fence's feed reads, and the pruner removes a change
// only once its transaction had ended ChangesKeep before. (SQLite keeps no
// log: nothing to prune.)
func TestChangesPruner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(ctx)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").SaveX(ctx)
		logged := func() int {
			t.Helper()
			if db.Dialect != dialect.Postgres {
				return 0
			}
			var n int
			if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM "+store.ChangesTable+" WHERE barber_id = $1", b.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		book := func(hours int) {
			at := time.Now().Add(time.Duration(hours) * time.Hour).Truncate(time.Second)
			db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).ExecX(ctx)
		}
		book(24)
		want := 0
		if db.Dialect == dialect.Postgres {
			want = 1
		}
		if n := logged(); n != want {
			t.Fatalf("%d changes logged for a booking, want %d", n, want)
		}
		// The snapshots' xmin is the whole cluster's: other tests'
		// transactions may hold it under this test's changes for a while.
		// Each prune below that must find the changes made so far ended
		// waits until it has passed them.
		ended := func() {
			t.Helper()
			if db.Dialect != dialect.Postgres {
				return
			}
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				var past bool
				if err := db.SQL.QueryRowContext(ctx, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint > max(xid) FROM "+store.ChangesTable+" WHERE barber_id = $1", b.ID).Scan(&past); err != nil {
					t.Fatal(err)
				}
				if past {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("the snapshots' xmin did not pass this test's changes within a minute")
				}
			}
		}
		p := store.NewChangesPruner(db)
		ended()
		t0 := time.Now()
		prune := func(at time.Time, want int) {
			t.Helper()
			if n, err := p.Prune(ctx, at); err != nil || n != want {
				t.Fatalf("pruned %d (%v) at %v, want %d", n, err, at.Sub(t0), want)
			}
		}
		prune(t0, 0) // its first xmin: nothing is old enough yet
		book(25)     // after that xmin
		ended()
		prune(t0.Add(store.ChangesKeep/2), 0)
		if db.Dialect == dialect.Postgres {
			want = 2
		}
		if n := logged(); n != want {
			t.Fatalf("%d changes logged, want %d", n, want)
		}
		// ChangesKeep after the first prune, the change made before it
		// goes; the one made after it stays, until ChangesKeep after the
		// second.
		prune(t0.Add(store.ChangesKeep), want/2)
		if n := logged(); n != want/2 {
			t.Fatalf("%d changes logged after the prune, want %d", n, want/2)
		}
		prune(t0.Add(store.ChangesKeep*3/2), want/2)
		if n := logged(); n != 0 {
			t.Fatalf("%d changes logged after the second prune, want 0", n)
		}
	})
}

// The feed's query keeps one plan, and that plan reads the log by its
// index, whether the log was analyzed or not: a query planned for each
// xmin, or one that scans the whole log, costs the database far more than
// the fence's hundreds of queries a second should.
func TestFeedPlan(t *testing.T) {
	db := storetest.Open(t, dialect.Postgres)
	db.SQL.SetMaxOpenConns(1) // the statement's session is the one asked about
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, "INSERT INTO "+store.ChangesTable+
		" SELECT g, 'brb_' || (g % 300), g FROM generate_series(1, 5000) g"); err != nil {
		t.Fatal(err)
	}
	r := store.NewVersionReader(db)
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := db.SQL.ExecContext(ctx, "ANALYZE "+store.ChangesTable); err != nil {
				t.Fatal(err)
			}
		}
		since := int64(store.NoChanges)
		for range 10 {
			_, _, xmin, _, err := r.Feed(ctx, []string{"acc_none"}, nil, since)
			if err != nil {
				t.Fatal(err)
			}
			since = xmin
		}
		var name string
		var generic, custom int
		if err := db.SQL.QueryRowContext(ctx, "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%' || $1 || '%'",
			store.ChangesTable).Scan(&name, &generic, &custom); err != nil {
			t.Fatal(err)
		}
		if custom > 5 || generic < 5 {
			t.Errorf("analyzed %v: the feed's query: %d generic plans, %d custom plans", analyzed, generic, custom)
		}
		rows, err := db.SQL.QueryContext(ctx, fmt.Sprintf(`EXPLAIN EXECUTE %q('{}', '{}', %d)`, name, since))
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		if text := strings.Join(plan, "\n"); strings.Contains(text, "Seq Scan on "+store.ChangesTable) || !strings.Contains(text, store.ChangesTable+"_xid") {
			t.Errorf("analyzed %v: the feed's plan does not read the log's index:\n%s", analyzed, text)
		}
	}
}

// The log of bookings changes is one of the growing tables: its statistics
// are gathered again as it grows, so the feed's one plan is made again for
// its size.
func TestChangesLogAnalyzedAsItGrows(t *testing.T) {
	db := storetest.Open(t, dialect.Postgres)
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, "ANALYZE "+store.ChangesTable); err != nil { // empty, as a new database's
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "INSERT INTO "+store.ChangesTable+
		" SELECT g, 'brb_' || (g % 300), g FROM generate_series(1, 3000) g"); err != nil {
		t.Fatal(err)
	}
	var tuples float64
	for deadline := time.Now().Add(10 * time.Second); tuples != 3000; time.Sleep(100 * time.Millisecond) {
		// n_live_tup, which says the statistics are stale, is the
		// inserting session's count until it reports it.
		if _, err := db.AnalyzeGrown(ctx, store.GrowingTables); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE relname = $1", store.ChangesTable).Scan(&tuples); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log's statistics: %v rows, want 3000", tuples)
		}
	}
}
