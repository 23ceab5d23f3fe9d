package graph

import (
	"time"

	"barberd/ent"
	"barberd/graph/slots"
)

// AppointmentView is an appointment in the REST v1 form. The REST adapter
// renders appointments with it, and notifications keep it as their snapshot,
// so both always agree.
type AppointmentView struct {
	ID                 string     `json:"id"`
	Status             string     `json:"status"`
	UnitID             string     `json:"unit_id"`
	UnitName           string     `json:"unit_name"`
	ServiceID          string     `json:"service_id"`
	ServiceName        string     `json:"service_name"`
	BarberID           string     `json:"barber_id"`
	BarberName         string     `json:"barber_name"`
	StartsAt           string     `json:"starts_at"`
	EndsAt             string     `json:"ends_at"`
	StartsAtUTC        string     `json:"starts_at_utc"`
	EndsAtUTC          string     `json:"ends_at_utc"`
	Timezone           string     `json:"timezone"`
	DurationMinutes    int        `json:"duration_minutes"`
	Price              Price      `json:"price"`
	Client             ClientView `json:"client"`
	ExternalReference  *string    `json:"external_reference"`
	HoldID             *string    `json:"hold_id"`
	CreatedAt          string     `json:"created_at"`
	UpdatedAt          string     `json:"updated_at"`
	CancelledAt        *string    `json:"cancelled_at,omitempty"`
	CancellationReason *string    `json:"cancellation_reason,omitempty"`
}

// Price is an amount in minor units of an ISO 4217 currency.
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// ClientView is the client of an appointment as given when it was booked;
// the id is the account's customer record of the phone.
type ClientView struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Phone string  `json:"phone"`
	Email *string `json:"email"`
}

// UTC formats an instant as RFC 3339 in UTC, the form of every instant in
// the REST v1 interface.
func UTC(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ViewAppointment renders an appointment whose unit, service and barber
// edges are loaded (as every operation here returns them). The client is
// the one recorded on the appointment, not the customer record, which later
// bookings with the same phone change.
func ViewAppointment(a *ent.Appointment) (AppointmentView, error) {
	u, s, b := a.Edges.Unit, a.Edges.Service, a.Edges.Barber
	loc, err := mustZone(u.Timezone)
	if err != nil {
		return AppointmentView{}, err
	}
	v := AppointmentView{
		ID:     a.ID,
		Status: string(a.Status),
		UnitID: a.UnitID, UnitName: u.Name,
		ServiceID: a.ServiceID, ServiceName: s.Name,
		BarberID: a.BarberID, BarberName: b.Name,
		StartsAt:          slots.Local(a.StartsAt, loc),
		EndsAt:            slots.Local(a.EndsAt, loc),
		StartsAtUTC:       UTC(a.StartsAt),
		EndsAtUTC:         UTC(a.EndsAt),
		Timezone:          u.Timezone,
		DurationMinutes:   int(a.EndsAt.Sub(a.StartsAt) / time.Minute),
		Price:             Price{Amount: s.PriceAmount, Currency: s.PriceCurrency},
		Client:            ClientView{ID: a.CustomerID, Name: a.ClientName, Phone: a.ClientPhone, Email: a.ClientEmail},
		ExternalReference: a.ExternalReference,
		HoldID:            a.HoldID,
		CreatedAt:         UTC(a.CreatedAt),
		UpdatedAt:         UTC(a.UpdatedAt),
	}
	if a.CancelledAt != nil {
		at := UTC(*a.CancelledAt)
		v.CancelledAt = &at
		v.CancellationReason = a.CancellationReason
	}
	return v, nil
}

// ViewAppointments renders a list of appointments as ViewAppointment does.
func ViewAppointments(as []*ent.Appointment) ([]AppointmentView, error) {
	views := make([]AppointmentView, len(as))
	for i, a := range as {
		var err error
		if views[i], err = ViewAppointment(a); err != nil {
			return nil, err
		}
	}
	return views, nil
}
