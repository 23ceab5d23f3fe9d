package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

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
