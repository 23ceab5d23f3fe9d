package graph

import (
	"barberd/graph/catalog"
	"context"
	"strings"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/appointment"
	"barberd/ent/notification"
	"barberd/graph/slots"
)

// writeScope is the scope a change to an appointment needs: the shop's own
// changes (source admin) need admin, a chatbot's appointments:write.
func writeScope(source appointment.Source) string {
	if source == appointment.SourceAdmin {
		return domain.ScopeAdmin
	}
	return domain.ScopeAppointmentsWrite
}

// markAppointment records how a confirmed appointment that has started
// ended (completed or no_show), frees the rest of its time and tells the
// account, with source admin, in the same transaction. Marking it with the
// status it already has changes nothing and tells nobody again.
// Errors: appointment_not_found, appointment_not_markable.
func (r *Resolver) markAppointment(ctx context.Context, id string, status appointment.Status) (*ent.Appointment, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	label := strings.ReplaceAll(string(status), "_", "-")
	now := r.now()
	err = r.inTx(ctx, func(tx *ent.Tx) error {
		ctx, q := r.lockedAppointment(ctx, tx, v, id)
		a, err := q.WithUnit().Only(ctx)
		if err != nil {
			return domain.NotFound(err, domain.CodeAppointmentNotFound, "appointment", id)
		}
		switch {
		case a.Status == status:
			return nil
		case a.Status != appointment.StatusConfirmed:
			return domain.Errorf(domain.CodeNotMarkable, "Only a confirmed appointment can be marked %s; this one is %s.", label, strings.ReplaceAll(string(a.Status), "_", "-"))
		case a.StartsAt.After(now):
			loc, err := catalog.MustZone(a.Edges.Unit.Timezone)
			if err != nil {
				return err
			}
			return domain.Errorf(domain.CodeNotMarkable, "The appointment starts at %s; it can be marked %s once it has started.", slots.Local(a.StartsAt, loc), label)
		}
		_, err = r.endAppointment(ctx, tx, a, status, "", now, notification.SourceAdmin)
		return err
	})
	if err != nil {
		return nil, err
	}
	a, err := r.loadAppointment(ctx, r.cfg.DB.Client, id)
	return a, err
}
