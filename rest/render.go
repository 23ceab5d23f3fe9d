package rest

import (
	"barberd/ent"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/rest/view"
)

// The v1 resources of rest-v1.md. Appointments and notifications render
// through package view, whose appointment form notifications keep as their
// snapshot. The types and the functions that build them are exported for
// the MCP adapter (package mcpserver), whose tools answer in the same
// shapes.

// List is the v1 form of a list: {"data": [...]}.
type List[T any] struct {
	Data []T `json:"data"`
}

// ListOf renders each of es.
func ListOf[E, T any](es []E, render func(E) T) List[T] {
	out := make([]T, len(es))
	for i, e := range es {
		out[i] = render(e)
	}
	return List[T]{Data: out}
}

// Context is the answer of GET /context.
type Context struct {
	Account struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"account"`
	APIKey struct {
		ID     string   `json:"id"`
		Name   string   `json:"name"`
		Prefix string   `json:"prefix"`
		Scopes []string `json:"scopes"`
	} `json:"api_key"`
	ServerTime string `json:"server_time"`
	Limits     struct {
		HoldTTLSeconds     limit `json:"hold_ttl_seconds"`
		NotificationsLimit limit `json:"notifications_limit"`
		ActiveHoldsMax     *int  `json:"active_holds_max"` // null: no cap
		ActiveHolds        int   `json:"active_holds"`
	} `json:"limits"`
}

// ReleasedHolds is the answer of POST /slots/hold/release-all.
type ReleasedHolds struct {
	Released int `json:"released"`
}

type limit struct {
	Default int  `json:"default"`
	Min     *int `json:"min,omitempty"`
	Max     int  `json:"max"`
}

// ContextOf renders the answer of GET /context.
func ContextOf(c *model.BookingContext) Context {
	var out Context
	out.Account.ID, out.Account.Name = c.Account.ID, c.Account.Name
	out.APIKey.ID, out.APIKey.Name, out.APIKey.Prefix, out.APIKey.Scopes = c.APIKey.ID, c.APIKey.Name, c.APIKey.Prefix, c.APIKey.Scopes
	out.ServerTime = slots.UTC(c.ServerTime)
	l := c.Limits
	out.Limits.HoldTTLSeconds = limit{Default: l.HoldTTLDefaultSeconds, Min: &l.HoldTTLMinSeconds, Max: l.HoldTTLMaxSeconds}
	out.Limits.NotificationsLimit = limit{Default: l.NotificationsLimitDefault, Max: l.NotificationsLimitMax}
	out.Limits.ActiveHoldsMax = l.ActiveHoldsMax
	out.Limits.ActiveHolds = l.ActiveHolds
	return out
}

// Unit is a barbershop location.
type Unit struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	Timezone      string        `json:"timezone"`
	Address       string        `json:"address"`
	Phone         string        `json:"phone"`
	BookingPolicy BookingPolicy `json:"booking_policy"`
}

// BookingPolicy tells a chatbot which times a unit accepts.
type BookingPolicy struct {
	SlotStepMinutes int `json:"slot_step_minutes"`
	MinLeadMinutes  int `json:"min_lead_minutes"`
	HorizonDays     int `json:"horizon_days"`
}

// UnitOf renders a unit.
func UnitOf(u *ent.Unit) Unit {
	return Unit{
		ID: u.ID, Name: u.Name, Timezone: u.Timezone, Address: u.Address, Phone: u.Phone,
		BookingPolicy: BookingPolicy{SlotStepMinutes: u.SlotStepMinutes, MinLeadMinutes: u.MinLeadMinutes, HorizonDays: u.HorizonDays},
	}
}

// Service is something that can be booked.
type Service struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Description     string     `json:"description"`
	DurationMinutes int        `json:"duration_minutes"`
	BufferMinutes   int        `json:"buffer_minutes"`
	Price           view.Price `json:"price"`
	UnitIDs         []string   `json:"unit_ids"`
}

// ServiceOf renders a service; its units must be loaded.
func ServiceOf(s *ent.Service) Service {
	return Service{
		ID: s.ID, Name: s.Name, Description: s.Description,
		DurationMinutes: s.DurationMinutes, BufferMinutes: s.BufferMinutes,
		Price:   view.Price{Amount: s.PriceAmount, Currency: s.PriceCurrency},
		UnitIDs: idsOf(s.Edges.Units, func(u *ent.Unit) string { return u.ID }),
	}
}

// Barber is a member of staff.
type Barber struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	UnitIDs    []string `json:"unit_ids"`
	ServiceIDs []string `json:"service_ids"`
}

// BarberOf renders a barber; its units and services must be loaded.
func BarberOf(b *ent.Barber) Barber {
	return Barber{
		ID: b.ID, Name: b.Name,
		UnitIDs:    idsOf(b.Edges.Units, func(u *ent.Unit) string { return u.ID }),
		ServiceIDs: idsOf(b.Edges.Services, func(s *ent.Service) string { return s.ID }),
	}
}

func idsOf[E any](es []E, id func(E) string) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = id(e)
	}
	return out
}

// Slot is a free time.
type Slot = view.Slot

// SlotOf renders a free slot.
func SlotOf(s *model.Slot) Slot {
	return Slot{
		StartsAt: s.StartsAt, EndsAt: s.EndsAt,
		StartsAtUTC: slots.UTC(s.StartsAtUtc), EndsAtUTC: slots.UTC(s.EndsAtUtc),
		BarberID: s.BarberID,
	}
}

// Availability is one day's free slots.
type Availability struct {
	UnitID    string  `json:"unit_id"`
	ServiceID string  `json:"service_id"`
	BarberID  *string `json:"barber_id"`
	Date      string  `json:"date"`
	Timezone  string  `json:"timezone"`
	Slots     []Slot  `json:"slots"`
	Reason    *string `json:"reason"` // why there are no slots; null when there are
}

// AvailabilityOf renders one day's availability.
func AvailabilityOf(a *model.Availability) Availability {
	return Availability{
		UnitID: a.UnitID, ServiceID: a.ServiceID, BarberID: a.BarberID,
		Date: a.Date, Timezone: a.Timezone, Slots: ListOf(a.Slots, SlotOf).Data,
		Reason: a.Reason,
	}
}

// AvailabilityRange is the free slots of consecutive days.
type AvailabilityRange struct {
	UnitID    string            `json:"unit_id"`
	ServiceID string            `json:"service_id"`
	BarberID  *string           `json:"barber_id"`
	Timezone  string            `json:"timezone"`
	From      string            `json:"from"`
	To        string            `json:"to"`
	Days      []AvailabilityDay `json:"days"`
}

// AvailabilityDay is one day of a range, as the single-day answer gives it.
type AvailabilityDay struct {
	Date   string  `json:"date"`
	Slots  []Slot  `json:"slots"`
	Reason *string `json:"reason"`
}

// NextSlots is the next free times of a service at a unit.
type NextSlots struct {
	UnitID    string  `json:"unit_id"`
	ServiceID string  `json:"service_id"`
	BarberID  *string `json:"barber_id"`
	Timezone  string  `json:"timezone"`
	Slots     []Slot  `json:"slots"`
	Reason    *string `json:"reason"` // null, or none_within_horizon
}

// NextSlotsOf renders the next free times.
func NextSlotsOf(n *model.NextFreeSlots) NextSlots {
	return NextSlots{
		UnitID: n.UnitID, ServiceID: n.ServiceID, BarberID: n.BarberID,
		Timezone: n.Timezone, Slots: ListOf(n.Slots, SlotOf).Data, Reason: n.Reason,
	}
}

// Hold is a slot kept for a while.
type Hold = view.Hold

// HoldOf renders a hold; its unit must be loaded.
func HoldOf(h *ent.Hold) (Hold, error) { return view.HoldOf(h) }
