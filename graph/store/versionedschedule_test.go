package store_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestVersionedScheduleRows: the versioned day read is the day read plus
// one row per barber asked for of the context's account, with the bookings
// version the barber has (raised by a reservation, as the triggers do);
// another account's barber gets none.
func TestVersionedScheduleRows(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		sys := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(sys)
		other := db.Account.Create().SetName("Other").SaveX(sys)
		u := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(sys)
		ana := db.Barber.Create().SetAccountID(acc.ID).SetName("Ana").AddUnitIDs(u.ID).SaveX(sys)
		bia := db.Barber.Create().SetAccountID(acc.ID).SetName("Bia").AddUnitIDs(u.ID).SaveX(sys)
		stranger := db.Barber.Create().SetAccountID(other.ID).SetName("Eva").SaveX(sys)
		monday := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		db.WorkingHours.Create().SetAccountID(acc.ID).SetBarberID(ana.ID).SetUnitID(u.ID).
			SetWeekday(1).SetOpensAt("09:00").SetClosesAt("18:00").ExecX(sys)
		db.TimeOff.Create().SetAccountID(acc.ID).SetBarberID(bia.ID).
			SetStartsAt(monday.Add(9 * time.Hour)).SetEndsAt(monday.Add(12 * time.Hour)).ExecX(sys)
		for i := range 3 {
			start := monday.Add(time.Duration(10+i) * time.Hour)
			db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(ana.ID).SetStartsAt(start).SetEndsAt(start.Add(30 * time.Minute)).ExecX(sys)
		}

		ctx := tenant.WithAccount(context.Background(), acc.ID)
		ids := []string{ana.ID, bia.ID, stranger.ID}
		from, to, now := monday, monday.Add(24*time.Hour), monday.Add(-time.Hour)
		plain, err := store.ScheduleRows(ctx, db.SQL, db.Dialect, u.ID, ids, []int{1}, from, to, now)
		if err != nil {
			t.Fatal(err)
		}
		versioned, err := store.VersionedScheduleRows(ctx, db.SQL, db.Dialect, u.ID, ids, []int{1}, from, to, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(plain) != 5 { // Ana's hours and reservations, Bia's time off
			t.Fatalf("the day read %d rows: %+v", len(plain), plain)
		}
		var rest []store.ScheduleRow
		got := map[string]int64{}
		for _, r := range versioned {
			if r.Kind == store.RowBookings {
				if r.ID != r.BarberID {
					t.Errorf("bookings row of %s names barber %s", r.ID, r.BarberID)
				}
				got[r.BarberID] = r.Bookings
				continue
			}
			rest = append(rest, r)
		}
		key := func(r store.ScheduleRow) string { return r.ID }
		slices.SortFunc(plain, func(a, b store.ScheduleRow) int { return strings.Compare(key(a), key(b)) })
		slices.SortFunc(rest, func(a, b store.ScheduleRow) int { return strings.Compare(key(a), key(b)) })
		if len(rest) != len(plain) {
			t.Fatalf("versioned read: %d schedule rows, the day read %d", len(rest), len(plain))
		}
		for i := range plain {
			if rest[i].ID != plain[i].ID || rest[i].Kind != plain[i].Kind || !rest[i].StartsAt.Equal(plain[i].StartsAt) {
				t.Errorf("row %d: %+v, the day read %+v", i, rest[i], plain[i])
			}
		}
		want := map[string]int64{
			ana.ID: db.Barber.GetX(sys, ana.ID).BookingsVersion,
			bia.ID: db.Barber.GetX(sys, bia.ID).BookingsVersion,
		}
		if want[ana.ID] <= want[bia.ID] {
			t.Fatalf("Ana's three reservations left her bookings version at %d, Bia's %d", want[ana.ID], want[bia.ID])
		}
		if len(got) != len(want) || got[ana.ID] != want[ana.ID] || got[bia.ID] != want[bia.ID] {
			t.Errorf("bookings versions %v, want %v (and none of another account's barber)", got, want)
		}
	})
}

// TestVersionedReadFindsBarbersByKey: on PostgreSQL, the versioned day
// read's generic plan (the one a connection keeps for it) finds the
// barbers it versions by their key, whatever the statistics say of the
// barbers: an account with hundreds, then many accounts. A plan left to
// the statistics scanned the account's barbers (a hash join, or the
// account's index), comparing every row with every id: 0.1–0.2 ms of a
// cold day.
func TestVersionedReadFindsBarbersByKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Dialect != dialect.Postgres {
			t.Skip("PostgreSQL's plans")
		}
		ctx := context.Background()
		sys := tenant.System(ctx)
		acc := db.Account.Create().SetName("Chain").SaveX(sys)
		u := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(sys)
		conn, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// barbers inserts n barbers of each of accounts more accounts
		// (the chain's own when accounts is 0), then gathers the table's
		// statistics.
		barbers := func(prefix string, accounts, n int) {
			t.Helper()
			owner := `'` + acc.ID + `'`
			if accounts > 0 {
				if _, err := conn.ExecContext(ctx, `INSERT INTO accounts (id, created_at, updated_at, name)
SELECT '`+prefix+`acc_' || a, now(), now(), 'Other' FROM generate_series(1, `+strconv.Itoa(accounts)+`) a`); err != nil {
					t.Fatal(err)
				}
				owner = `'` + prefix + `acc_' || a`
			} else {
				accounts = 1
			}
			for _, q := range []string{`INSERT INTO barbers (id, created_at, updated_at, name, account_id)
SELECT '` + prefix + `brb_' || a || '_' || i, now(), now(), 'Barber', ` + owner + `
FROM generate_series(1, ` + strconv.Itoa(accounts) + `) a, generate_series(1, ` + strconv.Itoa(n) + `) i`,
				`ANALYZE barbers`} {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		ids := make([]string, 12)
		for i := range ids {
			ids[i] = "big_brb_1_" + strconv.Itoa(i+1)
		}
		monday := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		q, args, err := store.VersionedScheduleStatement(tenant.WithAccount(ctx, acc.ID), u.ID, ids, []int{1},
			monday, monday.Add(24*time.Hour), monday.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		for i, setup := range []func(){
			func() { barbers("big_", 0, 300) },   // one account of 300
			func() { barbers("many_", 200, 20) }, // and 200 of 20
		} {
			setup()
			plan := storetest.PrepareGeneric(t, conn, "versioned_"+strconv.Itoa(i), q)(args...)
			scans := storetest.Scans(t, plan, "barbers")
			if len(scans) == 0 {
				t.Fatalf("the versioned read reads no barbers:\n%s", plan)
			}
			for _, s := range scans {
				if s != "barbers_pkey" {
					t.Errorf("setup %d: the versioned read's generic plan reads the barbers by %q, not by their key:\n%s", i, s, plan)
				}
			}
		}
	})
}
