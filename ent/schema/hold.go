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

// Hold keeps a slot for a few minutes while a chatbot confirms with its
// customer. While active it blocks the barber exactly like an appointment.
type Hold struct{ ent.Schema }

// Mixin of the Hold.
func (Hold) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("hld"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Hold.
func (Hold) Fields() []ent.Field {
	return []ent.Field{
		field.String("api_key_id").Immutable(),
		field.String("unit_id").Immutable(),
		field.String("service_id").Immutable(),
		field.String("barber_id").Immutable(),
		field.Time("starts_at").Immutable().Annotations(entgql.OrderField("STARTS_AT")),
		field.Time("ends_at").Immutable(),
		field.Enum("status").Values("active", "consumed", "expired", "released").Default("active"),
		field.Time("expires_at").Immutable(),
		// waitlist_entry_id is the waitlist entry the hold was offered to:
		// booking with the hold books the entry.
		field.String("waitlist_entry_id").Optional().Nillable().Immutable(),
	}
}

// Edges of the Hold.
func (Hold) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("unit", Unit.Type).Field("unit_id").Unique().Required().Immutable(),
		edge.To("service", Service.Type).Field("service_id").Unique().Required().Immutable(),
		edge.To("barber", Barber.Type).Field("barber_id").Unique().Required().Immutable(),
		edge.To("api_key", APIKey.Type).Field("api_key_id").Unique().Required().Immutable().
			Annotations(entgql.Skip()),
	}
}

// Indexes of the Hold.
func (Hold) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("status", "expires_at"),
		index.Fields("barber_id", "starts_at"),
		// The holds cap counts one key's active holds (graph/hold.go).
		index.Fields("api_key_id", "status", "expires_at"),
	}
}

// Annotations of the Hold.
func (Hold) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput), entgql.RelayConnection()}
}
