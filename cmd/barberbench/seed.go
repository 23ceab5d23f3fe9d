package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema"
	"barberd/ent/schema/pulid"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
)

// seedConfig is what "seed" builds.
type seedConfig struct {
	databaseURL    string
	units          int
	barbersPerUnit int
	appointments   int // past appointments (history)
	days           int // history spans this many days before today
	futureDays     int // confirmed appointments fill this many days after today
	futureFill     float64
	fullDays       int // today and the days after it, this many in all, have no free slot
	seed           uint64
}

// seedResult is the JSON line "seed" prints.
type seedResult struct {
	AccountID    string   `json:"account_id"`
	APIKey       string   `json:"api_key"`
	AdminAPIKey  string   `json:"admin_api_key"` // scope admin: run --webhook registers its receiver with it
	UnitIDs      []string `json:"unit_ids"`
	Barbers      int      `json:"barbers"`
	Customers    int      `json:"customers"`
	Appointments int      `json:"appointments"`        // history
	Future       int      `json:"future_appointments"` // confirmed, after today
	Reservations int      `json:"reservations"`
	Rows         int      `json:"rows"`
	Seconds      float64  `json:"seconds"`
	RowsPerSec   float64  `json:"rows_per_s"`
}

func seedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c seedConfig
	fs.StringVar(&c.databaseURL, "database-url", envOr("DATABASE_URL", store.DefaultURL), "database: postgres://... or sqlite:PATH (env DATABASE_URL)")
	fs.IntVar(&c.units, "units", 2, "units (shops), in a mix of time zones")
	fs.IntVar(&c.barbersPerUnit, "barbers-per-unit", 12, "active barbers per unit (plus one inactive)")
	fs.IntVar(&c.appointments, "appointments", 10000, "past appointments (history)")
	fs.IntVar(&c.days, "days", 365, "days of history before today")
	fs.IntVar(&c.futureDays, "future-days", 14, "days after today partly booked with confirmed appointments")
	fs.Float64Var(&c.futureFill, "future-fill", 0.35, "share of each future working day that is booked")
	fs.IntVar(&c.fullDays, "full-days", 0, "book every slot of today and the days after it, this many days in all (the next scenario: the first free time is this far ahead)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.units < 1 || c.barbersPerUnit < 1 || c.appointments < 0 || c.days < 1 || c.futureDays < 0 || c.fullDays < 0:
		return errors.New("--units, --barbers-per-unit and --days must be at least 1; --appointments, --future-days and --full-days not negative")
	case c.futureFill < 0 || c.futureFill > 1:
		return errors.New("--future-fill must be between 0 and 1")
	}
	res, err := seed(ctx, c, stderr)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

// Zones the units cycle through: with and without daylight saving, both
// hemispheres, and a half-hour offset.
var seedZones = []struct{ zone, city, currency, phone string }{
	{"America/Sao_Paulo", "São Paulo", "BRL", "+5511"},
	{"Europe/Lisbon", "Lisboa", "EUR", "+35121"},
	{"America/New_York", "New York", "USD", "+1212"},
	{"Europe/Berlin", "Berlin", "EUR", "+4930"},
	{"Australia/Sydney", "Sydney", "AUD", "+6102"},
	{"Asia/Kolkata", "Mumbai", "INR", "+9122"},
	{"America/Los_Angeles", "Los Angeles", "USD", "+1213"},
	{"Europe/London", "London", "GBP", "+4420"},
}

type seedService struct {
	name           string
	minutes, buf   int
	price          int64
	active, online bool
	weight         int // share of history bookings
}

// Every unit offers the same menu: four bookable services (one with a
// cleanup buffer), one inactive and one not bookable online.
var seedServices = []seedService{
	{"Haircut", 30, 0, 2500, true, true, 50},
	{"Beard trim", 45, 0, 1800, true, true, 20},
	{"Haircut and beard", 60, 0, 3800, true, true, 20},
	{"Kids cut", 20, 5, 1500, true, true, 10},
	{"Hot towel shave", 40, 0, 2200, false, true, 0},
	{"Wedding package", 120, 0, 12000, true, false, 0},
}

// shift is a working day in wall-clock minutes.
type shift struct {
	open, close int
	breaks      [][2]int
}

// Barbers work Monday to Saturday on one of three patterns.
var seedWeeks = [][7]*shift{
	weekOf(shift{9 * 60, 19 * 60, [][2]int{{12 * 60, 13 * 60}}}, shift{9 * 60, 14 * 60, nil}),
	weekOf(shift{10 * 60, 20 * 60, [][2]int{{14 * 60, 15 * 60}}}, shift{9 * 60, 15 * 60, nil}),
	weekOf(shift{8 * 60, 17 * 60, [][2]int{{12 * 60, 12*60 + 30}}}, shift{8 * 60, 13 * 60, nil}),
}

func weekOf(weekday, saturday shift) [7]*shift {
	var w [7]*shift
	for d := time.Monday; d <= time.Friday; d++ {
		w[d] = &weekday
	}
	w[time.Saturday] = &saturday
	return w
}

// seedSlotStep is every unit's slot step, in minutes.
const seedSlotStep = 15

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

var firstNames = []string{"Ana", "Bruno", "Carla", "Diego", "Elena", "Fábio", "Greta", "Hugo", "Inês", "João", "Kai", "Lia", "Marco", "Nina", "Otto", "Paula", "Rui", "Sofia", "Tomás", "Vera"}
var lastNames = []string{"Costa", "Silva", "Souza", "Lima", "Müller", "Smith", "Kumar", "Tanaka", "Rossi", "García", "Brown", "Ferreira", "Santos", "Oliveira", "Jones"}

type seedBarber struct {
	id, unitID string
	week       [7]*shift
	services   []int // indexes into unit services
	offFrom    time.Time
	offTo      time.Time // a week of holiday in the past
	futureOff  time.Time // a day off in the future (zero: none)
}

type seedUnit struct {
	id       string
	loc      *time.Location
	services []string // ids, in seedServices order
	barbers  []*seedBarber
}

// seeder holds the state of one seed run.
type seeder struct {
	c         seedConfig
	db        *store.DB
	tx        *sql.Tx
	rng       *rand.Rand
	now       time.Time
	accountID string
	keyID     string
	units     []*seedUnit
	customers []seedCustomer
	rows      int
	res       seedResult
	log       io.Writer
}

// seed migrates the database and bulk-inserts the dataset.
func seed(ctx context.Context, c seedConfig, log io.Writer) (*seedResult, error) {
	db, err := store.Open(c.databaseURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	s := &seeder{c: c, db: db, rng: rand.New(rand.NewPCG(c.seed, 0x62617262)), now: schema.Now(), log: log}
	// The account and key come first, outside the bulk transaction: the key
	// is made by barberd's own code, so its hash is what barberd checks.
	acc, err := db.Account.Create().SetName("Barberbench Chain").Save(tenant.System(ctx))
	if err != nil {
		return nil, fmt.Errorf("account: %w", err)
	}
	s.accountID = acc.ID
	key, k, err := graph.New(graph.Settings{DB: db}).CreateAPIKey(ctx, s.accountID, "barberbench chatbot", domain.BookingScopes)
	if err != nil {
		return nil, fmt.Errorf("api key: %w", err)
	}
	s.keyID = k.ID
	admin, _, err := graph.New(graph.Settings{DB: db}).CreateAPIKey(ctx, s.accountID, "barberbench admin", []string{domain.ScopeAdmin})
	if err != nil {
		return nil, fmt.Errorf("admin key: %w", err)
	}
	s.res = seedResult{AccountID: s.accountID, APIKey: key, AdminAPIKey: admin}

	if s.tx, err = db.SQL.BeginTx(ctx, nil); err != nil {
		return nil, err
	}
	defer s.tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if db.Dialect == dialect.Postgres {
		// The generated rows reference only rows written before them; skipping
		// the per-row foreign key triggers makes COPY several times faster.
		// Needs a superuser; without one the checks simply run.
		if _, err := s.tx.ExecContext(ctx, "SAVEPOINT fk"); err != nil {
			return nil, err
		}
		if _, err := s.tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			if _, err := s.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT fk"); err != nil {
				return nil, err
			}
		}
	}
	steps := []func(context.Context) error{s.catalog, s.people, s.appointments}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.tx.Commit(); err != nil {
		return nil, err
	}
	if db.Dialect == dialect.Postgres {
		// Production tables have planner statistics; freshly copied ones do
		// not until autovacuum gets to them.
		if _, err := db.SQL.ExecContext(ctx, "ANALYZE"); err != nil {
			return nil, fmt.Errorf("analyze: %w", err)
		}
	}
	secs := time.Since(start).Seconds()
	s.res.Rows, s.res.Seconds = s.rows, secs
	s.res.RowsPerSec = float64(s.rows) / secs
	return &s.res, nil
}

func (s *seeder) writer(ctx context.Context, table string, cols ...string) (*bulkWriter, error) {
	return newBulkWriter(ctx, s.tx, s.db.Dialect, table, cols...)
}

func (s *seeder) done(w *bulkWriter) error {
	if err := w.close(); err != nil {
		return err
	}
	s.rows += w.rows
	if w.rows >= 10000 {
		d := time.Since(w.started)
		fmt.Fprintf(s.log, "barberbench seed: %s: %d rows in %.1fs (%.0f rows/s)\n", w.table, w.rows, d.Seconds(), float64(w.rows)/d.Seconds())
	}
	return nil
}

// catalog writes the units, their services and the links between them.
func (s *seeder) catalog(ctx context.Context) error {
	units, err := s.writer(ctx, "units", "id", "created_at", "updated_at", "name", "timezone", "address", "phone",
		"active", "slot_step_minutes", "min_lead_minutes", "horizon_days", "account_id")
	if err != nil {
		return err
	}
	for i := range s.c.units {
		z := seedZones[i%len(seedZones)]
		loc, err := time.LoadLocation(z.zone)
		if err != nil {
			return err
		}
		u := &seedUnit{id: pulid.New("unt"), loc: loc}
		s.units = append(s.units, u)
		s.res.UnitIDs = append(s.res.UnitIDs, u.id)
		err = units.add(u.id, s.now, s.now, fmt.Sprintf("Barberbench %s #%d", z.city, i+1), z.zone,
			fmt.Sprintf("Main street %d, %s", 10+i, z.city), fmt.Sprintf("%s%07d", z.phone, 1000000+i),
			true, seedSlotStep, 60, 365, s.accountID)
		if err != nil {
			return err
		}
	}
	if err := s.done(units); err != nil {
		return err
	}
	services, err := s.writer(ctx, "services", "id", "created_at", "updated_at", "name", "description",
		"duration_minutes", "buffer_minutes", "price_amount", "price_currency", "active", "bookable_online", "account_id")
	if err != nil {
		return err
	}
	for i, u := range s.units {
		z := seedZones[i%len(seedZones)]
		for _, sv := range seedServices {
			id := pulid.New("svc")
			u.services = append(u.services, id)
			err := services.add(id, s.now, s.now, sv.name, sv.name+" at "+z.city+".", sv.minutes, sv.buf,
				sv.price, z.currency, sv.active, sv.online, s.accountID)
			if err != nil {
				return err
			}
		}
	}
	if err := s.done(services); err != nil {
		return err
	}
	links, err := s.writer(ctx, "unit_services", "unit_id", "service_id")
	if err != nil {
		return err
	}
	for _, u := range s.units {
		for _, id := range u.services {
			if err := links.add(u.id, id); err != nil {
				return err
			}
		}
	}
	return s.done(links)
}

// localDay returns midnight of the day `days` after today in loc.
func (s *seeder) localDay(loc *time.Location, days int) time.Time {
	t := s.now.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day()+days, 0, 0, 0, 0, loc)
}

// people writes the barbers with their hours, services and time off, and
// the customers.
func (s *seeder) people(ctx context.Context) error {
	barbers, err := s.writer(ctx, "barbers", "id", "created_at", "updated_at", "name", "active", "account_id")
	if err != nil {
		return err
	}
	var links [][2]string
	var skills [][2]string
	n := 0
	for _, u := range s.units {
		for j := range s.c.barbersPerUnit + 1 {
			id := pulid.New("brb")
			name := fmt.Sprintf("%s %s", firstNames[n%len(firstNames)], lastNames[(n/len(firstNames)+n)%len(lastNames)])
			n++
			active := j < s.c.barbersPerUnit
			if err := barbers.add(id, s.now, s.now, name, active, s.accountID); err != nil {
				return err
			}
			links = append(links, [2]string{u.id, id})
			b := &seedBarber{id: id, unitID: u.id, week: seedWeeks[j%len(seedWeeks)]}
			for k, sv := range seedServices {
				// Some barbers do not do the long combined service or kids.
				if (k == 2 && j%5 == 4) || (k == 3 && j%7 == 3) {
					continue
				}
				skills = append(skills, [2]string{id, u.services[k]})
				if sv.active && sv.online {
					b.services = append(b.services, k)
				}
			}
			if !active {
				continue
			}
			u.barbers = append(u.barbers, b)
			holiday := 8 + (j*37+len(s.units)*11)%max(1, s.c.days-8)
			b.offFrom = s.localDay(u.loc, -holiday)
			b.offTo = s.localDay(u.loc, -holiday+7)
			if j%4 == 1 && s.c.futureDays > 0 {
				b.futureOff = s.localDay(u.loc, 1+(j/4)%s.c.futureDays)
			}
		}
	}
	s.res.Barbers = n
	if err := s.done(barbers); err != nil {
		return err
	}
	// One COPY at a time per connection: links are written after the barbers.
	unitBarbers, err := s.writer(ctx, "unit_barbers", "unit_id", "barber_id")
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := unitBarbers.add(l[0], l[1]); err != nil {
			return err
		}
	}
	if err := s.done(unitBarbers); err != nil {
		return err
	}
	barberServices, err := s.writer(ctx, "barber_services", "barber_id", "service_id")
	if err != nil {
		return err
	}
	for _, l := range skills {
		if err := barberServices.add(l[0], l[1]); err != nil {
			return err
		}
	}
	if err := s.done(barberServices); err != nil {
		return err
	}
	if err := s.hours(ctx); err != nil {
		return err
	}
	return s.customersRows(ctx)
}

func (s *seeder) hours(ctx context.Context) error {
	hours, err := s.writer(ctx, "working_hours", "id", "created_at", "updated_at", "weekday", "opens_at", "closes_at",
		"breaks", "barber_id", "account_id", "unit_id")
	if err != nil {
		return err
	}
	for _, u := range s.units {
		for _, b := range u.barbers {
			for wd, sh := range b.week {
				if sh == nil {
					continue
				}
				breaks := []string{}
				for _, br := range sh.breaks {
					breaks = append(breaks, clock(br[0])+"-"+clock(br[1]))
				}
				js, _ := json.Marshal(breaks)
				if err := hours.add(pulid.New("whr"), s.now, s.now, wd, clock(sh.open), clock(sh.close), string(js),
					b.id, s.accountID, u.id); err != nil {
					return err
				}
			}
		}
	}
	if err := s.done(hours); err != nil {
		return err
	}
	off, err := s.writer(ctx, "time_offs", "id", "created_at", "updated_at", "starts_at", "ends_at", "reason", "barber_id", "account_id")
	if err != nil {
		return err
	}
	for _, u := range s.units {
		for _, b := range u.barbers {
			if err := off.add(pulid.New("tof"), s.now, s.now, b.offFrom.UTC(), b.offTo.UTC(), "Holiday", b.id, s.accountID); err != nil {
				return err
			}
			if !b.futureOff.IsZero() {
				if err := off.add(pulid.New("tof"), s.now, s.now, b.futureOff.UTC(), b.futureOff.AddDate(0, 0, 1).UTC(),
					"Training day", b.id, s.accountID); err != nil {
					return err
				}
			}
		}
	}
	return s.done(off)
}

func (s *seeder) customersRows(ctx context.Context) error {
	n := min(max(s.c.appointments/8, 200), 200000)
	w, err := s.writer(ctx, "customers", "id", "created_at", "updated_at", "name", "phone", "email", "account_id")
	if err != nil {
		return err
	}
	s.customers = make([]seedCustomer, n)
	for i := range n {
		c := seedCustomer{id: pulid.New("cli"), phone: fmt.Sprintf("+4915%09d", i),
			name: firstNames[s.rng.IntN(len(firstNames))] + " " + lastNames[s.rng.IntN(len(lastNames))]}
		if i%2 == 0 {
			c.email = fmt.Sprintf("client%d@example.com", i)
		}
		s.customers[i] = c
		if err := w.add(c.id, s.now, s.now, c.name, c.phone, c.email, s.accountID); err != nil {
			return err
		}
	}
	s.res.Customers = n
	return s.done(w)
}
