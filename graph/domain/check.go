package domain

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"barberd/graph/slots"
	"barberd/graph/text"
)

// Checks of input shared by every operation. Field names are those of the
// REST v1 interface, so a client of either protocol learns which field to fix.

// E164 is a phone number in E.164: "+" then 8 to 15 digits, the first not 0.
var E164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// WallTimeForm is the message of a field that is not a local wall time.
const WallTimeForm = "must be a local time in the form YYYY-MM-DDTHH:MM:SS, without offset or Z"

// CheckText records field when v is not storable text.
func CheckText(p *Problems, field, v string) bool {
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

// Required records field when v is blank or not storable text.
func Required(p *Problems, field, v string) bool {
	if !CheckText(p, field, v) {
		return false
	}
	if strings.TrimSpace(v) == "" {
		p.Add(field, "is required")
		return false
	}
	return true
}

// CheckWallTime records field when v is blank or not a local wall time.
func CheckWallTime(p *Problems, field, v string) {
	if !Required(p, field, v) {
		return
	}
	if _, err := slots.ParseWallTime(v); err != nil {
		p.Add(field, WallTimeForm)
	}
}

// CheckLength records field when v, trimmed, is not lo to hi characters.
func CheckLength(p *Problems, field, v string, lo, hi int) {
	if n := utf8.RuneCountInString(strings.TrimSpace(v)); n < lo || n > hi {
		p.Add(field, "must be %d to %d characters", lo, hi)
	}
}

// CheckOptionalID records field when v is given but blank or not storable
// text.
func CheckOptionalID(p *Problems, field string, v *string) {
	if v != nil && CheckText(p, field, *v) && strings.TrimSpace(*v) == "" {
		p.Add(field, "must not be empty when given")
	}
}

// RequiredDate records field when v is blank or not a date YYYY-MM-DD; it
// returns the date, or nil.
func RequiredDate(p *Problems, field, v string) *slots.Date {
	if !Required(p, field, v) {
		return nil
	}
	return CheckDate(p, field, &v)
}

// CheckPhone records field when v is not a phone number in E.164.
func CheckPhone(p *Problems, field, v string) {
	if !E164.MatchString(v) {
		p.Add(field, "must be in E.164 form: + then 8 to 15 digits, e.g. +5511987654321")
	}
}

// ValidEmail reports whether s is a bare e-mail address with a dotted
// domain.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && len(s) <= 254 && strings.Contains(s[strings.LastIndex(s, "@"):], ".")
}

// CheckDate records field when v is given and is not a date; it returns
// the date, or nil.
func CheckDate(p *Problems, field string, v *string) *slots.Date {
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

// MaxHorizonDays is the most days ahead a unit may take bookings
// (horizonDays).
const MaxHorizonDays = 730
