// Package view renders appointments and notifications in the v1 JSON of
// rest-v1.md for every surface that shows them: the REST and MCP adapters,
// the bodies of webhook deliveries, and the snapshot of the appointment a
// notification keeps, which graph writes with the event. One form for all of
// them, so they always agree. It depends on nothing of barberd but ent and
// the slot engine's time formats, so graph can write snapshots with it.
package view

import (
	"encoding/json"
	"time"

	"barberd/ent"
	"barberd/graph/slots"
)

// Appointment is an appointment in the v1 form.
type Appointment struct {
	ID                 string  `json:"id"`
	Status             string  `json:"status"`
	UnitID             string  `json:"unit_id"`
	UnitName           string  `json:"unit_name"`
	ServiceID          string  `json:"service_id"`
	ServiceName        string  `json:"service_name"`
	BarberID           string  `json:"barber_id"`
	BarberName         string  `json:"barber_name"`
	StartsAt           string  `json:"starts_at"`
	EndsAt             string  `json:"ends_at"`
	StartsAtUTC        string  `json:"starts_at_utc"`
	EndsAtUTC          string  `json:"ends_at_utc"`
	Timezone           string  `json:"timezone"`
	DurationMinutes    int     `json:"duration_minutes"`
	Price              Price   `json:"price"`
	Client             Client  `json:"client"`
	ExternalReference  *string `json:"external_reference"`
	HoldID             *string `json:"hold_id"`
	CreatedAt          string  `json:"created_at"`
	UpdatedAt          string  `json:"updated_at"`
	CancelledAt        *string `json:"cancelled_at,omitempty"`
	CancellationReason *string `json:"cancellation_reason,omitempty"`
}

// Price is an amount in minor units of an ISO 4217 currency.
type Price struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Client is the client of an appointment as given when it was booked; the
// id is the account's customer record of the phone.
type Client struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Phone string  `json:"phone"`
	Email *string `json:"email"`
}

// AppointmentOf renders an appointment whose unit, service and barber edges
// are loaded (as every operation of graph returns them). The client is the
// one recorded on the appointment, not the customer record, which later
// bookings with the same phone change.
func AppointmentOf(a *ent.Appointment) (Appointment, error) {
	u, s, b := a.Edges.Unit, a.Edges.Service, a.Edges.Barber
	loc, err := zoneOf(u)
	if err != nil {
		return Appointment{}, err
	}
	v := Appointment{
		ID:     a.ID,
		Status: string(a.Status),
		UnitID: a.UnitID, UnitName: u.Name,
		ServiceID: a.ServiceID, ServiceName: s.Name,
		BarberID: a.BarberID, BarberName: b.Name,
		StartsAt:          slots.Local(a.StartsAt, loc),
		EndsAt:            slots.Local(a.EndsAt, loc),
		StartsAtUTC:       slots.UTC(a.StartsAt),
		EndsAtUTC:         slots.UTC(a.EndsAt),
		Timezone:          u.Timezone,
		DurationMinutes:   int(a.EndsAt.Sub(a.StartsAt) / time.Minute),
		Price:             Price{Amount: s.PriceAmount, Currency: s.PriceCurrency},
		Client:            Client{ID: a.CustomerID, Name: a.ClientName, Phone: a.ClientPhone, Email: a.ClientEmail},
		ExternalReference: a.ExternalReference,
		HoldID:            a.HoldID,
		CreatedAt:         slots.UTC(a.CreatedAt),
		UpdatedAt:         slots.UTC(a.UpdatedAt),
	}
	if a.CancelledAt != nil {
		at := slots.UTC(*a.CancelledAt)
		v.CancelledAt = &at
		v.CancellationReason = a.CancellationReason
	}
	return v, nil
}

// AppointmentsOf renders a list of appointments as AppointmentOf does.
func AppointmentsOf(as []*ent.Appointment) ([]Appointment, error) { return each(as, AppointmentOf) }

// each renders every one of xs with render, or fails with the first error.
func each[T, V any](xs []T, render func(T) (V, error)) ([]V, error) {
	out := make([]V, len(xs))
	for i, x := range xs {
		var err error
		if out[i], err = render(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Notification is a notification in the v1 form: the appointment as its
// snapshot recorded it, or for slot.available the offer to a waitlist
// entry (its entry, slot and hold as they were when offered).
type Notification struct {
	ID                  string         `json:"id"`
	Type                string         `json:"type"`
	CreatedAt           string         `json:"created_at"`
	AppointmentID       *string        `json:"appointment_id"`
	Appointment         map[string]any `json:"appointment,omitempty"`
	Source              string         `json:"source,omitempty"`
	PreviousStartsAt    *string        `json:"previous_starts_at,omitempty"`
	PreviousStartsAtUTC *string        `json:"previous_starts_at_utc,omitempty"`
	WaitlistEntry       any            `json:"waitlist_entry,omitempty"`
	Slot                any            `json:"slot,omitempty"`
	Hold                any            `json:"hold,omitempty"`
}

// SlotAvailable is the type of the notification of an offer.
const SlotAvailable = "slot.available"

// NotificationOf renders a notification.
func NotificationOf(n *ent.Notification) Notification {
	out := Notification{
		ID: n.ID, Type: n.Type, CreatedAt: slots.UTC(n.CreatedAt),
		AppointmentID: n.AppointmentID, Appointment: n.Appointment,
	}
	if n.Type == SlotAvailable {
		// hold is always there, null when the offer carries none.
		out.WaitlistEntry, out.Slot = n.Offer["waitlist_entry"], n.Offer["slot"]
		out.Hold = json.RawMessage("null")
		if h, ok := n.Offer["hold"]; ok && h != nil {
			out.Hold = h
		}
		return out
	}
	out.Source = string(n.Source)
	if n.PreviousStartsAt != nil {
		// In the unit's zone as the snapshot recorded it.
		tz, _ := n.Appointment["timezone"].(string)
		loc, err := slots.Zone(tz)
		if err != nil {
			loc = time.UTC
		}
		local, utc := slots.Local(*n.PreviousStartsAt, loc), slots.UTC(*n.PreviousStartsAt)
		out.PreviousStartsAt, out.PreviousStartsAtUTC = &local, &utc
	}
	return out
}

// NotificationBody is a notification as one item of GET
// /notifications/pending shows it, byte for byte: the body of its webhook
// deliveries.
func NotificationBody(n *ent.Notification) []byte {
	b, _ := json.Marshal(NotificationOf(n)) // always encodes
	return b
}
