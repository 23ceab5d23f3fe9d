package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"barberd/ent/schema/pulid"
)

// Appointment is a client's booking of a service with a barber at a unit.
type Appointment struct{ ent.Schema }

// Mixin of the Appointment.
func (Appointment) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("apt"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Appointment.
func (Appointment) Fields() []ent.Field {
	return []ent.Field{
		field.String("unit_id").Immutable(),
		field.String("service_id").Immutable(),
		field.String("barber_id"),
		// customer_id links the account's customer record of the phone; the
		// client_ fields are the client as given when the appointment was
		// booked. Reading the appointment shows those: later bookings with
		// the same phone update the customer record, never this one.
		field.String("customer_id").Immutable(),
		field.String("client_name").NotEmpty().MaxRuneLen(200).Immutable().
			Comment("The client's name as given when the appointment was booked."),
		field.String("client_phone").NotEmpty().MaxLen(16).Immutable().
			Comment("The client's phone (E.164) as given when the appointment was booked."),
		field.String("client_email").Optional().Nillable().MaxLen(254).Immutable().
			Comment("The client's e-mail as given when the appointment was booked, if one was."),
		// api_key_id is the key that created the appointment; external_reference
		// is unique per key, which makes creates idempotent.
		field.String("api_key_id").Immutable().
			Annotations(entgql.Skip()),
		field.String("hold_id").Optional().Nillable(),
		field.String("external_reference").Optional().Nillable().MaxRuneLen(255).Immutable(),
		field.Enum("status").Values("confirmed", "cancelled", "completed", "no_show").Default("confirmed").
			Annotations(entgql.OrderField("STATUS")),
		field.Time("starts_at").
			Annotations(entgql.OrderField("STARTS_AT")),
		field.Time("ends_at"),
		field.Enum("source").Values("api", "admin").Default("api").Immutable(),
		field.Time("cancelled_at").Optional().Nillable(),
		field.String("cancellation_reason").Optional().Nillable().MaxRuneLen(500),
		// reminded_at is when the reminder notification was written, so each
		// appointment is reminded exactly once.
		field.Time("reminded_at").Optional().Nillable(),
		// version grows with every change, for optimistic concurrency in dashboards.
		field.Int("version").Default(1),
	}
}

// Edges of the Appointment.
func (Appointment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("unit", Unit.Type).Field("unit_id").Unique().Required().Immutable(),
		edge.To("service", Service.Type).Field("service_id").Unique().Required().Immutable(),
		edge.To("barber", Barber.Type).Field("barber_id").Unique().Required(),
		edge.To("customer", Customer.Type).Field("customer_id").Unique().Required().Immutable().
			Comment("The account's customer record of the client's phone, which later bookings with that phone update. Scope admin."),
		edge.To("api_key", APIKey.Type).Field("api_key_id").Unique().Required().Immutable().
			Annotations(entgql.Skip()),
		edge.To("hold", Hold.Type).Field("hold_id").Unique(),
	}
}

// Indexes of the Appointment.
func (Appointment) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("api_key_id", "external_reference").Unique(),
		index.Fields("barber_id", "starts_at"),
		index.Fields("account_id", "starts_at"),
		// A client's appointments by phone (appointmentsByClient), in start
		// order, without reading the rest of the account's.
		index.Fields("account_id", "client_phone", "starts_at"),
		index.Fields("status", "starts_at"),
		// Pruning a hold sets its appointment's hold_id to NULL (the
		// foreign key's ON DELETE SET NULL), found through this index.
		index.Fields("hold_id"),
	}
}

// Annotations of the Appointment.
func (Appointment) Annotations() []schema.Annotation { return relay() }
