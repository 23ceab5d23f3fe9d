package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/graph"
	"barberd/graph/model"
	"barberd/rest"
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
var wholeCatalog = graph.MaxCatalog

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
		define(m, graph.ScopeContextRead, "get_context", "Who am I",
			"Tells which account and API key these tools act as, the key's scopes, the server's time (UTC) and the limits (hold lifetimes, notification pages).",
			readOnly, m.context),
		define(m, graph.ScopeCatalogRead, "list_units", "List barbershops",
			"Lists the account's active units (barbershop locations) with their time zone, address, phone and booking policy (slot step, minimum lead time, how many days ahead one can book). Start here: every other tool needs a unit_id.",
			readOnly, m.units),
		define(m, graph.ScopeCatalogRead, "list_services", "List services",
			"Lists the services that can be booked online (name, duration, price in minor units), optionally only those of one unit.",
			readOnly, m.services),
		define(m, graph.ScopeCatalogRead, "list_barbers", "List barbers",
			"Lists the active barbers, optionally only those working at a unit and/or performing a service, with the units and services of each.",
			readOnly, m.barbers),
		define(m, graph.ScopeAvailabilityRead, "get_availability", "Free times on given days",
			"Lists every free start time of a service at a unit on one day (date), or on each day of a range (from, to; up to 31 days). Each day says why it is empty (reason: closed, fully_booked, time_off, outside_booking_window). An answer holds at most about 2,600 slots (1 MiB): on a large unit, ask for fewer days or one barber (barber_id), as a refusal will say. To find the next free times, use find_next_slots instead.",
			readOnly, m.availability),
		define(m, graph.ScopeAvailabilityRead, "find_next_slots", "Next free times",
			"Finds the next free start times of a service at a unit, from now (or after) through the booking horizon, optionally within a daily time window (time_from, time_to) and on some weekdays only: what to offer when a person asks 'when is the next free time?'. Each slot names the barber a booking would get.",
			readOnly, m.next),
		define(m, graph.ScopeHoldsWrite, "hold_slot", "Hold a time",
			"Keeps a free time for a few minutes while the person decides, so nobody else takes it; book it with book_appointment and the hold_id, or free it with release_hold. Refused with slot_unavailable (and alternatives) when the time is not free.",
			writes(false, false), m.hold, describeTTL(l)),
		define(m, graph.ScopeHoldsWrite, "release_hold", "Release a hold",
			"Frees a hold at once (the person changed their mind). Releasing a released hold again is fine; a used or expired one is refused.",
			writes(true, true), m.release),
		define(m, graph.ScopeAppointmentsWrite, "book_appointment", "Book an appointment",
			"Books a service at a unit for a client at a free start time (from find_next_slots or get_availability), optionally with a hold_id from hold_slot. Always send an external_reference, and on any retry send the same one: then a repeat returns the same appointment (replayed: true) instead of booking twice. Refusals: slot_unavailable (with alternatives to offer), outside_booking_window, barber_not_eligible, hold_expired and others, each with a detail to relay.",
			writes(false, false), m.book),
		define(m, graph.ScopeAppointmentsRead, "get_appointment", "Show an appointment",
			"Shows one appointment by id: status, times, service, barber and client.",
			readOnly, m.appointment),
		define(m, graph.ScopeAppointmentsRead, "find_client_appointments", "Find a client's appointments",
			"Finds appointments by the client's phone (any booking of the account) or by your own external_reference, when the person has no appointment id at hand. Without from and to, only appointments that have not ended yet.",
			readOnly, m.lookup, describeStatus),
		define(m, graph.ScopeAppointmentsWrite, "cancel_appointment", "Cancel an appointment",
			"Cancels a confirmed appointment that has not started. Cancelling one already cancelled returns it unchanged.",
			writes(true, true), m.cancel),
		define(m, graph.ScopeAppointmentsWrite, "reschedule_appointment", "Move an appointment",
			"Moves a confirmed appointment that has not started to another free start time (and optionally barber), keeping its id. The new time may overlap its own old time.",
			writes(true, false), m.reschedule),
		define(m, graph.ScopeNotificationsRead, "get_pending_notifications", "Pending notifications",
			"Lists the account's events (appointments created, cancelled, rescheduled, reminders...) that this key has not acknowledged, oldest first. It does not consume them: once handled, acknowledge them with ack_notifications.",
			readOnly, m.pending, describeNotificationsLimit(l)),
		define(m, graph.ScopeNotificationsRead, "ack_notifications", "Acknowledge notifications",
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
				p.Maximum = jsonschema.Ptr(float64(graph.MaxNextLimit))
			case s.Properties["client_phone"] != nil: // find_client_appointments
				p.Maximum = jsonschema.Ptr(float64(graph.ClientAppointmentsMax))
			} // get_pending_notifications: describeNotificationsLimit
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

// requiredID refuses a blank id argument, naming it. (REST takes ids in
// the path, where a blank one is no route.)
func requiredID(field, id string) error {
	if strings.TrimSpace(id) == "" {
		p := graph.Problems{}
		p.Add(field, "is required")
		return p.Err()
	}
	return nil
}

// appointmentID checks an appointment id argument: one that could name no
// appointment is not found, without asking the database, as REST's path.
func appointmentID(id string) error {
	if err := requiredID("appointment_id", id); err != nil {
		return err
	}
	if !graph.PlausibleID(id) {
		return graph.Errorf(graph.CodeAppointmentNotFound, "No appointment %q.", id)
	}
	return nil
}

func (m *MCP) context(ctx context.Context, _ *noArgs) (rest.Context, string, error) {
	c, err := m.q.Context(ctx)
	if err != nil {
		return rest.Context{}, "", err
	}
	v := rest.ContextOf(c)
	return v, fmt.Sprintf("API key %q (%s) of account %q, scopes %s; server time %s.",
		v.APIKey.Name, v.APIKey.Prefix, v.Account.Name, strings.Join(v.APIKey.Scopes, ", "), v.ServerTime), nil
}

func (m *MCP) units(ctx context.Context, _ *noArgs) (rest.List[rest.Unit], string, error) {
	us, err := m.q.BookableUnits(ctx, &wholeCatalog)
	if err != nil {
		return rest.List[rest.Unit]{}, "", err
	}
	v := rest.ListOf(us, rest.UnitOf)
	return v, count(len(v.Data), "unit", v.Data, func(u rest.Unit) string {
		return fmt.Sprintf("%s (%s, %s)", u.Name, u.Timezone, u.ID)
	}), nil
}

func (m *MCP) services(ctx context.Context, in *servicesArgs) (rest.List[rest.Service], string, error) {
	ss, err := m.q.BookableServices(ctx, in.UnitID, &wholeCatalog)
	if err != nil {
		return rest.List[rest.Service]{}, "", err
	}
	v := rest.ListOf(ss, rest.ServiceOf)
	return v, count(len(v.Data), "service", v.Data, func(s rest.Service) string {
		return fmt.Sprintf("%s, %d min (%s)", s.Name, s.DurationMinutes, s.ID)
	}), nil
}

func (m *MCP) barbers(ctx context.Context, in *barbersArgs) (rest.List[rest.Barber], string, error) {
	bs, err := m.q.BookableBarbers(ctx, in.UnitID, in.ServiceID, &wholeCatalog)
	if err != nil {
		return rest.List[rest.Barber]{}, "", err
	}
	v := rest.ListOf(bs, rest.BarberOf)
	return v, count(len(v.Data), "barber", v.Data, func(b rest.Barber) string {
		return fmt.Sprintf("%s (%s)", b.Name, b.ID)
	}), nil
}

// MaxAnswerBytes bounds the answer of get_availability: plenty for a
// model, and 16 such calls at once stay within a few tens of MB.
const MaxAnswerBytes = 1 << 20

// slotBytes bounds what one slot takes in a tool answer: its JSON in the
// structured content, and again, escaped, in the text content.
const slotBytes = 400

// maxAnswerSlots is the slot budget of get_availability (graph.WithSlotBudget):
// a request that could list more is refused before it runs, naming what
// to narrow (fewer days, one barber).
const maxAnswerSlots = MaxAnswerBytes / slotBytes

func (m *MCP) availability(ctx context.Context, in *availabilityArgs) (rest.AvailabilityRange, string, error) {
	ctx = graph.WithSlotBudget(ctx, maxAnswerSlots)
	var days []*graph.Day
	var err error
	var from, to string
	switch {
	case in.Date != nil && (in.From != nil || in.To != nil):
		var p graph.Problems
		p.Add("date", "give either date, or from and to, not both")
		err = p.Err()
	case in.Date != nil:
		var day *graph.Day
		day, err = m.res.AvailabilityDay(ctx, in.UnitID, in.ServiceID, in.BarberID, *in.Date)
		days, from, to = []*graph.Day{day}, *in.Date, *in.Date
	case in.From == nil && in.To == nil:
		var p graph.Problems
		p.Add("date", "give a date, or from and to (a range of up to %d days)", graph.MaxRangeDays)
		err = p.Err()
	default:
		from, to = deref(in.From), deref(in.To)
		days, err = m.res.AvailabilityRange(ctx, in.UnitID, in.ServiceID, in.BarberID, from, to)
	}
	if err != nil {
		return rest.AvailabilityRange{}, "", err
	}
	v := rest.AvailabilityRange{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID,
		Timezone: days[0].Timezone(), From: from, To: to, Days: make([]rest.AvailabilityDay, len(days)),
	}
	var all []rest.Slot
	for i, d := range days {
		a := rest.AvailabilityOf(d.Availability(in.BarberID))
		v.Days[i] = rest.AvailabilityDay{Date: a.Date, Slots: a.Slots, Reason: a.Reason}
		all = append(all, a.Slots...)
	}
	if len(all) > maxAnswerSlots { // the budget bounds them by the hours; a daylight saving change adds an hour
		field := "to"
		if from == to {
			field = "barber_id"
		}
		var p graph.Problems
		p.Add(field, "must be narrower: the answer would list %d slots, more than %d", len(all), maxAnswerSlots)
		return rest.AvailabilityRange{}, "", p.Err()
	}
	when := "on " + from
	if from != to {
		when = "from " + from + " to " + to
	}
	if len(all) == 0 {
		text := fmt.Sprintf("No free times %s (%s).", when, v.Timezone)
		if len(days) == 1 && v.Days[0].Reason != nil {
			text = fmt.Sprintf("No free times %s (%s): %s.", when, v.Timezone, *v.Days[0].Reason)
		}
		return v, text, nil
	}
	return v, fmt.Sprintf("%d free times %s (%s): %s.", len(all), when, v.Timezone, slotTimes(all, 5)), nil
}

func (m *MCP) next(ctx context.Context, in *nextArgs) (rest.NextSlots, string, error) {
	n, err := m.res.NextFreeSlots(ctx, graph.NextSlotsQuery{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID,
		After: in.After, Limit: in.Limit, TimeFrom: in.TimeFrom, TimeTo: in.TimeTo, Weekdays: in.Weekdays,
	})
	if err != nil {
		return rest.NextSlots{}, "", err
	}
	v := rest.NextSlotsOf(n)
	if len(v.Slots) == 0 {
		return v, fmt.Sprintf("Nothing free through the booking horizon (%s).", v.Timezone), nil
	}
	return v, fmt.Sprintf("Next free times (%s): %s.", v.Timezone, slotTimes(v.Slots, len(v.Slots))), nil
}

func (m *MCP) hold(ctx context.Context, in *holdArgs) (rest.Hold, string, error) {
	h, err := m.m.HoldSlot(ctx, model.HoldSlotInput{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID, StartsAt: in.StartsAt, TTLSeconds: in.TTLSeconds,
	})
	if err != nil {
		return rest.Hold{}, "", err
	}
	v, err := rest.HoldOf(h)
	return v, fmt.Sprintf("Held %s (%s) with barber %s until %s: hold %s. Book it with book_appointment and this hold_id.",
		wall(v.StartsAt), v.Timezone, v.BarberID, v.ExpiresAt, v.HoldID), err
}

func (m *MCP) release(ctx context.Context, in *holdIDArgs) (rest.Hold, string, error) {
	if err := requiredID("hold_id", in.HoldID); err != nil {
		return rest.Hold{}, "", err
	}
	h, err := m.m.ReleaseHold(ctx, in.HoldID)
	if err != nil {
		return rest.Hold{}, "", err
	}
	v, err := rest.HoldOf(h)
	return v, fmt.Sprintf("Hold %s is %s: %s (%s) is free again.", v.HoldID, v.Status, wall(v.StartsAt), v.Timezone), err
}

func (m *MCP) book(ctx context.Context, in *bookArgs) (booked, string, error) {
	p, err := m.m.CreateAppointment(ctx, model.CreateAppointmentInput{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID, HoldID: in.HoldID,
		StartsAt: in.StartsAt, ExternalReference: in.ExternalReference,
		Client: &model.ClientInput{Name: in.Client.Name, Phone: in.Client.Phone, Email: in.Client.Email},
	})
	if err != nil {
		return booked{}, "", err
	}
	v, err := view.AppointmentOf(p.Appointment)
	if err != nil {
		return booked{}, "", err
	}
	text := "Booked " + describe(v) + "."
	if p.Replayed {
		text = "Already booked with this external_reference, nothing new was made: " + describe(v) + ", " + v.Status + "."
	}
	return booked{Appointment: v, Replayed: p.Replayed}, text, nil
}

func (m *MCP) appointment(ctx context.Context, in *appointmentArgs) (view.Appointment, string, error) {
	if err := appointmentID(in.AppointmentID); err != nil {
		return view.Appointment{}, "", err
	}
	return appointmentAnswer(m.q.Appointment(ctx, in.AppointmentID))(func(v view.Appointment) string {
		return fmt.Sprintf("Appointment %s is %s: %s.", v.ID, v.Status, describe(v))
	})
}

func (m *MCP) lookup(ctx context.Context, in *lookupArgs) (rest.List[view.Appointment], string, error) {
	var status []appointment.Status
	if in.Status != nil {
		status = make([]appointment.Status, len(in.Status))
		for i, s := range in.Status {
			status[i] = appointment.Status(s)
		}
	}
	as, err := m.q.AppointmentsByClient(ctx, in.ClientPhone, in.ExternalReference, status, in.From, in.To, in.Limit)
	if err != nil {
		return rest.List[view.Appointment]{}, "", err
	}
	views, err := view.AppointmentsOf(as)
	if err != nil {
		return rest.List[view.Appointment]{}, "", err
	}
	out := rest.List[view.Appointment]{Data: views}
	return out, count(len(out.Data), "appointment", out.Data, func(v view.Appointment) string {
		return v.Status + " " + describe(v)
	}), nil
}

func (m *MCP) cancel(ctx context.Context, in *cancelArgs) (view.Appointment, string, error) {
	if err := appointmentID(in.AppointmentID); err != nil {
		return view.Appointment{}, "", err
	}
	return appointmentAnswer(m.m.CancelAppointment(ctx, in.AppointmentID, in.Reason))(func(v view.Appointment) string {
		return "Cancelled " + describe(v) + "."
	})
}

func (m *MCP) reschedule(ctx context.Context, in *rescheduleArgs) (view.Appointment, string, error) {
	if err := appointmentID(in.AppointmentID); err != nil {
		return view.Appointment{}, "", err
	}
	a, err := m.m.RescheduleAppointment(ctx, in.AppointmentID, model.RescheduleAppointmentInput{
		StartsAt: in.StartsAt, BarberID: in.BarberID, HoldID: in.HoldID,
	})
	return appointmentAnswer(a, err)(func(v view.Appointment) string { return "Moved: " + describe(v) + "." })
}

func (m *MCP) pending(ctx context.Context, in *pendingArgs) (rest.List[view.Notification], string, error) {
	ns, err := m.q.PendingNotifications(ctx, in.Limit)
	if err != nil {
		return rest.List[view.Notification]{}, "", err
	}
	v := rest.ListOf(ns, view.NotificationOf)
	if len(v.Data) == 0 {
		return v, "No pending notifications.", nil
	}
	last := v.Data[len(v.Data)-1].ID
	return v, fmt.Sprintf("%s, oldest first; still pending: once handled, acknowledge them with ack_notifications through %s.",
		count(len(v.Data), "notification", v.Data, func(n view.Notification) string { return n.Type + " " + n.AppointmentID }), last), nil
}

func (m *MCP) ack(ctx context.Context, in *ackArgs) (acknowledged, string, error) {
	a, err := m.m.AckNotifications(ctx, in.Through)
	if err != nil {
		return acknowledged{}, "", err
	}
	return acknowledged{a.Acknowledged}, fmt.Sprintf("Acknowledged %d notifications.", a.Acknowledged), nil
}

// appointmentAnswer renders an appointment a resolver returned, or passes
// its error on, with a summary line made by text.
func appointmentAnswer(a *ent.Appointment, err error) func(text func(view.Appointment) string) (view.Appointment, string, error) {
	return func(text func(view.Appointment) string) (view.Appointment, string, error) {
		if err != nil {
			return view.Appointment{}, "", err
		}
		v, err := view.AppointmentOf(a)
		if err != nil {
			return view.Appointment{}, "", err
		}
		return v, text(v), nil
	}
}

// describe is an appointment for people: "Haircut with João Silva on
// 2027-03-02 10:00 (Europe/Lisbon) for Ana Costa, appointment apt_…".
func describe(v view.Appointment) string {
	return fmt.Sprintf("%s with %s on %s (%s) for %s, appointment %s",
		v.ServiceName, v.BarberName, wall(v.StartsAt), v.Timezone, v.Client.Name, v.ID)
}

// wall is a local time for people: "2027-03-02 10:00".
func wall(local string) string {
	return strings.Replace(strings.TrimSuffix(local, ":00"), "T", " ", 1)
}

// slotTimes lists the first n slots' times for people.
func slotTimes(ss []rest.Slot, n int) string {
	var b strings.Builder
	for i, s := range ss[:min(n, len(ss))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(wall(s.StartsAt) + " with " + s.BarberID)
	}
	if len(ss) > n {
		b.WriteString(", ...")
	}
	return b.String()
}

// count is "3 units: a; b; c" for people, naming the first ten.
func count[T any](n int, noun string, items []T, name func(T) string) string {
	if n == 0 {
		return "No " + noun + "s."
	}
	if n != 1 {
		noun += "s"
	}
	names := make([]string, 0, min(n, 10))
	for _, it := range items[:min(n, 10)] {
		names = append(names, name(it))
	}
	more := ""
	if n > 10 {
		more = "; ..."
	}
	return fmt.Sprintf("%d %s: %s%s.", n, noun, strings.Join(names, "; "), more)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
