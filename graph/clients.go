package graph

import (
	"barberd/graph/catalog"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/predicate"
	"barberd/ent/unit"
	"barberd/graph/slots"
)

// A client's appointments (rest-v1.md, "A client's appointments"): a
// chatbot hears "I need to cancel my appointment" with no id in the
// conversation, and finds it by the phone it was booked with, or by its own
// reference. The phone is matched exactly: this is no search over
// customers.

// The page of appointmentsByClient.
const (
	ClientAppointmentsDefault = 20
	ClientAppointmentsMax     = 100
)

// ClientLookup is what appointmentsByClient asks for: exactly one of
// ClientPhone and ExternalReference, and the optional filters.
type ClientLookup struct {
	// ClientPhone matches the phone an appointment was booked with, in any
	// key's appointments of the account. A leading space stands for "+"
	// (an unencoded "+" in a query string).
	ClientPhone *string
	// ExternalReference finds the calling key's own appointment with it.
	ExternalReference *string
	// Status keeps only appointments in one of these; nil keeps all.
	Status []appointment.Status
	// From and To (YYYY-MM-DD, each in the appointment's unit's zone)
	// bound the day it starts, both inclusive; without either, only
	// appointments that have not ended yet are kept.
	From, To *string
	// Limit is the most returned: ClientAppointmentsDefault when nil.
	Limit *int
}

// appointmentsByClient returns the appointments a lookup finds, by start
// time then id, with their unit, service and barber.
// Errors: insufficient_scope, validation_failed.
func (r *Resolver) appointmentsByClient(ctx context.Context, l ClientLookup) ([]*ent.Appointment, error) {
	v, err := domain.Require(ctx, domain.ScopeAppointmentsRead)
	if err != nil {
		return nil, err
	}
	if err := CheckClientLookup(l).Err(); err != nil {
		return nil, err
	}
	q := r.cfg.DB.Appointment.Query()
	if l.ClientPhone != nil {
		q.Where(appointment.ClientPhone(domain.LookupPhone(*l.ClientPhone)))
	} else {
		q.Where(appointment.APIKeyID(v.KeyID), appointment.ExternalReference(*l.ExternalReference))
	}
	if l.Status != nil {
		q.Where(appointment.StatusIn(l.Status...))
	}
	if l.From == nil && l.To == nil {
		q.Where(appointment.EndsAtGT(r.now()))
	} else {
		days, err := r.startingOn(ctx, l.From, l.To)
		if err != nil || days == nil {
			return nil, err
		}
		q.Where(days)
	}
	limit := ClientAppointmentsDefault
	if l.Limit != nil {
		limit = *l.Limit
	}
	as, err := q.Order(appointment.ByStartsAt(), appointment.ByID()).Limit(limit).All(ctx)
	if err != nil {
		return nil, err
	}
	return as, r.loadEdges(ctx, r.cfg.DB.Client, as...)
}

// startingOn is the condition that an appointment starts on a day from
// from through to (either open when nil), each day taken in the zone of
// the appointment's unit, or nil when the account has no unit. Bounds per
// zone let the database filter exactly and apply the limit itself, at the
// price of reading the account's units first; one range wide enough for
// every zone would need reading past the limit to fill a page.
func (r *Resolver) startingOn(ctx context.Context, from, to *string) (predicate.Appointment, error) {
	zones, err := r.unitZones(ctx)
	if err != nil {
		return nil, err
	}
	byZone := map[string][]string{}
	for id, zone := range zones {
		byZone[zone] = append(byZone[zone], id)
	}
	var each []predicate.Appointment
	for _, zone := range slices.Sorted(maps.Keys(byZone)) {
		loc, err := catalog.MustZone(zone)
		if err != nil {
			return nil, err
		}
		// Instants are stored, and so compared, in UTC.
		in := []predicate.Appointment{appointment.UnitIDIn(byZone[zone]...)}
		if from != nil {
			in = append(in, appointment.StartsAtGTE(mustDate(*from).Start(loc).UTC()))
		}
		if to != nil {
			in = append(in, appointment.StartsAtLT(mustDate(*to).AddDays(1).Start(loc).UTC()))
		}
		each = append(each, appointment.And(in...))
	}
	if len(each) == 0 {
		return nil, nil
	}
	return appointment.Or(each...), nil
}

// mustDate parses a date the checks let through.
func mustDate(s string) slots.Date {
	d, _ := slots.ParseDate(s)
	return d
}

// unitZones are the time zones of an account's units, read once for one
// GraphQL root field (WithUnitZones), so that a list of appointments shows
// its local times with one query, not one per appointment.
type unitZones struct {
	mu    sync.Mutex
	zones map[string]string // unit id → IANA zone; nil until read, then never changed
}

type unitZonesKey struct{}

// WithUnitZones returns a context in which the time zones of the account's
// units are read at most once, when an appointment's local times
// (Appointment.startsAtLocal, endsAtLocal, timezone) or a lookup by dates
// first need them. The GraphQL handler gives one to each root field: a
// mutation that changes a unit's zone is seen by the fields after it.
func WithUnitZones(ctx context.Context) context.Context {
	return context.WithValue(ctx, unitZonesKey{}, &unitZones{})
}

// unitZones returns the account's unit zones by unit id: ctx's, when it
// has them (WithUnitZones), or else read now. The map is shared: never
// change it.
func (r *Resolver) unitZones(ctx context.Context) (map[string]string, error) {
	z, _ := ctx.Value(unitZonesKey{}).(*unitZones)
	if z == nil {
		return readUnitZones(ctx, r.cfg.DB.Client)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.zones == nil {
		zones, err := readUnitZones(ctx, r.cfg.DB.Client)
		if err != nil {
			return nil, err
		}
		z.zones = zones
	}
	return z.zones, nil
}

func readUnitZones(ctx context.Context, c *ent.Client) (map[string]string, error) {
	us, err := c.Unit.Query().Select(unit.FieldID, unit.FieldTimezone).All(ctx)
	if err != nil {
		return nil, err
	}
	zones := make(map[string]string, len(us))
	for _, u := range us {
		zones[u.ID] = u.Timezone
	}
	return zones, nil
}

// appointmentZone is the name of the time zone of an appointment's unit.
func (r *Resolver) appointmentZone(ctx context.Context, a *ent.Appointment) (string, error) {
	return r.unitZone(ctx, a.UnitID, a.Edges.Unit)
}

// appointmentLocal is instant t of an appointment as wall time in its
// unit's zone, YYYY-MM-DDTHH:MM:SS.
func (r *Resolver) appointmentLocal(ctx context.Context, a *ent.Appointment, t time.Time) (string, error) {
	return r.localAt(ctx, a.UnitID, a.Edges.Unit, t)
}

// entryZone is the name of the time zone of a waitlist entry's unit.
func (r *Resolver) entryZone(ctx context.Context, e *ent.WaitlistEntry) (string, error) {
	return r.unitZone(ctx, e.UnitID, e.Edges.Unit)
}

// entryLocal is instant t (nil: none) of a waitlist entry as wall time in
// its unit's zone.
func (r *Resolver) entryLocal(ctx context.Context, e *ent.WaitlistEntry, t *time.Time) (*string, error) {
	if t == nil {
		return nil, nil
	}
	s, err := r.localAt(ctx, e.UnitID, e.Edges.Unit, *t)
	return &s, err
}

// unitZone is the name of the time zone of unit unitID: loaded's, when
// the unit is loaded, or the one unitZones has for it.
func (r *Resolver) unitZone(ctx context.Context, unitID string, loaded *ent.Unit) (string, error) {
	// entgql's field collection may load the unit with only the columns a
	// query selects; a zone is never empty once stored.
	if loaded != nil && loaded.Timezone != "" {
		return loaded.Timezone, nil
	}
	if _, ok := ctx.Value(unitZonesKey{}).(*unitZones); ok {
		zones, err := r.unitZones(ctx)
		if err != nil {
			return "", err
		}
		if zone, ok := zones[unitID]; ok {
			return zone, nil
		}
		// A unit made after the zones were read.
	}
	u, err := r.cfg.DB.Unit.Query().Where(unit.ID(unitID)).Select(unit.FieldTimezone).Only(ctx)
	if err != nil {
		return "", err
	}
	return u.Timezone, nil
}

// localAt is instant t as wall time in the zone of unit unitID.
func (r *Resolver) localAt(ctx context.Context, unitID string, loaded *ent.Unit, t time.Time) (string, error) {
	zone, err := r.unitZone(ctx, unitID, loaded)
	if err != nil {
		return "", err
	}
	loc, err := catalog.MustZone(zone)
	if err != nil {
		return "", err
	}
	return slots.Local(t, loc), nil
}
