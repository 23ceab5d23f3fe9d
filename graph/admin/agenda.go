package admin

import (
	"context"
	"time"

	"entgo.io/contrib/entgql"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/hold"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/paging"
	"barberd/graph/slots"
)

// Agenda is one unit's appointments of one local day, by start time, as a
// Relay connection; where narrows it further (barber, status, customer...).
// Edges the query selects are loaded eagerly, a query per edge for the
// whole page (agendaPage). Errors: validation_failed, unit_not_found.
func (a *Admin) Agenda(ctx context.Context, unitID, date string, after *entgql.Cursor[string], first *int, before *entgql.Cursor[string], last *int, where *ent.AppointmentWhereInput) (*ent.AppointmentConnection, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	var p domain.Problems
	paging.CheckPage(&p, first, last)
	day, err := slots.ParseDate(date)
	if err != nil {
		p.Add("date", "must be a day in the form YYYY-MM-DD")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	first = paging.DefaultFirst(first, last)
	u, err := a.agendaUnit(ctx, v, unitID)
	if err != nil {
		return nil, err
	}
	loc, err := catalog.MustZone(u.Timezone)
	if err != nil {
		return nil, err
	}
	// The local day may be 23 or 25 hours long: its bounds are two midnights.
	from := time.Date(day.Year, day.Month, day.Day, 0, 0, 0, 0, loc)
	to := time.Date(day.Year, day.Month, day.Day+1, 0, 0, 0, 0, loc)
	q := a.db.Appointment.Query().
		Where(appointment.UnitID(u.ID), appointment.StartsAtGTE(from.UTC()), appointment.StartsAtLT(to.UTC()))
	byStart := ent.WithAppointmentOrder(&ent.AppointmentOrder{Direction: entgql.OrderDirectionAsc, Field: ent.AppointmentOrderFieldStartsAt})
	if after != nil || before != nil || last != nil || *first <= 0 {
		return q.Paginate(ctx, after, first, before, last, byStart, ent.WithAppointmentFilter(where.Filter))
	}
	return agendaPage(ctx, q, u, *first, byStart, where)
}

// unitKey names a unit of an account.
type unitKey struct{ account, unit string }

// unitEntry is a unit as read under an account's config version.
type unitEntry struct {
	config int64
	unit   *ent.Unit
}

// agendaUnit returns the unit of an agenda, active or not, from the cache
// while the viewer's config version is the one it was read under: a
// dashboard asks for the same unit's agenda again and again. The unit is
// shared; nothing may change it. Errors: unit_not_found.
func (a *Admin) agendaUnit(ctx context.Context, v *domain.Viewer, id string) (*ent.Unit, error) {
	k := unitKey{v.AccountID, id}
	e, ok := a.units.Get(k)
	hit := ok && v.Versioned && e.config == v.ConfigVersion
	a.booking.Metrics().CacheLookup("unit", hit)
	if hit {
		return e.unit, nil
	}
	u, err := domain.FindUnit(ctx, a.db.Client, id)
	if err != nil {
		return nil, err
	}
	if v.Versioned {
		a.units.Put(k, &unitEntry{config: v.ConfigVersion, unit: u})
	}
	return u, nil
}

// ActiveHolds lists the first holds blocking a slot right now, by start
// time, optionally of one unit or barber. Errors: validation_failed.
func (a *Admin) ActiveHolds(ctx context.Context, unitID, barberID *string, first *int) ([]*ent.Hold, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	n, err := paging.ListPage(first)
	if err != nil {
		return nil, err
	}
	q, err := a.activeHoldsQuery(unitID, barberID).CollectFields(ctx)
	if err != nil {
		return nil, err
	}
	// CollectFields loads the selected edges for all holds at once, and
	// only the selected columns.
	hs, err := q.Order(hold.ByStartsAt(), hold.ByID()).Limit(n).All(ctx)
	return hs, err
}

// activeHoldsQuery queries the holds that block a slot now
// (effectiveStatus(h, now) == active, in SQL), of a unit or barber.
func (a *Admin) activeHoldsQuery(unitID, barberID *string) *ent.HoldQuery {
	q := a.db.Hold.Query().Where(hold.StatusEQ(hold.StatusActive), hold.ExpiresAtGT(a.booking.Now()))
	if unitID != nil {
		q.Where(hold.UnitID(*unitID))
	}
	if barberID != nil {
		q.Where(hold.BarberID(*barberID))
	}
	return q
}

// ActiveHoldsConnection pages ActiveHolds. Errors: validation_failed.
func (a *Admin) ActiveHoldsConnection(ctx context.Context, unitID, barberID *string, first *int, after *ent.Cursor) (*ent.HoldConnection, error) {
	first, err := paging.AdminPage(ctx, first, nil)
	if err != nil {
		return nil, err
	}
	return a.activeHoldsQuery(unitID, barberID).Paginate(ctx, after, first, nil, nil,
		ent.WithHoldOrder(&ent.HoldOrder{Field: ent.HoldOrderFieldStartsAt, Direction: entgql.OrderDirectionAsc}))
}
