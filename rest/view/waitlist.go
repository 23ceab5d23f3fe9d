package view

import (
	"fmt"
	"time"

	"barberd/ent"
	"barberd/graph/slots"
)

// Slot is a free time in the v1 form.
type Slot struct {
	StartsAt    string `json:"starts_at"`
	EndsAt      string `json:"ends_at"`
	StartsAtUTC string `json:"starts_at_utc"`
	EndsAtUTC   string `json:"ends_at_utc"`
	BarberID    string `json:"barber_id"`
}

// SlotAt renders the time from start to end with a barber, in loc.
func SlotAt(start, end time.Time, barberID string, loc *time.Location) Slot {
	return Slot{
		StartsAt: slots.Local(start, loc), EndsAt: slots.Local(end, loc),
		StartsAtUTC: slots.UTC(start), EndsAtUTC: slots.UTC(end),
		BarberID: barberID,
	}
}

// Hold is a slot kept for a while, in the v1 form.
type Hold struct {
	HoldID      string `json:"hold_id"`
	Status      string `json:"status"`
	UnitID      string `json:"unit_id"`
	ServiceID   string `json:"service_id"`
	BarberID    string `json:"barber_id"`
	StartsAt    string `json:"starts_at"`
	EndsAt      string `json:"ends_at"`
	StartsAtUTC string `json:"starts_at_utc"`
	EndsAtUTC   string `json:"ends_at_utc"`
	Timezone    string `json:"timezone"`
	ExpiresAt   string `json:"expires_at"`
	CreatedAt   string `json:"created_at"`
}

// HoldOf renders a hold; its unit must be loaded.
func HoldOf(h *ent.Hold) (Hold, error) {
	loc, err := zoneOf(h.Edges.Unit)
	if err != nil {
		return Hold{}, err
	}
	return Hold{
		HoldID: h.ID, Status: string(h.Status),
		UnitID: h.UnitID, ServiceID: h.ServiceID, BarberID: h.BarberID,
		StartsAt: slots.Local(h.StartsAt, loc), EndsAt: slots.Local(h.EndsAt, loc),
		StartsAtUTC: slots.UTC(h.StartsAt), EndsAtUTC: slots.UTC(h.EndsAt),
		Timezone:  h.Edges.Unit.Timezone,
		ExpiresAt: slots.UTC(h.ExpiresAt), CreatedAt: slots.UTC(h.CreatedAt),
	}, nil
}

// WaitlistEntry is a waitlist entry in the v1 form.
type WaitlistEntry struct {
	ID                string  `json:"id"`
	Status            string  `json:"status"`
	UnitID            string  `json:"unit_id"`
	ServiceID         string  `json:"service_id"`
	BarberID          *string `json:"barber_id"`
	From              string  `json:"from"`
	To                string  `json:"to"`
	TimeFrom          *string `json:"time_from"`
	TimeTo            *string `json:"time_to"`
	Weekdays          []int   `json:"weekdays"`
	Timezone          string  `json:"timezone"`
	Client            Client  `json:"client"`
	ExternalReference *string `json:"external_reference"`
	OfferHoldSeconds  int     `json:"offer_hold_seconds"`
	Offer             *Offer  `json:"offer"`
	AppointmentID     *string `json:"appointment_id"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

// Offer is the start a waitlist entry was offered, and its hold (nil: told
// only).
type Offer struct {
	Slot      Slot    `json:"slot"`
	HoldID    *string `json:"hold_id"`
	OfferedAt string  `json:"offered_at"`
}

// WaitlistEntryOf renders an entry whose unit edge is loaded.
func WaitlistEntryOf(e *ent.WaitlistEntry) (WaitlistEntry, error) {
	loc, err := zoneOf(e.Edges.Unit)
	if err != nil {
		return WaitlistEntry{}, err
	}
	weekdays := e.Weekdays
	if weekdays == nil {
		weekdays = []int{}
	}
	v := WaitlistEntry{
		ID: e.ID, Status: string(e.Status),
		UnitID: e.UnitID, ServiceID: e.ServiceID, BarberID: e.BarberID,
		From: e.FromDate, To: e.ToDate, TimeFrom: e.TimeFrom, TimeTo: e.TimeTo, Weekdays: weekdays,
		Timezone:          e.Edges.Unit.Timezone,
		Client:            Client{ID: e.CustomerID, Name: e.ClientName, Phone: e.ClientPhone, Email: e.ClientEmail},
		ExternalReference: e.ExternalReference, OfferHoldSeconds: e.OfferHoldSeconds,
		AppointmentID: e.AppointmentID,
		CreatedAt:     slots.UTC(e.CreatedAt), UpdatedAt: slots.UTC(e.UpdatedAt),
	}
	if e.OfferStartsAt != nil && e.OfferEndsAt != nil && e.OfferBarberID != nil && e.OfferedAt != nil {
		v.Offer = &Offer{
			Slot:   SlotAt(*e.OfferStartsAt, *e.OfferEndsAt, *e.OfferBarberID, loc),
			HoldID: e.OfferHoldID, OfferedAt: slots.UTC(*e.OfferedAt),
		}
	}
	return v, nil
}

// WaitlistEntriesOf renders entries as WaitlistEntryOf does.
func WaitlistEntriesOf(es []*ent.WaitlistEntry) ([]WaitlistEntry, error) {
	return each(es, WaitlistEntryOf)
}

// zoneOf is the time zone of a loaded unit.
func zoneOf(u *ent.Unit) (*time.Location, error) {
	if u == nil {
		return nil, fmt.Errorf("unit not loaded")
	}
	loc, err := slots.Zone(u.Timezone)
	if err != nil {
		return nil, fmt.Errorf("unit %s has time zone %q: %w", u.ID, u.Timezone, err)
	}
	return loc, nil
}
