package admin

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"barberd/ent"
	"barberd/ent/service"
	"barberd/ent/unit"
	"barberd/graph/domain"
	"barberd/graph/model"
)

// Policy bounds of a unit.
const (
	minSlotStep, maxSlotStep = 5, 240
	maxMinLeadMinutes        = 30 * 24 * 60
	maxServiceMinutes        = 24 * 60
	maxBufferMinutes         = 240
)

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

func checkName(p *domain.Problems, field string, v *string) {
	if v != nil {
		domain.CheckLength(p, field, *v, 1, 200)
	}
}

func checkRange(p *domain.Problems, field string, v *int, lo, hi int) {
	if v != nil && (*v < lo || *v > hi) {
		p.Add(field, "must be between %d and %d", lo, hi)
	}
}

// unitFields are a unit's settable fields; nil means not given.
type unitFields struct {
	name, timezone, address, phone *string
	active                         *bool
	step, lead, horizon            *int
}

func (f unitFields) check() domain.Problems {
	var p domain.Problems
	checkName(&p, "name", f.name)
	if f.timezone != nil {
		if _, err := domain.Zone(*f.timezone); err != nil {
			p.Add("timezone", "must be an IANA time zone name such as Europe/Lisbon")
		}
	}
	if f.address != nil && utf8.RuneCountInString(*f.address) > 500 {
		p.Add("address", "must be at most 500 characters")
	}
	if f.phone != nil && *f.phone != "" && !domain.E164.MatchString(*f.phone) {
		p.Add("phone", "must be in E.164 form: + then 8 to 15 digits, e.g. +351213000000")
	}
	if f.step != nil && (*f.step < minSlotStep || *f.step > maxSlotStep || *f.step%5 != 0) {
		p.Add("slotStepMinutes", "must be a multiple of 5 between %d and %d", minSlotStep, maxSlotStep)
	}
	checkRange(&p, "minLeadMinutes", f.lead, 0, maxMinLeadMinutes)
	checkRange(&p, "horizonDays", f.horizon, 0, domain.MaxHorizonDays)
	return p
}

func (f unitFields) apply(m *ent.UnitMutation) {
	if f.name != nil {
		m.SetName(strings.TrimSpace(*f.name))
	}
	if f.timezone != nil {
		m.SetTimezone(*f.timezone)
	}
	if f.address != nil {
		m.SetAddress(strings.TrimSpace(*f.address))
	}
	if f.phone != nil {
		m.SetPhone(*f.phone)
	}
	if f.active != nil {
		m.SetActive(*f.active)
	}
	if f.step != nil {
		m.SetSlotStepMinutes(*f.step)
	}
	if f.lead != nil {
		m.SetMinLeadMinutes(*f.lead)
	}
	if f.horizon != nil {
		m.SetHorizonDays(*f.horizon)
	}
}

// CreateUnit adds a unit to the caller's account.
// Errors: validation_failed, catalog_full.
func (a *Admin) CreateUnit(ctx context.Context, in model.CreateUnitInput) (*ent.Unit, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	f := unitFields{name: &in.Name, timezone: &in.Timezone, address: in.Address, phone: in.Phone,
		step: in.SlotStepMinutes, lead: in.MinLeadMinutes, horizon: in.HorizonDays}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var u *ent.Unit
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		if err := a.checkCatalogRoom(ctx, tx, v.AccountID, "units", "updateUnit", tx.Unit.Query().Count); err != nil {
			return err
		}
		c := tx.Unit.Create().SetAccountID(v.AccountID)
		f.apply(c.Mutation())
		u, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return u.Unwrap(), nil
}

// UpdateUnit changes the given fields of a unit, active or not.
// Errors: validation_failed, unit_not_found.
func (a *Admin) UpdateUnit(ctx context.Context, id string, in model.UpdateUnitInput) (*ent.Unit, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	f := unitFields{name: in.Name, timezone: in.Timezone, address: in.Address, phone: in.Phone, active: in.Active,
		step: in.SlotStepMinutes, lead: in.MinLeadMinutes, horizon: in.HorizonDays}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var u *ent.Unit
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		old, err := domain.FindUnit(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		upd := tx.Unit.UpdateOne(old)
		f.apply(upd.Mutation())
		u, err = upd.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return u.Unwrap(), nil
}

// unitIDs checks that every id names a unit of the account (active or not)
// and returns them without repeats. Errors: unit_not_found.
func unitIDs(ctx context.Context, c *ent.Client, ids []string) ([]string, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	found, err := c.Unit.Query().Where(unit.IDIn(ids...)).IDs(ctx)
	return allFound(ids, found, err, domain.CodeUnitNotFound, "unit")
}

// serviceIDs checks that every id names a service of the account and
// returns them without repeats. Errors: service_not_found.
func serviceIDs(ctx context.Context, c *ent.Client, ids []string) ([]string, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	found, err := c.Service.Query().Where(service.IDIn(ids...)).IDs(ctx)
	return allFound(ids, found, err, domain.CodeServiceNotFound, "service")
}

// allFound returns ids when the tenant-filtered query found every one,
// else code naming the first missing.
func allFound(ids, found []string, err error, code, what string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return nil, domain.Errorf(code, "No %s %q.", what, id)
		}
	}
	return ids, nil
}

// serviceFields are a service's settable fields; nil means not given.
type serviceFields struct {
	name, description, currency *string
	duration, buffer            *int
	price                       *int
	active, online              *bool
	unitIDs                     []string // nil: not given
}

func (f serviceFields) check() domain.Problems {
	var p domain.Problems
	checkName(&p, "name", f.name)
	if f.description != nil && utf8.RuneCountInString(*f.description) > 2000 {
		p.Add("description", "must be at most 2000 characters")
	}
	checkRange(&p, "durationMinutes", f.duration, 1, maxServiceMinutes)
	checkRange(&p, "bufferMinutes", f.buffer, 0, maxBufferMinutes)
	if f.price != nil && *f.price < 0 {
		p.Add("priceAmount", "must not be negative")
	}
	if f.currency != nil && !currencyCode.MatchString(*f.currency) {
		p.Add("priceCurrency", "must be an ISO 4217 code of three capital letters, e.g. EUR")
	}
	return p
}

// apply sets the fields on m; units are those checked by unitIDs.
func (f serviceFields) apply(m *ent.ServiceMutation, units []string) {
	if f.name != nil {
		m.SetName(strings.TrimSpace(*f.name))
	}
	if f.description != nil {
		m.SetDescription(strings.TrimSpace(*f.description))
	}
	if f.duration != nil {
		m.SetDurationMinutes(*f.duration)
	}
	if f.buffer != nil {
		m.SetBufferMinutes(*f.buffer)
	}
	if f.price != nil {
		m.SetPriceAmount(int64(*f.price))
	}
	if f.currency != nil {
		m.SetPriceCurrency(*f.currency)
	}
	if f.active != nil {
		m.SetActive(*f.active)
	}
	if f.online != nil {
		m.SetBookableOnline(*f.online)
	}
	if f.unitIDs != nil {
		m.ClearUnits()
		m.AddUnitIDs(units...)
	}
}

// CreateService adds a service, offered at the given units.
// Errors: validation_failed, unit_not_found, catalog_full.
func (a *Admin) CreateService(ctx context.Context, in model.CreateServiceInput) (*ent.Service, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	f := serviceFields{name: &in.Name, description: in.Description, currency: &in.PriceCurrency,
		duration: &in.DurationMinutes, buffer: in.BufferMinutes, price: &in.PriceAmount,
		active: in.Active, online: in.BookableOnline, unitIDs: in.UnitIds}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var s *ent.Service
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		if err := a.checkCatalogRoom(ctx, tx, v.AccountID, "services", "updateService", tx.Service.Query().Count); err != nil {
			return err
		}
		ids, err := unitIDs(ctx, tx.Client(), f.unitIDs)
		if err != nil {
			return err
		}
		c := tx.Service.Create().SetAccountID(v.AccountID)
		f.apply(c.Mutation(), ids)
		s, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Unwrap(), nil
}

// UpdateService changes the given fields of a service; unitIds, when
// given, replaces the units offering it.
// Errors: validation_failed, service_not_found, unit_not_found.
func (a *Admin) UpdateService(ctx context.Context, id string, in model.UpdateServiceInput) (*ent.Service, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	f := serviceFields{name: in.Name, description: in.Description, currency: in.PriceCurrency,
		duration: in.DurationMinutes, buffer: in.BufferMinutes, price: in.PriceAmount,
		active: in.Active, online: in.BookableOnline, unitIDs: in.UnitIds}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var s *ent.Service
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		old, err := domain.FindService(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		var ids []string
		if f.unitIDs != nil {
			if ids, err = unitIDs(ctx, tx.Client(), f.unitIDs); err != nil {
				return err
			}
		}
		upd := tx.Service.UpdateOne(old)
		f.apply(upd.Mutation(), ids)
		s, err = upd.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Unwrap(), nil
}

// barberFields are a barber's settable fields; nil means not given.
type barberFields struct {
	name              *string
	active            *bool
	unitIDs, services []string // nil: not given
}

func (f barberFields) check() domain.Problems {
	var p domain.Problems
	checkName(&p, "name", f.name)
	return p
}

// apply sets the fields on m, with the unit and service ids that
// unitIDs and serviceIDs checked.
func (f barberFields) apply(ctx context.Context, c *ent.Client, m *ent.BarberMutation) error {
	if f.name != nil {
		m.SetName(strings.TrimSpace(*f.name))
	}
	if f.active != nil {
		m.SetActive(*f.active)
	}
	if f.unitIDs != nil {
		ids, err := unitIDs(ctx, c, f.unitIDs)
		if err != nil {
			return err
		}
		m.ClearUnits()
		m.AddUnitIDs(ids...)
	}
	if f.services != nil {
		ids, err := serviceIDs(ctx, c, f.services)
		if err != nil {
			return err
		}
		m.ClearServices()
		m.AddServiceIDs(ids...)
	}
	return nil
}

// CreateBarber adds a barber working at the given units and performing the
// given services.
// Errors: validation_failed, unit_not_found, service_not_found, catalog_full.
func (a *Admin) CreateBarber(ctx context.Context, in model.CreateBarberInput) (*ent.Barber, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	f := barberFields{name: &in.Name, active: in.Active, unitIDs: in.UnitIds, services: in.ServiceIds}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var b *ent.Barber
	err = a.booking.InTx(ctx, func(tx *ent.Tx) error {
		if err := a.checkCatalogRoom(ctx, tx, v.AccountID, "barbers", "updateBarber", tx.Barber.Query().Count); err != nil {
			return err
		}
		c := tx.Barber.Create().SetAccountID(v.AccountID)
		if err := f.apply(ctx, tx.Client(), c.Mutation()); err != nil {
			return err
		}
		b, err = c.Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b.Unwrap(), nil
}

// UpdateBarber changes the given fields of a barber; unitIds and
// serviceIds, when given, replace the sets.
// Errors: validation_failed, barber_not_found, unit_not_found, service_not_found.
func (a *Admin) UpdateBarber(ctx context.Context, id string, in model.UpdateBarberInput) (*ent.Barber, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	f := barberFields{name: in.Name, active: in.Active, unitIDs: in.UnitIds, services: in.ServiceIds}
	if err := f.check().Err(); err != nil {
		return nil, err
	}
	var b *ent.Barber
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		old, err := domain.FindBarber(ctx, tx.Client(), id)
		if err != nil {
			return err
		}
		upd := tx.Barber.UpdateOne(old)
		if err := f.apply(ctx, tx.Client(), upd.Mutation()); err != nil {
			return err
		}
		if b, err = upd.Save(ctx); err != nil || !b.Active || (f.unitIDs == nil && f.services == nil && (f.active == nil || old.Active)) {
			return err
		}
		// Assigned to units or services, or back at work: time the
		// waitlist may want.
		return a.booking.OpenedHorizon(ctx, tx, b.AccountID, b.ID)
	})
	if err != nil {
		return nil, err
	}
	return b.Unwrap(), nil
}

// Inactive is the Active of an update that deactivates.
func Inactive() *bool { f := false; return &f }
