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

// Notification is an account event (an appointment created, cancelled,
// rescheduled, ...), written in the same transaction as the change it tells
// of, or an offer to one key's waitlist entry (slot.available). Rows are
// never changed.
type Notification struct{ ent.Schema }

// Mixin of the Notification.
func (Notification) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("ntf"), TenantMixin{}}
}

// Fields of the Notification.
func (Notification) Fields() []ent.Field {
	return []ent.Field{
		field.String("type").Immutable(),
		field.String("appointment_id").Optional().Nillable().Immutable(),
		field.Enum("source").Values("api", "admin").Immutable(),
		// appointment is the appointment as it was right after the change, in
		// the REST v1 form (nil for slot.available).
		field.JSON("appointment", map[string]any{}).Optional().Immutable().
			Annotations(entgql.Type("Map")),
		// api_key_id, when set, is the only key whose feed gets it (the key
		// of the waitlist entry offered a slot).
		field.String("api_key_id").Optional().Nillable().Immutable().
			Annotations(entgql.Skip()),
		// offer is what a slot.available tells, in the REST v1 form:
		// waitlist_entry, slot and hold.
		field.JSON("offer", map[string]any{}).Optional().Immutable().
			Annotations(entgql.Type("Map")),
		field.Time("previous_starts_at").Optional().Nillable().Immutable(),
		field.Time("created_at").Default(Now).Immutable(),
	}
}

// Edges of the Notification.
func (Notification) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("subject", Appointment.Type).Field("appointment_id").Unique().Immutable(),
	}
}

// Indexes of the Notification.
func (Notification) Indexes() []ent.Index {
	return []ent.Index{index.Fields("account_id", "created_at")}
}

// Annotations of the Notification.
func (Notification) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)}
}

// Delivery is one notification still owed to, or already taken by, one API
// key. Writing a row per key with notifications:read when the event happens
// gives every key each event exactly once, whatever order concurrent
// transactions commit in (a single cursor over ids could skip an event
// committed late with an earlier id).
type Delivery struct{ ent.Schema }

// Mixin of the Delivery.
func (Delivery) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("dlv"), TenantMixin{}}
}

// Fields of the Delivery.
func (Delivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("api_key_id").Immutable(),
		field.String("notification_id").Immutable(),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

// Edges of the Delivery.
func (Delivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("api_key", APIKey.Type).Field("api_key_id").Unique().Required().Immutable(),
		edge.To("notification", Notification.Type).Field("notification_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Delivery.
func (Delivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("api_key_id", "notification_id").Unique(),
		index.Fields("api_key_id", "notification_id").
			StorageKey("delivery_pending").
			Annotations(entsql.IndexWhere("delivered_at IS NULL")),
		// Pruning a notification deletes its rows here, and the foreign
		// key is checked, through this index (graph/retention.go).
		index.Fields("notification_id"),
	}
}

// Annotations of the Delivery.
func (Delivery) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
