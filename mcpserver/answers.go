package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/quota"
	"barberd/rest"
	"barberd/rest/view"
)

// The tools' answers: each calls the resolvers as the REST endpoint it
// names does and answers in its v1 form, with a line of text for people.

// requiredID refuses a blank id argument, naming it. (REST takes ids in
// the path, where a blank one is no route.)
func requiredID(field, id string) error {
	if strings.TrimSpace(id) == "" {
		p := domain.Problems{}
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
	if !domain.PlausibleID(id) {
		return domain.Errorf(domain.CodeAppointmentNotFound, "No appointment %q.", id)
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

// maxAnswerSlots is the slot budget of get_availability (quota.WithSlots):
// a request that could list more is refused before it runs, naming what
// to narrow (fewer days, one barber).
const maxAnswerSlots = MaxAnswerBytes / slotBytes

func (m *MCP) availability(ctx context.Context, in *availabilityArgs) (rest.AvailabilityRange, string, error) {
	ctx = quota.WithSlots(ctx, maxAnswerSlots)
	var days []*graph.Day
	var err error
	var from, to string
	switch {
	case in.Date != nil && (in.From != nil || in.To != nil):
		var p domain.Problems
		p.Add("date", "give either date, or from and to, not both")
		err = p.Err()
	case in.Date != nil:
		var day *graph.Day
		day, err = m.res.AvailabilityDay(ctx, in.UnitID, in.ServiceID, in.BarberID, *in.Date)
		days, from, to = []*graph.Day{day}, *in.Date, *in.Date
	case in.From == nil && in.To == nil:
		var p domain.Problems
		p.Add("date", "give a date, or from and to (a range of up to %d days)", domain.MaxRangeDays)
		err = p.Err()
	default:
		if in.From != nil {
			from = *in.From
		}
		if in.To != nil {
			to = *in.To
		}
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
		var p domain.Problems
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
	n, err := m.res.NextFreeSlots(ctx, domain.NextSlotsQuery{
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

func (m *MCP) releaseAll(ctx context.Context, _ *noArgs) (rest.ReleasedHolds, string, error) {
	p, err := m.m.ReleaseAllHolds(ctx)
	if err != nil {
		return rest.ReleasedHolds{}, "", err
	}
	return rest.ReleasedHolds{Released: p.Released}, fmt.Sprintf("Released %d active holds of this API key.", p.Released), nil
}

func (m *MCP) book(ctx context.Context, in *bookArgs) (booked, string, error) {
	p, err := m.m.CreateAppointment(ctx, model.CreateAppointmentInput{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID, HoldID: in.HoldID,
		StartsAt: in.StartsAt, ExternalReference: in.ExternalReference,
		Client: in.Client.input(),
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
	as, err := m.q.AppointmentsByClient(ctx, in.ClientPhone, in.ExternalReference, statuses[appointment.Status](in.Status), in.From, in.To, in.Limit)
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
		count(len(v.Data), "notification", v.Data, notificationSubject), last), nil
}

// notificationSubject names a notification in a summary: its type and the
// appointment or waitlist entry it is about.
func notificationSubject(n view.Notification) string {
	if n.AppointmentID != nil {
		return n.Type + " " + *n.AppointmentID
	}
	if e, ok := n.WaitlistEntry.(map[string]any); ok {
		if id, ok := e["id"].(string); ok {
			return n.Type + " " + id
		}
	}
	return n.Type
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

// statuses converts a status argument, keeping nil (all) apart from empty
// (which the resolver refuses).
func statuses[S ~string](ss []string) []S {
	if ss == nil {
		return nil
	}
	out := make([]S, len(ss))
	for i, s := range ss {
		out[i] = S(s)
	}
	return out
}
