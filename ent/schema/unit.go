package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"barberd/ent/schema/pulid"
)

// Unit is one barbershop location, with its own time zone and booking policy.
type Unit struct{ ent.Schema }

// Mixin of the Unit.
func (Unit) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("unt"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Unit.
func (Unit) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(200).
			Annotations(entgql.OrderField("NAME")),
		// timezone is an IANA zone name, e.g. "Europe/Lisbon".
		field.String("timezone").NotEmpty(),
		field.String("address").Default(""),
		field.String("phone").Default(""),
		field.Bool("active").Default(true),
		field.Int("slot_step_minutes").Positive().Default(15),
		field.Int("min_lead_minutes").NonNegative().Default(60),
		field.Int("horizon_days").NonNegative().Default(365),
	}
}

// Edges of the Unit.
func (Unit) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("services", Service.Type),
		edge.To("barbers", Barber.Type),
	}
}

// Annotations of the Unit.
func (Unit) Annotations() []schema.Annotation { return relay() }
