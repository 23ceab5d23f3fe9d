package mcpserver

import (
	"context"
	"fmt"

	"barberd/ent/waitlistentry"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/rest"
	"barberd/rest/view"
)

// The waitlist tools (docs/waitlist.md): join, leave and find, as POST,
// DELETE and GET /waitlist answer them.

func (m *MCP) joinWaitlist(ctx context.Context, in *joinWaitlistArgs) (joined, string, error) {
	p, err := m.m.JoinWaitlist(ctx, model.JoinWaitlistInput{
		UnitID: in.UnitID, ServiceID: in.ServiceID, BarberID: in.BarberID,
		From: in.From, To: in.To, TimeFrom: in.TimeFrom, TimeTo: in.TimeTo, Weekdays: in.Weekdays,
		Client:            in.Client.input(),
		ExternalReference: in.ExternalReference, OfferHoldSeconds: in.OfferHoldSeconds,
	})
	if err != nil {
		return joined{}, "", err
	}
	v, err := view.WaitlistEntryOf(p.Entry)
	if err != nil {
		return joined{}, "", err
	}
	text := "On the waitlist: " + describeEntry(v) + ". A matching time that frees up will be offered in a slot.available notification."
	if p.Replayed {
		text = "Already joined with this external_reference, nothing new was made: " + describeEntry(v) + "."
	}
	return joined{WaitlistEntry: v, Replayed: p.Replayed}, text, nil
}

func (m *MCP) leaveWaitlist(ctx context.Context, in *waitlistEntryArgs) (view.WaitlistEntry, string, error) {
	if err := waitlistEntryID(in.WaitlistEntryID); err != nil {
		return view.WaitlistEntry{}, "", err
	}
	e, err := m.m.LeaveWaitlist(ctx, in.WaitlistEntryID)
	if err != nil {
		return view.WaitlistEntry{}, "", err
	}
	v, err := view.WaitlistEntryOf(e)
	return v, "Left the waitlist: " + describeEntry(v) + ".", err
}

func (m *MCP) clientWaitlist(ctx context.Context, in *clientWaitlistArgs) (rest.List[view.WaitlistEntry], string, error) {
	es, err := m.q.ClientWaitlist(ctx, in.ClientPhone, statuses[waitlistentry.Status](in.Status))
	if err != nil {
		return rest.List[view.WaitlistEntry]{}, "", err
	}
	views, err := view.WaitlistEntriesOf(es)
	if err != nil {
		return rest.List[view.WaitlistEntry]{}, "", err
	}
	out := rest.List[view.WaitlistEntry]{Data: views}
	return out, count(len(out.Data), "waitlist entry", out.Data, describeEntry), nil
}

// waitlistEntryID checks a waitlist entry id argument as appointmentID
// checks an appointment's.
func waitlistEntryID(id string) error {
	if err := requiredID("waitlist_entry_id", id); err != nil {
		return err
	}
	if !domain.PlausibleID(id) {
		return domain.Errorf(domain.CodeWaitlistEntryNotFound, "No waitlist entry %q.", id)
	}
	return nil
}

// describeEntry is a waitlist entry for people: "entry wl_… (offered) for
// Ana Costa, 2027-03-01 to 2027-03-05: offered 2027-03-05 17:00 with
// brb_…, hold hld_…".
func describeEntry(v view.WaitlistEntry) string {
	s := fmt.Sprintf("entry %s (%s) for %s, %s to %s (%s)", v.ID, v.Status, v.Client.Name, v.From, v.To, v.Timezone)
	if o := v.Offer; o != nil {
		s += fmt.Sprintf(": offered %s with %s", wall(o.Slot.StartsAt), o.Slot.BarberID)
		if o.HoldID != nil {
			s += ", hold " + *o.HoldID
		}
	}
	return s
}
