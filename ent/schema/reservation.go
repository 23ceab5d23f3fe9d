package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"barberd/ent/schema/pulid"
)

// Reservation is the span of a barber's time that an active hold or a
// confirmed appointment blocks, buffer included. Holds and appointments share
// this one table so that the database itself forbids any two of them to
// overlap (an exclusion constraint on PostgreSQL, a trigger on SQLite).
// A row exists only while it blocks; an expired hold's row is removed by the
// next writer for that barber, and until then it is ignored by readers
// through expires_at.
type Reservation struct{ ent.Schema }

// Mixin of the Reservation.
func (Reservation) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("rsv"), TenantMixin{}}
}

// Fields of the Reservation.
func (Reservation) Fields() []ent.Field {
	return []ent.Field{
		field.String("barber_id"),
		field.Time("starts_at"),
		field.Time("ends_at"),
		// expires_at is set for holds: past it the row no longer blocks.
		field.Time("expires_at").Optional().Nillable(),
		field.String("hold_id").Optional().Nillable().Immutable(),
		field.String("appointment_id").Optional().Nillable().Immutable(),
	}
}

// Edges of the Reservation.
func (Reservation) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("barber", Barber.Type).Field("barber_id").Unique().Required(),
		edge.To("hold", Hold.Type).Field("hold_id").Unique().Immutable(),
		edge.To("appointment", Appointment.Type).Field("appointment_id").Unique().Immutable(),
	}
}

// Indexes of the Reservation.
func (Reservation) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("barber_id", "starts_at"),
		// A writer deletes its barber's expired holds first (see
		// store.DeleteExpiredReservations): by this index it reads the
		// barber's holds that have expired, not every reservation the
		// barber has. Appointments' rows (no expiry) are not in it.
		index.Fields("barber_id", "expires_at").
			Annotations(entsql.IndexWhere("expires_at IS NOT NULL")),
		index.Fields("hold_id").Unique(),
		index.Fields("appointment_id").Unique(),
	}
}

// Annotations of the Reservation.
func (Reservation) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
