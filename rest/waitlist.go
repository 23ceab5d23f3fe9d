package rest

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"barberd/ent"
	"barberd/ent/waitlistentry"
	"barberd/graph/model"
	"barberd/graph/waitlist"
	"barberd/rest/view"
)

// The waitlist (rest-v1.md, "Additions: waitlist"; docs/waitlist.md): a
// client waits for a time that is not free yet, and is offered one when it
// frees up. graph/waitlist*.go holds the rules and the offers.

// respondWaitlistEntry renders an entry, or an error.
func respondWaitlistEntry(w http.ResponseWriter, r *http.Request, status int, e *ent.WaitlistEntry, err error) {
	if err == nil {
		var v view.WaitlistEntry
		if v, err = view.WaitlistEntryOf(e); err == nil {
			writeJSON(w, status, v)
			return
		}
	}
	WriteError(w, r, err)
}

// joinWaitlist answers POST /waitlist: 201 with the new entry, or 200 with
// the first one when its external_reference was used by the key before.
func (a *api) joinWaitlist(w http.ResponseWriter, r *http.Request) {
	f, err := decodeBody(w, r, false)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	c := f.object("client")
	in := model.JoinWaitlistInput{
		UnitID: f.text("unit_id"), ServiceID: f.text("service_id"), BarberID: f.str("barber_id"),
		From: f.text("from"), To: f.text("to"), TimeFrom: f.str("time_from"), TimeTo: f.str("time_to"),
		Weekdays: f.integers("weekdays"), ExternalReference: f.str("external_reference"),
		OfferHoldSeconds: f.integer("offer_hold_seconds"),
		Client:           clientInput(c),
	}
	if err := f.check(waitlist.CheckJoin(in)); err != nil {
		WriteError(w, r, err)
		return
	}
	p, err := a.m.JoinWaitlist(r.Context(), in)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	respondWaitlistEntry(w, r, createdStatus(w, p.Replayed), p.Entry, nil)
}

func (a *api) waitlistEntry(w http.ResponseWriter, r *http.Request) {
	e, err := a.q.WaitlistEntry(r.Context(), chi.URLParam(r, "id"))
	respondWaitlistEntry(w, r, http.StatusOK, e, err)
}

// leaveWaitlist answers DELETE /waitlist/{id}: the entry, cancelled (or as
// it was, when it had ended).
func (a *api) leaveWaitlist(w http.ResponseWriter, r *http.Request) {
	e, err := a.m.LeaveWaitlist(r.Context(), chi.URLParam(r, "id"))
	respondWaitlistEntry(w, r, http.StatusOK, e, err)
}

// clientWaitlist answers GET /waitlist?client_phone=...&status=...: a
// client's entries, joined by any key of the account.
func (a *api) clientWaitlist(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	phone := f.text("client_phone")
	status := statuses[waitlistentry.Status](f.str("status"))
	if err := f.check(waitlist.CheckClient(phone, status)); err != nil {
		WriteError(w, r, err)
		return
	}
	es, err := a.q.ClientWaitlist(r.Context(), phone, status)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	views, err := view.WaitlistEntriesOf(es)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, List[view.WaitlistEntry]{Data: views})
}
