// Package demo seeds the demo account: two barbershops, in São Paulo and
// Lisbon, with their services, barbers and weekly hours, and a booking key
// and an admin key. `barberd demo` and `barberd seed-demo` serve it, and the
// tests book against it.
package demo

import (
	"context"
	"fmt"
	"slices"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/schema/tenant"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
)

// AccountName names the account Seed creates.
const AccountName = "Demo Barbershop"

// Keys are the keys of a freshly seeded demo account.
type Keys struct {
	AccountID   string `json:"account_id"`
	APIKey      string `json:"api_key"`
	AdminAPIKey string `json:"admin_api_key"`
	IDs         IDs    `json:"-"` // its units, services and barbers
}

type service struct {
	name, description string
	minutes           int
	price             int64
	active, online    bool
}

type unit struct {
	name, timezone, address, phone, currency string
	services                                 []service
	// barbers maps a barber's name to the services (by index) they do not perform.
	barbers  []barber
	inactive string // an inactive barber
}

type barber struct {
	name    string
	doesNot []int
}

var units = []unit{
	{
		name: "Barbearia Paulista", timezone: "America/Sao_Paulo",
		address: "Avenida Paulista 1578, São Paulo - SP, 01310-200", phone: "+551132000000", currency: "BRL",
		services: []service{
			{"Corte de cabelo", "Corte clássico ou moderno, com lavagem.", 30, 6000, true, true},
			{"Barba completa", "Barba com toalha quente e navalha.", 45, 4500, true, true},
			{"Corte e barba", "Corte de cabelo e barba completa.", 60, 9500, true, true},
			{"Pigmentação", "Pigmentação de barba (temporariamente indisponível).", 40, 5000, false, true},
			{"Dia do noivo", "Pacote completo para noivos; agende por telefone.", 120, 30000, true, false},
		},
		barbers:  []barber{{"Rafael Souza", nil}, {"Bruno Lima", []int{1}}},
		inactive: "Carlos Mendes",
	},
	{
		name: "Barbearia Chiado", timezone: "Europe/Lisbon",
		address: "Rua Garrett 50, 1200-204 Lisboa", phone: "+351213000000", currency: "EUR",
		services: []service{
			{"Haircut", "Classic or modern cut, wash included.", 30, 2500, true, true},
			{"Beard trim", "Beard shaping with hot towel.", 45, 1800, true, true},
			{"Haircut and beard", "Haircut plus full beard service.", 60, 3800, true, true},
			{"Hot towel shave", "Traditional straight-razor shave (currently unavailable).", 40, 2200, false, true},
			{"Wedding package", "Full grooming for the big day; book by phone.", 120, 12000, true, false},
		},
		barbers:  []barber{{"João Silva", nil}, {"Miguel Costa", []int{2}}},
		inactive: "Pedro Santos",
	},
}

// week is every active demo barber's week: Monday to Friday 09:00-19:00
// with a break 12:00-13:00, Saturday 09:00-14:00, Sunday closed.
var week = map[int]struct {
	opens, closes string
	breaks        []string
}{
	1: {"09:00", "19:00", []string{"12:00-13:00"}},
	2: {"09:00", "19:00", []string{"12:00-13:00"}},
	3: {"09:00", "19:00", []string{"12:00-13:00"}},
	4: {"09:00", "19:00", []string{"12:00-13:00"}},
	5: {"09:00", "19:00", []string{"12:00-13:00"}},
	6: {"09:00", "14:00", nil},
}

// Seed creates a new, separate demo account with a key holding every
// booking scope and an admin key, and returns the keys.
func Seed(ctx context.Context, res *graph.Resolver) (*Keys, error) {
	tx, err := res.Settings().DB.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	acc, err := tx.Account.Create().SetName(AccountName).Save(tenant.System(ctx))
	if err == nil {
		err = seedUnits(tenant.WithAccount(ctx, acc.ID), tx.Client(), acc.ID)
	}
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	keys := &Keys{AccountID: acc.ID}
	if keys.IDs, err = IDsOf(ctx, res.Settings().DB, acc.ID); err != nil {
		return nil, err
	}
	if keys.APIKey, _, err = res.CreateAPIKey(ctx, acc.ID, "Demo chatbot", domain.BookingScopes); err != nil {
		return nil, err
	}
	if keys.AdminAPIKey, _, err = res.CreateAPIKey(ctx, acc.ID, "Demo dashboard", domain.AllScopes); err != nil {
		return nil, err
	}
	return keys, nil
}

// Account returns the id of the oldest demo account, or "" when the
// database has none.
func Account(ctx context.Context, db *store.DB) (string, error) {
	acc, err := db.Account.Query().Where(account.Name(AccountName)).
		Order(account.ByCreatedAt(), account.ByID()).First(tenant.System(ctx))
	if ent.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("demo account: %w", err)
	}
	return acc.ID, nil
}

func seedUnits(ctx context.Context, c *ent.Client, accountID string) error {
	for _, du := range units {
		u, err := c.Unit.Create().SetAccountID(accountID).SetName(du.name).SetTimezone(du.timezone).
			SetAddress(du.address).SetPhone(du.phone).
			SetSlotStepMinutes(15).SetMinLeadMinutes(60).SetHorizonDays(365).Save(ctx)
		if err != nil {
			return fmt.Errorf("demo unit: %w", err)
		}
		services := make([]*ent.Service, len(du.services))
		for i, ds := range du.services {
			services[i], err = c.Service.Create().SetAccountID(accountID).SetName(ds.name).
				SetDescription(ds.description).SetDurationMinutes(ds.minutes).
				SetPriceAmount(ds.price).SetPriceCurrency(du.currency).
				SetActive(ds.active).SetBookableOnline(ds.online).AddUnits(u).Save(ctx)
			if err != nil {
				return fmt.Errorf("demo service: %w", err)
			}
		}
		for _, br := range du.barbers {
			var performs []*ent.Service
			for i, s := range services {
				if !slices.Contains(br.doesNot, i) {
					performs = append(performs, s)
				}
			}
			b, err := c.Barber.Create().SetAccountID(accountID).SetName(br.name).
				AddUnits(u).AddServices(performs...).Save(ctx)
			if err != nil {
				return fmt.Errorf("demo barber: %w", err)
			}
			for weekday, h := range week {
				err := c.WorkingHours.Create().SetAccountID(accountID).SetBarberID(b.ID).SetUnitID(u.ID).
					SetWeekday(weekday).SetOpensAt(h.opens).SetClosesAt(h.closes).SetBreaks(h.breaks).Exec(ctx)
				if err != nil {
					return fmt.Errorf("demo hours: %w", err)
				}
			}
		}
		err = c.Barber.Create().SetAccountID(accountID).SetName(du.inactive).SetActive(false).
			AddUnits(u).AddServices(services...).Exec(ctx)
		if err != nil {
			return fmt.Errorf("demo barber: %w", err)
		}
	}
	return nil
}

// Large is a unit as large as the documented caps allow, for tests and
// benchmarks of the cost bounds: LargeBarbers barbers, open around the
// clock every day, at 5-minute slot steps (57,600 slots a day), with one
// 30-minute service.
type Large struct {
	UnitID, ServiceID string
	BarberIDs         []string
}

// LargeBarbers is how many barbers SeedLarge gives its unit.
const LargeBarbers = 200

// SeedLarge adds a Large unit to the account, written straight to the
// database as an admin would make it through GraphQL.
func SeedLarge(ctx context.Context, db *store.DB, accountID string) (*Large, error) {
	ctx = tenant.WithAccount(ctx, accountID)
	tx, err := db.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("large unit: %w", err)
	}
	l, err := seedLarge(ctx, tx.Client(), accountID)
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		return nil, fmt.Errorf("large unit: %w", err)
	}
	return l, nil
}

func seedLarge(ctx context.Context, c *ent.Client, accountID string) (*Large, error) {
	u, err := c.Unit.Create().SetAccountID(accountID).SetName("Barbearia 24 horas").SetTimezone("Europe/Lisbon").
		SetSlotStepMinutes(5).SetMinLeadMinutes(0).SetHorizonDays(365).Save(ctx)
	if err != nil {
		return nil, err
	}
	s, err := c.Service.Create().SetAccountID(accountID).SetName("Quick cut").SetDurationMinutes(30).
		SetPriceAmount(1000).SetPriceCurrency("EUR").AddUnits(u).Save(ctx)
	if err != nil {
		return nil, err
	}
	l := &Large{UnitID: u.ID, ServiceID: s.ID}
	for i := range LargeBarbers {
		b, err := c.Barber.Create().SetAccountID(accountID).SetName(fmt.Sprintf("Barber %03d", i+1)).
			AddUnits(u).AddServices(s).Save(ctx)
		if err != nil {
			return nil, err
		}
		hours := make([]*ent.WorkingHoursCreate, 7)
		for d := range hours {
			hours[d] = c.WorkingHours.Create().SetAccountID(accountID).SetBarberID(b.ID).SetUnitID(u.ID).
				SetWeekday(d).SetOpensAt("00:00").SetClosesAt("24:00")
		}
		if err := c.WorkingHours.CreateBulk(hours...).Exec(ctx); err != nil {
			return nil, err
		}
		l.BarberIDs = append(l.BarberIDs, b.ID)
	}
	return l, nil
}
