package rest

import (
	"net/http"
	"strings"

	"barberd/ent/appointment"
	"barberd/graph"
	"barberd/rest/view"
)

// clientAppointments answers GET /appointments: a client's appointments by
// client_phone, or the key's own by external_reference (graph.ClientLookup
// holds the rules).
func (a *api) clientAppointments(w http.ResponseWriter, r *http.Request) {
	f := queryFields(r)
	l := graph.ClientLookup{
		ClientPhone: f.str("client_phone"), ExternalReference: f.str("external_reference"),
		From: f.str("from"), To: f.str("to"), Limit: f.integer("limit"),
	}
	if s := f.str("status"); s != nil {
		l.Status = []appointment.Status{} // given, if empty: the check names it
		for _, name := range strings.Split(*s, ",") {
			if name = strings.TrimSpace(name); name != "" {
				l.Status = append(l.Status, appointment.Status(name))
			}
		}
	}
	if err := f.check(graph.CheckClientLookup(l)); err != nil {
		WriteError(w, r, err)
		return
	}
	as, err := a.q.AppointmentsByClient(r.Context(), l.ClientPhone, l.ExternalReference, l.Status, l.From, l.To, l.Limit)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	views, err := view.AppointmentsOf(as)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, List[view.Appointment]{Data: views})
}
