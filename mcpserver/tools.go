package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/graph"
	"barberd/graph/admin"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/rest/view"
)

// Arguments of the tools. Required fields have no omitempty (the schema
// lists them as required); the resolvers check them as REST's do.

type noArgs struct{}

type servicesArgs struct {
	UnitID *string `json:"unit_id,omitempty" jsonschema:"Only the services offered at this unit (an id from list_units). Leave it out for every bookable service."`
}

type barbersArgs struct {
	UnitID    *string `json:"unit_id,omitempty" jsonschema:"Only barbers who work at this unit (an id from list_units)."`
	ServiceID *string `json:"service_id,omitempty" jsonschema:"Only barbers who perform this service (an id from list_services)."`
}

type availabilityArgs struct {
	UnitID    string  `json:"unit_id" jsonschema:"Id of the unit (barbershop location), from list_units."`
	ServiceID string  `json:"service_id" jsonschema:"Id of the service, from list_services."`
	BarberID  *string `json:"barber_id,omitempty" jsonschema:"Only this barber's slots (an id from list_barbers). Leave it out for every eligible barber."`
	Date      *string `json:"date,omitempty" jsonschema:"One day, YYYY-MM-DD in the unit's time zone. Give date, or from and to."`
	From      *string `json:"from,omitempty" jsonschema:"First day of a range, YYYY-MM-DD in the unit's time zone."`
	To        *string `json:"to,omitempty" jsonschema:"Last day of a range, YYYY-MM-DD, not before from; at most 31 days in all, both included."`
}

type nextArgs struct {
	UnitID    string  `json:"unit_id" jsonschema:"Id of the unit (barbershop location), from list_units."`
	ServiceID string  `json:"service_id" jsonschema:"Id of the service, from list_services."`
	BarberID  *string `json:"barber_id,omitempty" jsonschema:"Only this barber (an id from list_barbers). Without it each time comes with the barber a booking would get."`
	After     *string `json:"after,omitempty" jsonschema:"Find starts at or after this local time, YYYY-MM-DDTHH:MM:SS in the unit's time zone (no offset, no Z). Default: now."`
	Limit     *int    `json:"limit,omitempty" jsonschema:"How many times to find, 1 to 20; default 3."`
	TimeFrom  *string `json:"time_from,omitempty" jsonschema:"Earliest local time of day of a start, HH:MM (e.g. 17:00 for 'after work'). Default 00:00."`
	TimeTo    *string `json:"time_to,omitempty" jsonschema:"Starts must be before this local time of day, HH:MM, after time_from. Default 24:00."`
	Weekdays  []int   `json:"weekdays,omitempty" jsonschema:"Only these ISO weekdays: 1 Monday to 7 Sunday (e.g. [6] for Saturdays). Default: every day."`
}

type holdArgs struct {
	UnitID     string  `json:"unit_id" jsonschema:"Id of the unit (barbershop location), from list_units."`
	ServiceID  string  `json:"service_id" jsonschema:"Id of the service, from list_services."`
	BarberID   *string `json:"barber_id,omitempty" jsonschema:"Id of a barber, from list_barbers or a slot's barber_id. Leave it out to let the first eligible free barber serve."`
	StartsAt   string  `json:"starts_at" jsonschema:"Start in the unit's own time zone, exactly YYYY-MM-DDTHH:MM:SS (e.g. 2027-03-02T10:00:00): no offset, no Z. Copy it from a slot's starts_at."`
	TTLSeconds *int    `json:"ttl_seconds,omitempty"` // described from the resolver's limits
}

type holdIDArgs struct {
	HoldID string `json:"hold_id" jsonschema:"Id of the hold (hld_...), from hold_slot."`
}

type clientArgs struct {
	Name  string  `json:"name" jsonschema:"The client's name, 1 to 200 characters."`
	Phone string  `json:"phone" jsonschema:"The client's phone in E.164: + then 8 to 15 digits, no spaces (e.g. +351912345678)."`
	Email *string `json:"email,omitempty" jsonschema:"The client's e-mail address, if they gave one."`
}

func (c clientArgs) input() *model.ClientInput {
	return &model.ClientInput{Name: c.Name, Phone: c.Phone, Email: c.Email}
}

type bookArgs struct {
	UnitID            string     `json:"unit_id" jsonschema:"Id of the unit (barbershop location), from list_units."`
	ServiceID         string     `json:"service_id" jsonschema:"Id of the service, from list_services."`
	BarberID          *string    `json:"barber_id,omitempty" jsonschema:"Id of a barber, from list_barbers or a slot's barber_id. Leave it out to let the first eligible free barber serve."`
	HoldID            *string    `json:"hold_id,omitempty" jsonschema:"Id of an active hold (hld_...) from hold_slot, for the same unit, service, starts_at (and barber, when given). The hold is used up."`
	StartsAt          string     `json:"starts_at" jsonschema:"Start in the unit's own time zone, exactly YYYY-MM-DDTHH:MM:SS (e.g. 2027-03-02T10:00:00): no offset, no Z. Copy it from a slot's starts_at."`
	Client            clientArgs `json:"client" jsonschema:"Who the appointment is for."`
	ExternalReference *string    `json:"external_reference,omitempty" jsonschema:"Your own unique id for this booking, 1 to 255 characters (e.g. the conversation id and a counter). Always send one, and send the same one when you retry after an error or a timeout: a repeat then returns the appointment made the first time instead of booking twice."`
}

type appointmentArgs struct {
	AppointmentID string `json:"appointment_id" jsonschema:"Id of the appointment (apt_...), from book_appointment or find_client_appointments."`
}

type lookupArgs struct {
	ClientPhone       *string  `json:"client_phone,omitempty" jsonschema:"The phone the appointment was booked with, E.164 (e.g. +351912345678); matches any booking of the account. Give this or external_reference."`
	ExternalReference *string  `json:"external_reference,omitempty" jsonschema:"The external_reference you booked with (this key's own bookings only). Give this or client_phone."`
	Status            []string `json:"status,omitempty"` // described with its values below
	From              *string  `json:"from,omitempty" jsonschema:"Only appointments starting on or after this day, YYYY-MM-DD in the unit's time zone. Without from and to: only those not ended yet."`
	To                *string  `json:"to,omitempty" jsonschema:"Only appointments starting on or before this day, YYYY-MM-DD in the unit's time zone."`
	Limit             *int     `json:"limit,omitempty" jsonschema:"At most this many, 1 to 100; default 20."`
}

type cancelArgs struct {
	AppointmentID string `json:"appointment_id" jsonschema:"Id of the appointment (apt_...), from book_appointment or find_client_appointments."`
	Reason        string `json:"reason" jsonschema:"Why it is cancelled, 1 to 500 characters (e.g. 'Client asked by chat')."`
}

type rescheduleArgs struct {
	AppointmentID string  `json:"appointment_id" jsonschema:"Id of the appointment (apt_...), from book_appointment or find_client_appointments."`
	StartsAt      string  `json:"starts_at" jsonschema:"New start in the unit's own time zone, exactly YYYY-MM-DDTHH:MM:SS (e.g. 2027-03-02T10:00:00): no offset, no Z. Copy it from a slot's starts_at."`
	BarberID      *string `json:"barber_id,omitempty" jsonschema:"Move to this barber (an id from list_barbers). Leave it out to keep the same barber."`
	HoldID        *string `json:"hold_id,omitempty" jsonschema:"Id of an active hold (hld_...) from hold_slot on the new time. The hold is used up."`
}

type joinWaitlistArgs struct {
	UnitID            string     `json:"unit_id" jsonschema:"Id of the unit (barbershop location), from list_units."`
	ServiceID         string     `json:"service_id" jsonschema:"Id of the service, from list_services."`
	BarberID          *string    `json:"barber_id,omitempty" jsonschema:"Only this barber (an id from list_barbers). Leave it out to take any eligible barber."`
	From              string     `json:"from" jsonschema:"First day the client could come, YYYY-MM-DD in the unit's time zone, not before today."`
	To                string     `json:"to" jsonschema:"Last day the client could come, YYYY-MM-DD, not before from; at most 31 days in all, both included."`
	TimeFrom          *string    `json:"time_from,omitempty" jsonschema:"Earliest local time of day of a start, HH:MM (e.g. 17:00 for 'after work'). Default 00:00."`
	TimeTo            *string    `json:"time_to,omitempty" jsonschema:"Starts must be before this local time of day, HH:MM, after time_from. Default 24:00."`
	Weekdays          []int      `json:"weekdays,omitempty" jsonschema:"Only these ISO weekdays: 1 Monday to 7 Sunday (e.g. [5] for Fridays). Default: every day."`
	Client            clientArgs `json:"client" jsonschema:"Who is waiting."`
	ExternalReference *string    `json:"external_reference,omitempty" jsonschema:"Your own unique id for this request, 1 to 255 characters. Send the same one when you retry: a repeat then returns the entry made the first time (replayed: true)."`
	OfferHoldSeconds  *int       `json:"offer_hold_seconds,omitempty" jsonschema:"How long a time offered to the client is held for them: 0 (tell only, no hold) or 10 to 1800 seconds; default 600."`
}

type waitlistEntryArgs struct {
	WaitlistEntryID string `json:"waitlist_entry_id" jsonschema:"Id of the waitlist entry (wl_...), from join_waitlist or find_client_waitlist."`
}

type clientWaitlistArgs struct {
	ClientPhone string   `json:"client_phone" jsonschema:"The phone the client joined the waitlist with, E.164 (e.g. +351912345678); matches entries of any key of the account."`
	Status      []string `json:"status,omitempty"` // described with its values below
}

// joined is join_waitlist's answer: the entry, and whether the
// external_reference had made it before (REST's Idempotent-Replayed).
type joined struct {
	view.WaitlistEntry
	Replayed bool `json:"replayed"`
}

type pendingArgs struct {
	Limit *int `json:"limit,omitempty"` // described from the resolver's limits
}

type ackArgs struct {
	Through string `json:"through" jsonschema:"Id of the last notification handled (ntf_...), from get_pending_notifications: it and every one before it are acknowledged."`
}

// booked is book_appointment's answer: the appointment, and whether the
// external_reference had booked it before (REST's Idempotent-Replayed).
type booked struct {
	view.Appointment
	Replayed bool `json:"replayed"`
}

type acknowledged struct {
	Acknowledged int `json:"acknowledged"`
}

// wholeCatalog is the page of the catalog lists, as REST's: all of it.
var wholeCatalog = admin.MaxCatalog

var (
	no       = false
	readOnly = mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
)

// define makes a tool: its schemas come from In and Out.
func define[In, Out any](m *MCP, scope, name, title, desc string, ann mcp.ToolAnnotations, run func(context.Context, *In) (Out, string, error), describe ...func(*jsonschema.Schema)) tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err) // the argument types are fixed: a test builds every tool
	}
	constrain(in)
	for _, d := range describe {
		d(in)
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(err)
	}
	portable(out)
	ann.Title = title
	return tool{scope: scope, tool: &mcp.Tool{
		Name: name, Title: title, Description: desc, Annotations: &ann, InputSchema: in, OutputSchema: out,
	}, handler: handle(m.window, run)}
}

// catalog is every tool, in the order a booking uses them.
func (m *MCP) catalog() []tool {
	l := m.res.Settings().Limits
	writes := func(destructive, idempotent bool) mcp.ToolAnnotations {
		d := destructive
		return mcp.ToolAnnotations{DestructiveHint: &d, IdempotentHint: idempotent, OpenWorldHint: &no}
	}
	return []tool{
		define(m, domain.ScopeContextRead, "get_context", "Who am I",
			"Tells which account and API key these tools act as, the key's scopes, the server's time (UTC) and the limits (hold lifetimes, notification pages).",
			readOnly, m.context),
		define(m, domain.ScopeCatalogRead, "list_units", "List barbershops",
			"Lists the account's active units (barbershop locations) with their time zone, address, phone and booking policy (slot step, minimum lead time, how many days ahead one can book). Start here: every other tool needs a unit_id.",
			readOnly, m.units),
		define(m, domain.ScopeCatalogRead, "list_services", "List services",
			"Lists the services that can be booked online (name, duration, price in minor units), optionally only those of one unit.",
			readOnly, m.services),
		define(m, domain.ScopeCatalogRead, "list_barbers", "List barbers",
			"Lists the active barbers, optionally only those working at a unit and/or performing a service, with the units and services of each.",
			readOnly, m.barbers),
		define(m, domain.ScopeAvailabilityRead, "get_availability", "Free times on given days",
			"Lists every free start time of a service at a unit on one day (date), or on each day of a range (from, to; up to 31 days). Each day says why it is empty (reason: closed, fully_booked, time_off, outside_booking_window). An answer holds at most about 2,600 slots (1 MiB): on a large unit, ask for fewer days or one barber (barber_id), as a refusal will say. To find the next free times, use find_next_slots instead.",
			readOnly, m.availability),
		define(m, domain.ScopeAvailabilityRead, "find_next_slots", "Next free times",
			"Finds the next free start times of a service at a unit, from now (or after) through the booking horizon, optionally within a daily time window (time_from, time_to) and on some weekdays only: what to offer when a person asks 'when is the next free time?'. Each slot names the barber a booking would get.",
			readOnly, m.next),
		define(m, domain.ScopeHoldsWrite, "hold_slot", "Hold a time",
			"Keeps a free time for a few minutes while the person decides, so nobody else takes it; book it with book_appointment and the hold_id, or free it with release_hold. Refused with slot_unavailable (and alternatives) when the time is not free.",
			writes(false, false), m.hold, describeTTL(l)),
		define(m, domain.ScopeHoldsWrite, "release_hold", "Release a hold",
			"Frees a hold at once (the person changed their mind). Releasing a released hold again is fine; a used or expired one is refused.",
			writes(true, true), m.release),
		define(m, domain.ScopeHoldsWrite, "release_all_holds", "Release all holds",
			"Frees every active hold of this API key at once (say, when a conversation ends) and tells how many it freed. Running it again frees nothing more.",
			writes(true, true), m.releaseAll),
		define(m, domain.ScopeAppointmentsWrite, "book_appointment", "Book an appointment",
			"Books a service at a unit for a client at a free start time (from find_next_slots or get_availability), optionally with a hold_id from hold_slot. Always send an external_reference, and on any retry send the same one: then a repeat returns the same appointment (replayed: true) instead of booking twice. Refusals: slot_unavailable (with alternatives to offer), outside_booking_window, barber_not_eligible, hold_expired and others, each with a detail to relay.",
			writes(false, false), m.book),
		define(m, domain.ScopeAppointmentsRead, "get_appointment", "Show an appointment",
			"Shows one appointment by id: status, times, service, barber and client.",
			readOnly, m.appointment),
		define(m, domain.ScopeAppointmentsRead, "find_client_appointments", "Find a client's appointments",
			"Finds appointments by the client's phone (any booking of the account) or by your own external_reference, when the person has no appointment id at hand. Without from and to, only appointments that have not ended yet.",
			readOnly, m.lookup, describeStatus),
		define(m, domain.ScopeAppointmentsWrite, "cancel_appointment", "Cancel an appointment",
			"Cancels a confirmed appointment that has not started. Cancelling one already cancelled returns it unchanged.",
			writes(true, true), m.cancel),
		define(m, domain.ScopeAppointmentsWrite, "reschedule_appointment", "Move an appointment",
			"Moves a confirmed appointment that has not started to another free start time (and optionally barber), keeping its id. The new time may overlap its own old time.",
			writes(true, false), m.reschedule),
		define(m, domain.ScopeAppointmentsWrite, "join_waitlist", "Join the waitlist",
			"Puts a client on the waitlist for a service at a unit when nothing matching is free: days from..to, optionally a daily time window (time_from, time_to), weekdays and one barber. When a matching time frees up (a cancellation, a released hold...), the oldest waiting entry is offered it: the time is held for the client (offer_hold_seconds), the entry becomes offered, and a slot.available notification (get_pending_notifications) carries the entry, the slot and the hold; book it with book_appointment and that hold_id. Refusals: slot_available (a matching time is free now: its alternatives are times to book instead), already_waiting (waitlist_entry_id names the client's entry for that service and unit), too_many_waitlist_entries.",
			writes(false, false), m.joinWaitlist),
		define(m, domain.ScopeAppointmentsWrite, "leave_waitlist", "Leave the waitlist",
			"Takes a waitlist entry off the waitlist (status cancelled); if it was offered a time, the hold is released and the time goes to the next waiting client. Leaving again, or leaving an entry already booked or expired, returns it unchanged.",
			writes(true, true), m.leaveWaitlist),
		define(m, domain.ScopeAppointmentsRead, "find_client_waitlist", "Find a client's waitlist entries",
			"Finds a client's waitlist entries by the phone they joined with (any key of the account), oldest first, with the offer once one is made (its slot and hold_id).",
			readOnly, m.clientWaitlist, describeWaitlistStatus),
		define(m, domain.ScopeNotificationsRead, "get_pending_notifications", "Pending notifications",
			"Lists the account's events (appointments created, cancelled, rescheduled, reminders..., and slot.available: a time offered to a waitlist entry of this key, with its hold) that this key has not acknowledged, oldest first. It does not consume them: once handled, acknowledge them with ack_notifications.",
			readOnly, m.pending, describeNotificationsLimit(l)),
		define(m, domain.ScopeNotificationsRead, "ack_notifications", "Acknowledge notifications",
			"Marks notifications as handled, through the given one: they are no longer pending for this key. Acknowledging the same one again acknowledges nothing more.",
			writes(true, true), m.ack),
	}
}

func describeTTL(l graph.Limits) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		p := s.Properties["ttl_seconds"]
		lo, hi := int(l.HoldTTLMin.Seconds()), int(l.HoldTTLMax.Seconds())
		p.Description = fmt.Sprintf("How long to keep the time, %d to %d seconds; default %d.", lo, hi, int(l.HoldTTLDefault.Seconds()))
		p.Minimum, p.Maximum = jsonschema.Ptr(float64(lo)), jsonschema.Ptr(float64(hi))
	}
}

func describeNotificationsLimit(l graph.Limits) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		p := s.Properties["limit"]
		p.Description = fmt.Sprintf("At most this many, 1 to %d; default %d.", l.NotificationsMax, l.NotificationsDefault)
		p.Maximum = jsonschema.Ptr(float64(l.NotificationsMax))
	}
}

// Patterns of the arguments' forms, as the resolvers check them, so a host
// can check an argument before calling.
const (
	patternDate     = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	patternWallTime = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$`
	patternClock    = `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`
	patternPhone    = `^\+[1-9][0-9]{7,14}$`
)

// constrain states an input schema's limits as JSON Schema, by argument
// name (each name has one meaning in every tool): forms as patterns,
// ranges as minimum and maximum. Optional arguments are typed as their
// value, not also null: leaving one out is how to say nothing.
func constrain(s *jsonschema.Schema) {
	for name, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		switch name {
		case "date", "from", "to":
			p.Pattern = patternDate
		case "starts_at", "after":
			p.Pattern = patternWallTime
		case "time_from", "time_to":
			p.Pattern = patternClock
		case "phone", "client_phone":
			p.Pattern = patternPhone
		case "limit":
			p.Minimum = jsonschema.Ptr(1.0)
			switch {
			case s.Properties["time_from"] != nil: // find_next_slots
				p.Maximum = jsonschema.Ptr(float64(domain.MaxNextLimit))
			case s.Properties["client_phone"] != nil: // find_client_appointments
				p.Maximum = jsonschema.Ptr(float64(graph.ClientAppointmentsMax))
			} // get_pending_notifications: describeNotificationsLimit
		case "offer_hold_seconds":
			p.Minimum, p.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(1800.0)
		case "ttl_seconds":
			p.Minimum = jsonschema.Ptr(1.0)
		case "weekdays":
			p.Items.Minimum, p.Items.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(7.0)
		case "client":
			constrain(p)
		}
	}
}

// portable rewrites an output schema's nullable types (["null", "string"])
// as anyOf branches of one type each, which every host's schema dialect
// reads (the Inspector's portability check warns of type arrays).
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		portable(p)
	}
	portable(s.Items)
	if len(s.Types) == 2 && s.Types[0] == "null" {
		inner := *s
		inner.Type, inner.Types, inner.Description = s.Types[1], nil, ""
		*s = jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{{Type: "null"}, &inner}}
	}
}

func describeStatus(s *jsonschema.Schema) {
	p := s.Properties["status"]
	p.Description = "Only appointments in these statuses. Default: all."
	p.Items.Enum = []any{"confirmed", "cancelled", "completed", "no_show"}
}

func describeWaitlistStatus(s *jsonschema.Schema) {
	p := s.Properties["status"]
	p.Description = "Only entries in these statuses. Default: all."
	p.Items.Enum = []any{"waiting", "offered", "booked", "cancelled", "expired"}
}
