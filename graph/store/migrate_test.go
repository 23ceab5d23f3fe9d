package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// fresh opens an empty database of the dialect, not migrated.
func fresh(t *testing.T, dia string) *store.DB {
	t.Helper()
	db, err := store.Open(storetest.URL(t, dia))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func migrations(t *testing.T, dia string) []store.Migration {
	t.Helper()
	ms, err := store.Migrations(dia)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 3 {
		t.Fatalf("%d migrations, want the baseline and those after it", len(ms))
	}
	return ms
}

// shop is the data a shop had before an upgrade.
type shop struct {
	acc     *ent.Account
	barber  *ent.Barber
	hold    *ent.Hold
	booking *ent.Appointment
	at      time.Time
}

// fillShop writes an account with a unit, service, barber, API key, a
// customer, an appointment and a hold (each with its reservation) and a
// notification with its feed row, as the code of the first migration's time
// wrote them: through Ent, setting no field that came later.
func fillShop(t *testing.T, db *store.DB) shop {
	t.Helper()
	ctx := tenant.System(context.Background())
	acc := db.Account.Create().SetName("Chain").SaveX(ctx)
	u := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(ctx)
	b := db.Barber.Create().SetAccountID(acc.ID).SetName("João").SaveX(ctx)
	s := db.Service.Create().SetAccountID(acc.ID).SetName("Cut").SetDurationMinutes(30).
		SetPriceAmount(1000).SetPriceCurrency("EUR").SaveX(ctx)
	k := db.APIKey.Create().SetAccountID(acc.ID).SetName("bot").SetPrefix("p").SetSecretHash("h").
		SetScopes(domain.BookingScopes).SaveX(ctx)
	c := db.Customer.Create().SetAccountID(acc.ID).SetName("Ana").SetPhone("+351912345678").SaveX(ctx)
	at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	a := db.Appointment.Create().SetAccountID(acc.ID).SetUnitID(u.ID).SetServiceID(s.ID).SetBarberID(b.ID).
		SetCustomerID(c.ID).SetClientName("Ana").SetClientPhone("+351912345678").SetAPIKeyID(k.ID).
		SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).SaveX(ctx)
	db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).
		SetAppointmentID(a.ID).ExecX(ctx)
	h := db.Hold.Create().SetAccountID(acc.ID).SetAPIKeyID(k.ID).SetUnitID(u.ID).SetServiceID(s.ID).SetBarberID(b.ID).
		SetStartsAt(at.Add(time.Hour)).SetEndsAt(at.Add(90 * time.Minute)).SetExpiresAt(at).SaveX(ctx)
	db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(h.StartsAt).SetEndsAt(h.EndsAt).
		SetHoldID(h.ID).SetExpiresAt(h.ExpiresAt).ExecX(ctx)
	n := db.Notification.Create().SetAccountID(acc.ID).SetType("appointment.created").SetAppointmentID(a.ID).
		SetSource("api").SetAppointment(map[string]any{"id": a.ID}).SaveX(ctx)
	db.Delivery.Create().SetAccountID(acc.ID).SetAPIKeyID(k.ID).SetNotificationID(n.ID).ExecX(ctx)
	return shop{acc: acc, barber: b, hold: h, booking: a, at: at}
}

// checkShop checks that the shop's data is all there and that the
// database's guarantees hold: no overlapping reservation, and the change
// versions move.
func checkShop(t *testing.T, db *store.DB, s shop) {
	t.Helper()
	ctx := tenant.System(context.Background())
	for name, n := range map[string]int{
		"appointments":  db.Appointment.Query().CountX(ctx),
		"holds":         db.Hold.Query().CountX(ctx),
		"reservations":  db.Reservation.Query().CountX(ctx),
		"notifications": db.Notification.Query().CountX(ctx),
		"deliveries":    db.Delivery.Query().CountX(ctx),
		"api keys":      db.APIKey.Query().CountX(ctx),
	} {
		want := 1
		if name == "reservations" {
			want = 2
		}
		if n != want {
			t.Errorf("%d %s after the upgrade, want %d", n, name, want)
		}
	}
	if k := db.APIKey.Query().OnlyX(ctx); k.MaxActiveHolds != nil {
		t.Errorf("an old key has a hold cap of %d, want none (the server's default)", *k.MaxActiveHolds)
	}
	if a := db.Appointment.GetX(ctx, s.booking.ID); a.ClientName != "Ana" || !a.StartsAt.Equal(s.at) {
		t.Errorf("the appointment reads %+v", a)
	}
	before := db.Barber.GetX(ctx, s.barber.ID).BookingsVersion
	err := db.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(s.barber.ID).
		SetStartsAt(s.at.Add(15 * time.Minute)).SetEndsAt(s.at.Add(45 * time.Minute)).Exec(ctx)
	if store.Classify(err) != store.Overlap {
		t.Errorf("an overlapping reservation: %v, want the no-overlap refusal", err)
	}
	db.Reservation.Create().SetAccountID(s.acc.ID).SetBarberID(s.barber.ID).
		SetStartsAt(s.at.Add(2 * time.Hour)).SetEndsAt(s.at.Add(150 * time.Minute)).ExecX(ctx)
	if after := db.Barber.GetX(ctx, s.barber.ID).BookingsVersion; after <= before {
		t.Errorf("bookings_version %d after a reservation, was %d", after, before)
	}
	config := db.Account.GetX(ctx, s.acc.ID).ConfigVersion
	db.APIKey.Update().SetMaxActiveHolds(3).ExecX(ctx)
	db.APIKey.Update().SetName("bot 2").ExecX(ctx)
	if after := db.Account.GetX(ctx, s.acc.ID).ConfigVersion; after <= config {
		t.Errorf("config_version %d after a key changed, was %d", after, config)
	}
}

// A database made by the first migration, with a shop in it, upgrades to
// the latest with its data and guarantees intact; a second upgrade does
// nothing.
func TestUpgradeFromFirstMigration(t *testing.T) {
	for _, dia := range storetest.Dialects {
		t.Run(dia, func(t *testing.T) {
			ctx := context.Background()
			db := fresh(t, dia)
			ms := migrations(t, dia)
			if applied, err := db.Apply(ctx, ms[:1]); err != nil || len(applied) != 1 {
				t.Fatalf("the first migration: %v, %v", applied, err)
			}
			s := fillShop(t, db)
			applied, err := db.Upgrade(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) != len(ms)-1 {
				t.Errorf("applied %v, want the %d after the first", applied, len(ms)-1)
			}
			if again, err := db.Upgrade(ctx); err != nil || len(again) != 0 {
				t.Errorf("a second upgrade applied %v, %v", again, err)
			}
			st, err := db.CheckSchema(ctx)
			if err != nil || len(st.Pending) != 0 || st.Current.Version != ms[len(ms)-1].Version {
				t.Errorf("after the upgrade: %+v, %v", st, err)
			}
			checkShop(t, db, s)
		})
	}
}

// The latest migration's schema is the one Ent's schema and the
// hand-written DDL make: a schema change without its migration fails here
// (write it with go run ./cmd/migrations new NAME).
func TestMigrationsMatchEntSchema(t *testing.T) {
	for _, dia := range storetest.Dialects {
		t.Run(dia, func(t *testing.T) {
			ctx := context.Background()
			migrated := storetest.Open(t, dia)
			ref := fresh(t, dia)
			if err := ref.CreateReference(ctx); err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]*store.DB{{migrated, ref}, {ref, migrated}} {
				diff, err := pair[0].SchemaDifference(ctx, pair[1])
				if err != nil {
					t.Fatal(err)
				}
				if diff != "" {
					t.Errorf("the migrations' schema differs from Ent's; write a migration with go run ./cmd/migrations new NAME:\n%s", diff)
				}
			}
		})
	}
}

// A database migrated by a newer barberd is refused, by migrate and by the
// check serve makes, naming both versions, and nothing is changed.
func TestNewerDatabaseRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := db.SQL.ExecContext(ctx, `INSERT INTO barberd_schema_migrations (version, name, applied_at)
VALUES ('29990101000000', 'from_the_future', '2999-01-01T00:00:00Z')`); err != nil {
			t.Fatal(err)
		}
		_, err := db.Upgrade(ctx)
		var newer *store.NewerSchemaError
		if !errors.As(err, &newer) || newer.Database.Version != "29990101000000" {
			t.Fatalf("migrate on a newer database: %v", err)
		}
		ms := migrations(t, db.Dialect)
		if newer.Binary.Version != ms[len(ms)-1].Version {
			t.Errorf("the refusal names %s as barberd's latest, want %s", newer.Binary, ms[len(ms)-1])
		}
		if _, err := db.CheckSchema(ctx); !errors.As(err, &newer) {
			t.Errorf("the check on a newer database: %v", err)
		}
		t.Log(err)
	})
}

// Several processes migrating one database at once apply each migration
// once, and all succeed.
func TestConcurrentUpgrade(t *testing.T) {
	for _, dia := range storetest.Dialects {
		t.Run(dia, func(t *testing.T) {
			url := storetest.URL(t, dia)
			var wg sync.WaitGroup
			var mu sync.Mutex
			applied := map[string]int{}
			for range 6 {
				db, err := store.Open(url)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if err := db.Ping(context.Background()); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					ms, err := db.Upgrade(context.Background())
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					defer mu.Unlock()
					for _, m := range ms {
						applied[m.Version]++
					}
				})
			}
			wg.Wait()
			ms := migrations(t, dia)
			for _, m := range ms {
				if applied[m.Version] != 1 {
					t.Errorf("%s applied %d times", m, applied[m.Version])
				}
			}
		})
	}
}

// A database made by the automatic migration of earlier barberds (no
// record of migrations) is adopted: at today's schema, recorded as at the
// latest migration; at the first migration's schema (the retention indexes
// and the API keys' hold cap not yet there), recorded as at the first and
// upgraded with its data; with the indexes but not the hold cap, given the
// hold cap and what came after it. One matching no migration is refused
// unchanged.
func TestAdoptAutoMigratedDatabase(t *testing.T) {
	for _, dia := range storetest.Dialects {
		t.Run(dia, func(t *testing.T) {
			ctx := context.Background()
			ms := migrations(t, dia)
			legacy := func(t *testing.T, stmts ...string) *store.DB {
				db := fresh(t, dia)
				if err := db.CreateReference(ctx); err != nil {
					t.Fatal(err)
				}
				for _, s := range stmts {
					if _, err := db.SQL.ExecContext(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				return db
			}
			t.Run("latest", func(t *testing.T) {
				db := legacy(t)
				if st, err := db.CheckSchema(ctx); err != nil || !st.Legacy {
					t.Errorf("before: %+v, %v; want it seen as legacy", st, err)
				}
				if applied, err := db.Upgrade(ctx); err != nil || len(applied) != 0 {
					t.Fatalf("applied %v, %v; want it adopted at the latest", applied, err)
				}
				if st, err := db.CheckSchema(ctx); err != nil || st.Current.Version != ms[len(ms)-1].Version {
					t.Errorf("after: %+v, %v", st, err)
				}
			})
			// at is a legacy database at the schema of the first n migrations
			// (those made before versioned migrations matched them).
			at := func(t *testing.T, n int) *store.DB {
				var stmts []string
				for _, m := range ms[:n] {
					stmts = append(stmts, m.Stmts...)
				}
				db := fresh(t, dia)
				for _, s := range stmts {
					if _, err := db.SQL.ExecContext(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				return db
			}
			t.Run("first", func(t *testing.T) {
				db := at(t, 1)
				s := fillShop(t, db)
				applied, err := db.Upgrade(ctx)
				if err != nil || len(applied) != len(ms)-1 {
					t.Fatalf("applied %v, %v; want it adopted at the first and the rest applied", applied, err)
				}
				checkShop(t, db, s)
			})
			t.Run("retention", func(t *testing.T) { // main between the retention indexes and the hold cap
				db := at(t, 2)
				if applied, err := db.Upgrade(ctx); err != nil || len(applied) != len(ms)-2 || applied[0].Name != "api_key_hold_cap" {
					t.Fatalf("applied %v, %v; want the hold cap and what came after", applied, err)
				}
			})
			t.Run("unknown", func(t *testing.T) {
				db := legacy(t, `ALTER TABLE appointments DROP COLUMN reminded_at`)
				_, err := db.Upgrade(ctx)
				if err == nil {
					t.Fatal("a database matching no migration was adopted")
				}
				t.Log(err)
				if st, err := db.CheckSchema(ctx); err != nil || !st.Legacy {
					t.Errorf("after the refusal: %+v, %v; want it unchanged", st, err)
				}
			})
		})
	}
}

// Databases that barberd at commit acdd900 made (its automatic migration,
// the schema of the first migration) and seeded with the demo account,
// restored from their dumps, are adopted at the first migration and
// upgraded: every row stays, and the schema is then the one a new database
// gets.
func TestAdoptOldBinaryDatabase(t *testing.T) {
	for _, dia := range storetest.Dialects {
		t.Run(dia, func(t *testing.T) {
			ctx := context.Background()
			url := storetest.URL(t, dia)
			dump, err := os.ReadFile("testdata/automigrated-acdd900." + map[string]string{dialect.SQLite: "sqlite", dialect.Postgres: "postgres"}[dia] + ".sql")
			if err != nil {
				t.Fatal(err)
			}
			// A plain connection: the dump sets its own session (PostgreSQL's
			// search_path) and inserts tables in name order (SQLite's foreign
			// keys off).
			driver, dsn := "postgres", storetest.LibPQURL(t, url)
			if dia == dialect.SQLite {
				driver, dsn = "sqlite", "file:"+strings.TrimPrefix(url, "sqlite:")
			}
			raw, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			_, err = raw.ExecContext(ctx, string(dump))
			raw.Close()
			if err != nil {
				t.Fatalf("restoring the dump: %v", err)
			}
			db, err := store.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			counts := func() (out [5]int) {
				for i, table := range []string{"accounts", "api_keys", "units", "barbers", "working_hours"} {
					if err := db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&out[i]); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			before := counts()
			applied, err := db.Upgrade(ctx)
			ms := migrations(t, dia)
			if err != nil || len(applied) != len(ms)-1 {
				t.Fatalf("applied %v, %v; want it adopted at the first migration and the rest applied", applied, err)
			}
			if after := counts(); after != before || before[0] != 1 {
				t.Errorf("rows of accounts, keys, units, barbers, hours: %v before, %v after", before, after)
			}
			ref := fresh(t, dia)
			if err := ref.CreateReference(ctx); err != nil {
				t.Fatal(err)
			}
			if diff, err := db.SchemaDifference(ctx, ref); err != nil || diff != "" {
				t.Errorf("the upgraded schema differs from a new database's: %s %v", diff, err)
			}
		})
	}
}
