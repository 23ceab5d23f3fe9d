package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/appointment"
	"barberd/ent/reservation"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/store"
	"barberd/graph/storetest"
	"barberd/rest/view"
)

// A database from before appointments recorded their client migrates to the
// new schema with every appointment showing what it showed before (its
// customer record's name, phone and e-mail), and later changes to the record
// no longer reach it. The result is the schema a new database gets, with
// the rows that refer to the appointments and the triggers intact.
func TestMigrateRecordsClients(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := tenant.System(context.Background())
		acc := db.Account.Create().SetName("Chain").SaveX(ctx)
		u := db.Unit.Create().SetAccountID(acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(ctx)
		b := db.Barber.Create().SetAccountID(acc.ID).SetName("João").SaveX(ctx)
		s := db.Service.Create().SetAccountID(acc.ID).SetName("Cut").SetDurationMinutes(30).
			SetPriceAmount(1000).SetPriceCurrency("EUR").SaveX(ctx)
		k := db.APIKey.Create().SetAccountID(acc.ID).SetName("bot").SetPrefix("p").SetSecretHash("h").
			SetScopes(graph.BookingScopes).SaveX(ctx)
		ana := db.Customer.Create().SetAccountID(acc.ID).SetName("Ana Costa").SetPhone("+351912345678").
			SetEmail("ana@example.com").SaveX(ctx)
		rui := db.Customer.Create().SetAccountID(acc.ID).SetName("Rui").SetPhone("+351912000000").SaveX(ctx)
		triggers := countTriggers(t, db)

		// The old schema: no client columns (nor the index of the phone,
		// which SQLite would not drop with its column), rows written as the
		// old code did.
		if _, err := db.SQL.ExecContext(ctx, `DROP INDEX appointment_account_id_client_phone_starts_at`); err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"client_name", "client_phone", "client_email"} {
			if _, err := db.SQL.ExecContext(ctx, `ALTER TABLE appointments DROP COLUMN `+col); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
		ids := map[string]string{ana.ID: "apt_01jnmigrateana0000000000", rui.ID: "apt_01jnmigraterui0000000000"}
		for i, c := range []string{ana.ID, rui.ID} {
			at := start.Add(time.Duration(i) * time.Hour)
			_, err := db.SQL.ExecContext(ctx, `INSERT INTO appointments (id, created_at, updated_at, status, starts_at, ends_at,
source, version, account_id, unit_id, service_id, barber_id, customer_id, api_key_id)
VALUES ($1, $2, $2, 'confirmed', $3, $4, 'api', 1, $5, $6, $7, $8, $9, $10)`,
				ids[c], start, at, at.Add(30*time.Minute), acc.ID, u.ID, s.ID, b.ID, c, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).
				SetAppointmentID(ids[c]).ExecX(ctx)
		}

		for range 2 { // the second run finds nothing to do
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// Later bookings with Ana's phone rename her record.
		db.Customer.UpdateOne(ana).SetName("Someone Else").SetEmail("else@example.com").ExecX(ctx)

		view := func(id string) view.Client {
			t.Helper()
			a := db.Appointment.Query().Where(appointment.ID(id)).WithUnit().WithService().WithBarber().OnlyX(ctx)
			v, err := view.AppointmentOf(a)
			if err != nil {
				t.Fatal(err)
			}
			return v.Client
		}
		if c := view(ids[ana.ID]); c.ID != ana.ID || c.Name != "Ana Costa" || c.Phone != "+351912345678" ||
			c.Email == nil || *c.Email != "ana@example.com" {
			t.Errorf("Ana's appointment shows %+v", c)
		}
		if c := view(ids[rui.ID]); c.ID != rui.ID || c.Name != "Rui" || c.Phone != "+351912000000" || c.Email != nil {
			t.Errorf("Rui's appointment shows %+v", c)
		}
		if n := db.Reservation.Query().Where(reservation.AppointmentIDNotNil()).CountX(ctx); n != 2 {
			t.Errorf("%d reservations still name their appointment, want 2", n)
		}
		if n := countTriggers(t, db); n != triggers {
			t.Errorf("%d triggers after the migration, want %d", n, triggers)
		}
		if got, want := clientColumns(t, db), clientColumns(t, storetest.Open(t, db.Dialect)); got != want {
			t.Errorf("client columns after the migration:\n%s\nin a new database:\n%s", got, want)
		}
		var plan strings.Builder
		if err := db.Schema.WriteTo(ctx, &plan); err != nil {
			t.Fatal(err)
		}
		if p := strings.TrimSpace(plan.String()); p != "" {
			t.Errorf("ent still plans changes after the migration:\n%s", p)
		}
	})
}

// clientColumns describes the appointments' client columns: type,
// nullability and default.
func clientColumns(t *testing.T, db *store.DB) string {
	t.Helper()
	q := `SELECT name, type, "notnull", COALESCE(dflt_value, '') FROM pragma_table_info('appointments')
WHERE name LIKE 'client%' ORDER BY name`
	if db.Dialect == dialect.Postgres {
		q = `SELECT column_name, data_type || COALESCE('(' || character_maximum_length || ')', ''), is_nullable, COALESCE(column_default, '')
FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'appointments' AND column_name LIKE 'client%'
ORDER BY column_name`
	}
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out strings.Builder
	for rows.Next() {
		var name, typ, null, def string
		if err := rows.Scan(&name, &typ, &null, &def); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s %s %s %q\n", name, typ, null, def)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func countTriggers(t *testing.T, db *store.DB) (n int) {
	t.Helper()
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'`
	if db.Dialect == dialect.Postgres {
		q = `SELECT COUNT(*) FROM pg_trigger WHERE NOT tgisinternal`
	}
	if err := db.SQL.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
