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
	l.Status = statuses[appointment.Status](f.str("status"))
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

// statuses reads a comma-separated status parameter: nil when absent,
// and not nil when given (an empty one is for the check to name).
func statuses[S ~string](v *string) []S {
	if v == nil {
		return nil
	}
	out := []S{}
	for _, name := range strings.Split(*v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, S(name))
		}
	}
	return out
}
