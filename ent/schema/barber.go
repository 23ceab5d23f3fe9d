package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"barberd/ent/schema/pulid"
)

// Barber is a member of staff who performs services at one or more units.
type Barber struct{ ent.Schema }

// Mixin of the Barber.
func (Barber) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("brb"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Barber.
func (Barber) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(200).
			Annotations(entgql.OrderField("NAME")),
		field.Bool("active").Default(true),
		// bookings_version grows, by a database trigger (graph/store), with
		// every change to the barber's reservations; cached availability of
		// the barber is valid while it stays the same.
		field.Int64("bookings_version").Default(0).
			Annotations(entgql.Skip()),
	}
}

// Edges of the Barber.
func (Barber) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("units", Unit.Type).Ref("barbers"),
		edge.To("services", Service.Type),
		edge.To("working_hours", WorkingHours.Type).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)),
		edge.To("time_off", TimeOff.Type).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)),
	}
}

// Annotations of the Barber.
func (Barber) Annotations() []schema.Annotation { return relay() }
