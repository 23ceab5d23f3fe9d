package graph

import (
	"slices"

	"barberd/ent/appointment"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/slots"
)

// Input checks shared by GraphQL and REST. Field names are those of the
// REST v1 interface, so a client of either learns which field to fix.

// CheckAvailability checks an availability query.
func CheckAvailability(unitID, serviceID string, barberID *string, date string) domain.Problems {
	_, p := checkAvailability(unitID, serviceID, barberID, date)
	return p
}

// checkAvailability is CheckAvailability, with the date read.
func checkAvailability(unitID, serviceID string, barberID *string, date string) (slots.Date, domain.Problems) {
	var p domain.Problems
	domain.Required(&p, "unit_id", unitID)
	domain.Required(&p, "service_id", serviceID)
	domain.CheckOptionalID(&p, "barber_id", barberID)
	d := domain.RequiredDate(&p, "date", date)
	if d == nil {
		return slots.Date{}, p
	}
	return *d, p
}

// CheckHoldSlot checks a hold request.
func (r *Resolver) CheckHoldSlot(in model.HoldSlotInput) domain.Problems {
	var p domain.Problems
	domain.Required(&p, "unit_id", in.UnitID)
	domain.Required(&p, "service_id", in.ServiceID)
	domain.CheckOptionalID(&p, "barber_id", in.BarberID)
	domain.CheckWallTime(&p, "starts_at", in.StartsAt)
	if in.TTLSeconds != nil {
		lo, hi := int(r.cfg.Limits.HoldTTLMin.Seconds()), int(r.cfg.Limits.HoldTTLMax.Seconds())
		if *in.TTLSeconds < lo || *in.TTLSeconds > hi {
			p.Add("ttl_seconds", "must be between %d and %d", lo, hi)
		}
	}
	return p
}

// CheckCreateAppointment checks an appointment request.
func CheckCreateAppointment(in model.CreateAppointmentInput) domain.Problems {
	var p domain.Problems
	domain.Required(&p, "unit_id", in.UnitID)
	domain.Required(&p, "service_id", in.ServiceID)
	domain.CheckOptionalID(&p, "barber_id", in.BarberID)
	domain.CheckOptionalID(&p, "hold_id", in.HoldID)
	domain.CheckWallTime(&p, "starts_at", in.StartsAt)
	domain.CheckClient(&p, in.Client)
	if in.ExternalReference != nil {
		domain.CheckReference(&p, *in.ExternalReference)
	}
	return p
}

// CheckReschedule checks a reschedule request.
func CheckReschedule(in model.RescheduleAppointmentInput) domain.Problems {
	var p domain.Problems
	domain.CheckWallTime(&p, "starts_at", in.StartsAt)
	domain.CheckOptionalID(&p, "barber_id", in.BarberID)
	domain.CheckOptionalID(&p, "hold_id", in.HoldID)
	return p
}

// CheckCancel checks a cancellation reason.
func CheckCancel(reason string) domain.Problems {
	var p domain.Problems
	if domain.Required(&p, "reason", reason) {
		domain.CheckLength(&p, "reason", reason, 1, 500)
	}
	return p
}

// CheckCatalogFilters checks the optional unit and service of a catalog
// list.
func CheckCatalogFilters(unitID, serviceID *string) domain.Problems {
	var p domain.Problems
	if unitID != nil {
		domain.CheckText(&p, "unit_id", *unitID)
	}
	if serviceID != nil {
		domain.CheckText(&p, "service_id", *serviceID)
	}
	return p
}

// CheckNotificationsLimit checks the limit of a notifications request.
func (r *Resolver) CheckNotificationsLimit(limit *int) domain.Problems {
	var p domain.Problems
	if limit != nil && (*limit < 1 || *limit > r.cfg.Limits.NotificationsMax) {
		p.Add("limit", "must be between 1 and %d", r.cfg.Limits.NotificationsMax)
	}
	return p
}

// CheckAck checks a notifications acknowledgement.
func CheckAck(through string) domain.Problems {
	var p domain.Problems
	domain.Required(&p, "through", through)
	return p
}

// CheckClientLookup checks a lookup of a client's appointments: exactly
// one of client_phone (E.164) and external_reference, statuses that exist,
// dates with to not before from, and a limit of 1..ClientAppointmentsMax.
func CheckClientLookup(l ClientLookup) domain.Problems {
	var p domain.Problems
	switch {
	case (l.ClientPhone == nil) == (l.ExternalReference == nil):
		for _, f := range []string{"client_phone", "external_reference"} {
			p.Add(f, "give exactly one of client_phone and external_reference")
		}
	case l.ClientPhone != nil:
		domain.CheckPhone(&p, "client_phone", domain.LookupPhone(*l.ClientPhone))
	default:
		domain.CheckReference(&p, *l.ExternalReference)
	}
	if l.Status != nil {
		unknown := slices.ContainsFunc(l.Status, func(s appointment.Status) bool { return appointment.StatusValidator(s) != nil })
		if len(l.Status) == 0 || unknown {
			p.Add("status", "must list statuses among confirmed, cancelled, completed and no_show")
		}
	}
	from, to := domain.CheckDate(&p, "from", l.From), domain.CheckDate(&p, "to", l.To)
	if from != nil && to != nil && to.Compare(*from) < 0 {
		p.Add("to", "must not be before from")
	}
	if l.Limit != nil && (*l.Limit < 1 || *l.Limit > ClientAppointmentsMax) {
		p.Add("limit", "must be between 1 and %d", ClientAppointmentsMax)
	}
	return p
}
