package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"

	entmigrate "barberd/ent/migrate"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
)

// An SQLite plan that rebuilds a table that other tables' triggers name
// (the reservations' triggers name barbers) drops those triggers before
// it and makes them again after it: SQLite refuses to rename the rebuilt
// table while a trigger names the table it replaces. The migration keeps
// the barbers' rows, and the triggers made again work.
func TestGeneratorRebuildsATableTriggersName(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join("..", "..", "graph", "store", "migrations", "sqlite")
	dir := t.TempDir()
	names, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Before the new migration: a barber with a booking.
	tmp := t.TempDir()
	db, err := store.Open("sqlite:" + filepath.Join(tmp, "shop.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	apply := func() {
		t.Helper()
		ms, err := store.ReadMigrations(os.DirFS(dir), dialect.SQLite)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Apply(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	sys := tenant.System(ctx)
	acc := db.Account.Create().SetName("Chain").SaveX(sys)
	b := db.Barber.Create().SetAccountID(acc.ID).SetName("João").SaveX(sys)
	at := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at).SetEndsAt(at.Add(30 * time.Minute)).ExecX(sys)
	before := db.Barber.GetX(sys, b.ID).BookingsVersion

	// The change: barbers.active defaults to false, which SQLite cannot
	// alter in place.
	barbers := *entmigrate.BarbersTable
	barbers.Columns = slices.Clone(barbers.Columns)
	i := slices.IndexFunc(barbers.Columns, func(c *schema.Column) bool { return c.Name == "active" })
	active := *barbers.Columns[i]
	active.Default = false
	barbers.Columns[i] = &active
	tables := slices.Clone(entmigrate.Tables)
	tables[slices.Index(tables, entmigrate.BarbersTable)] = &barbers

	var out bytes.Buffer
	g := &generator{dia: dialect.SQLite, dir: dir, out: &out, tables: tables}
	if err := g.run(ctx, "barbers_active_false", "20991231000000"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "20991231000000_barbers_active_false.sql"))
	if err != nil {
		t.Fatal(err)
	}
	file := string(data)
	rename := strings.Index(file, "ALTER TABLE `new_barbers` RENAME TO `barbers`")
	drop := strings.Index(file, "DROP TRIGGER IF EXISTS `reservations_bookings_version_insert`")
	remake := strings.Index(file, "CREATE TRIGGER IF NOT EXISTS reservations_bookings_version_insert")
	if rename < 0 || drop < 0 || remake < 0 || drop > rename || remake < rename {
		t.Fatalf("want the trigger dropped before the rebuild's rename and made again after it:\n%s", file)
	}

	apply()
	if got := db.Barber.GetX(sys, b.ID); got.Name != "João" || got.BookingsVersion != before {
		t.Fatalf("after the rebuild: %+v, want the barber's row as it was (bookings version %d)", got, before)
	}
	db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at.Add(time.Hour)).SetEndsAt(at.Add(90 * time.Minute)).ExecX(sys)
	if got := db.Barber.GetX(sys, b.ID).BookingsVersion; got != before+1 {
		t.Errorf("bookings version after a new reservation: %d, want %d (the reservations' trigger made again)", got, before+1)
	}
	if err := db.Reservation.Create().SetAccountID(acc.ID).SetBarberID(b.ID).SetStartsAt(at).SetEndsAt(at.Add(time.Hour)).Exec(sys); err == nil {
		t.Error("an overlapping reservation was accepted after the rebuild")
	}
	var def string
	if err := db.SQL.QueryRowContext(ctx, `SELECT dflt_value FROM pragma_table_info('barbers') WHERE name = 'active'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if def != "false" {
		t.Errorf("barbers.active's default after the migration: %q, want false", def)
	}
}
