package domain

import (
	"strings"
	"unicode/utf8"

	"barberd/graph/model"
	"barberd/graph/store"
)

// CheckClient checks a client as a booking or a waitlist entry gives it.
func CheckClient(p *Problems, c *model.ClientInput) {
	if c == nil {
		c = &model.ClientInput{}
	}
	if Required(p, "client.name", c.Name) {
		CheckLength(p, "client.name", c.Name, 1, 200)
	}
	if Required(p, "client.phone", c.Phone) {
		CheckPhone(p, "client.phone", c.Phone)
	}
	if c.Email != nil && CheckText(p, "client.email", *c.Email) && *c.Email != "" && !ValidEmail(*c.Email) {
		p.Add("client.email", "must be a valid e-mail address")
	}
}

// CheckReference records external_reference when ref is not one a create
// may store.
func CheckReference(p *Problems, ref string) {
	// Stored as given, so its untrimmed length counts.
	if CheckText(p, "external_reference", ref) && (strings.TrimSpace(ref) == "" || utf8.RuneCountInString(ref) > 255) {
		p.Add("external_reference", "must be 1 to 255 characters")
	}
}

// LookupPhone reads a client_phone as booked: a query string's unencoded
// "+" arrives as a space.
func LookupPhone(s string) string {
	if rest, ok := strings.CutPrefix(s, " "); ok {
		return "+" + rest
	}
	return s
}

// CustomerOf is the account's customer record of a client as given.
func CustomerOf(accountID string, c ClientRecord) store.Customer {
	return store.Customer{AccountID: accountID, Name: c.Name, Phone: c.Phone, Email: c.Email}
}

// ClientRecord is a client as a create gives it: what the appointment
// records, and what the account's customer record of the phone takes.
type ClientRecord struct {
	Name, Phone string
	Email       *string // nil when not given
}

// RecordOf is the record of a client as given: the name trimmed, an empty
// e-mail none.
func RecordOf(c *model.ClientInput) ClientRecord {
	out := ClientRecord{Name: strings.TrimSpace(c.Name), Phone: c.Phone}
	if c.Email != nil && *c.Email != "" {
		out.Email = c.Email
	}
	return out
}
