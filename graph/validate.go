package graph

import (
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"barberd/ent/appointment"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/text"
)

// Input checks shared by GraphQL and REST. Field names are those of the
// REST v1 interface, so a client of either learns which field to fix.

// e164 is a phone number in E.164: "+" then 8 to 15 digits, the first not 0.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

const wallTimeForm = "must be a local time in the form YYYY-MM-DDTHH:MM:SS, without offset or Z"

// checkText records field when v is not storable text.
func checkText(p *Problems, field, v string) bool {
	if msg := text.Problem(v); msg != "" {
		p.Add(field, "%s", msg)
		return false
	}
	return true
}

// maxIDLen is the longest id an entity has (ent/schema/pulid).
const maxIDLen = 40

// PlausibleID reports whether id could name a stored entity: ids are
// prefixed ULIDs, made of ASCII letters, digits and "_". An id that fails
// names nothing, so a lookup can answer "not found" without asking the
// database (which would refuse some such ids with an error).
func PlausibleID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// required records field when v is blank or not storable text.
func required(p *Problems, field, v string) bool {
	if !checkText(p, field, v) {
		return false
	}
	if strings.TrimSpace(v) == "" {
		p.Add(field, "is required")
		return false
	}
	return true
}

func checkWallTime(p *Problems, field, v string) {
	if !required(p, field, v) {
		return
	}
	if _, err := slots.ParseWallTime(v); err != nil {
		p.Add(field, wallTimeForm)
	}
}

func checkLength(p *Problems, field, v string, lo, hi int) {
	if n := utf8.RuneCountInString(strings.TrimSpace(v)); n < lo || n > hi {
		p.Add(field, "must be %d to %d characters", lo, hi)
	}
}

func checkOptionalID(p *Problems, field string, v *string) {
	if v != nil && checkText(p, field, *v) && strings.TrimSpace(*v) == "" {
		p.Add(field, "must not be empty when given")
	}
}

// CheckAvailability checks an availability query.
func CheckAvailability(unitID, serviceID string, barberID *string, date string) Problems {
	_, p := checkAvailability(unitID, serviceID, barberID, date)
	return p
}

// checkAvailability is CheckAvailability, with the date read.
func checkAvailability(unitID, serviceID string, barberID *string, date string) (slots.Date, Problems) {
	var p Problems
	required(&p, "unit_id", unitID)
	required(&p, "service_id", serviceID)
	checkOptionalID(&p, "barber_id", barberID)
	d := requiredDate(&p, "date", date)
	if d == nil {
		return slots.Date{}, p
	}
	return *d, p
}

// requiredDate records field when v is blank or not a date YYYY-MM-DD; it
// returns the date, or nil.
func requiredDate(p *Problems, field, v string) *slots.Date {
	if !required(p, field, v) {
		return nil
	}
	return checkDate(p, field, &v)
}

// CheckHoldSlot checks a hold request.
func (r *Resolver) CheckHoldSlot(in model.HoldSlotInput) Problems {
	var p Problems
	required(&p, "unit_id", in.UnitID)
	required(&p, "service_id", in.ServiceID)
	checkOptionalID(&p, "barber_id", in.BarberID)
	checkWallTime(&p, "starts_at", in.StartsAt)
	if in.TTLSeconds != nil {
		lo, hi := int(r.cfg.Limits.HoldTTLMin.Seconds()), int(r.cfg.Limits.HoldTTLMax.Seconds())
		if *in.TTLSeconds < lo || *in.TTLSeconds > hi {
			p.Add("ttl_seconds", "must be between %d and %d", lo, hi)
		}
	}
	return p
}

// CheckCreateAppointment checks an appointment request.
func CheckCreateAppointment(in model.CreateAppointmentInput) Problems {
	var p Problems
	required(&p, "unit_id", in.UnitID)
	required(&p, "service_id", in.ServiceID)
	checkOptionalID(&p, "barber_id", in.BarberID)
	checkOptionalID(&p, "hold_id", in.HoldID)
	checkWallTime(&p, "starts_at", in.StartsAt)
	checkClient(&p, in.Client)
	if in.ExternalReference != nil {
		checkReference(&p, *in.ExternalReference)
	}
	return p
}

// checkClient checks a client as a booking or a waitlist entry gives it.
func checkClient(p *Problems, c *model.ClientInput) {
	if c == nil {
		c = &model.ClientInput{}
	}
	if required(p, "client.name", c.Name) {
		checkLength(p, "client.name", c.Name, 1, 200)
	}
	if required(p, "client.phone", c.Phone) {
		checkPhone(p, "client.phone", c.Phone)
	}
	if c.Email != nil && checkText(p, "client.email", *c.Email) && *c.Email != "" && !validEmail(*c.Email) {
		p.Add("client.email", "must be a valid e-mail address")
	}
}

// checkPhone records field when v is not a phone number in E.164.
func checkPhone(p *Problems, field, v string) {
	if !e164.MatchString(v) {
		p.Add(field, "must be in E.164 form: + then 8 to 15 digits, e.g. +5511987654321")
	}
}

// checkReference records external_reference when ref is not one a create
// may store.
func checkReference(p *Problems, ref string) {
	// Stored as given, so its untrimmed length counts.
	if checkText(p, "external_reference", ref) && (strings.TrimSpace(ref) == "" || utf8.RuneCountInString(ref) > 255) {
		p.Add("external_reference", "must be 1 to 255 characters")
	}
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && len(s) <= 254 && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

// CheckReschedule checks a reschedule request.
func CheckReschedule(in model.RescheduleAppointmentInput) Problems {
	var p Problems
	checkWallTime(&p, "starts_at", in.StartsAt)
	checkOptionalID(&p, "barber_id", in.BarberID)
	checkOptionalID(&p, "hold_id", in.HoldID)
	return p
}

// CheckCancel checks a cancellation reason.
func CheckCancel(reason string) Problems {
	var p Problems
	if required(&p, "reason", reason) {
		checkLength(&p, "reason", reason, 1, 500)
	}
	return p
}

// CheckCatalogFilters checks the optional unit and service of a catalog
// list.
func CheckCatalogFilters(unitID, serviceID *string) Problems {
	var p Problems
	if unitID != nil {
		checkText(&p, "unit_id", *unitID)
	}
	if serviceID != nil {
		checkText(&p, "service_id", *serviceID)
	}
	return p
}

// CheckNotificationsLimit checks the limit of a notifications request.
func (r *Resolver) CheckNotificationsLimit(limit *int) Problems {
	var p Problems
	if limit != nil && (*limit < 1 || *limit > r.cfg.Limits.NotificationsMax) {
		p.Add("limit", "must be between 1 and %d", r.cfg.Limits.NotificationsMax)
	}
	return p
}

// CheckAck checks a notifications acknowledgement.
func CheckAck(through string) Problems {
	var p Problems
	required(&p, "through", through)
	return p
}

// CheckClientLookup checks a lookup of a client's appointments: exactly
// one of client_phone (E.164) and external_reference, statuses that exist,
// dates with to not before from, and a limit of 1..ClientAppointmentsMax.
func CheckClientLookup(l ClientLookup) Problems {
	var p Problems
	switch {
	case (l.ClientPhone == nil) == (l.ExternalReference == nil):
		for _, f := range []string{"client_phone", "external_reference"} {
			p.Add(f, "give exactly one of client_phone and external_reference")
		}
	case l.ClientPhone != nil:
		checkPhone(&p, "client_phone", lookupPhone(*l.ClientPhone))
	default:
		checkReference(&p, *l.ExternalReference)
	}
	if l.Status != nil {
		unknown := slices.ContainsFunc(l.Status, func(s appointment.Status) bool { return appointment.StatusValidator(s) != nil })
		if len(l.Status) == 0 || unknown {
			p.Add("status", "must list statuses among confirmed, cancelled, completed and no_show")
		}
	}
	from, to := checkDate(&p, "from", l.From), checkDate(&p, "to", l.To)
	if from != nil && to != nil && to.Compare(*from) < 0 {
		p.Add("to", "must not be before from")
	}
	if l.Limit != nil && (*l.Limit < 1 || *l.Limit > ClientAppointmentsMax) {
		p.Add("limit", "must be between 1 and %d", ClientAppointmentsMax)
	}
	return p
}

// checkDate records field when v is given and is not a date; it returns
// the date, or nil.
func checkDate(p *Problems, field string, v *string) *slots.Date {
	if v == nil {
		return nil
	}
	d, err := slots.ParseDate(*v)
	if err != nil {
		p.Add(field, "must be a day in the form YYYY-MM-DD")
		return nil
	}
	return &d
}

// Zone returns the IANA time zone with the given name.
func Zone(name string) (*time.Location, error) {
	loc, err := slots.Zone(name)
	if err != nil {
		return nil, Errorf(CodeValidationFailed, "%q is not an IANA time zone name such as Europe/Lisbon.", name)
	}
	return loc, nil
}
