package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"

	"barberd/ent/schema/pulid"
)

// Service is something a barber does for a client: a haircut, a beard trim.
type Service struct{ ent.Schema }

// Mixin of the Service.
func (Service) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("svc"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Service.
func (Service) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(200).
			Annotations(entgql.OrderField("NAME")),
		field.String("description").Default(""),
		field.Int("duration_minutes").Positive(),
		// buffer_minutes is cleanup time after the service during which the
		// barber takes no other client.
		field.Int("buffer_minutes").NonNegative().Default(0),
		// price_amount is in minor units of price_currency (cents for BRL, EUR).
		field.Int64("price_amount").NonNegative(),
		field.String("price_currency").MinLen(3).MaxLen(3),
		field.Bool("active").Default(true),
		field.Bool("bookable_online").Default(true),
	}
}

// Edges of the Service.
func (Service) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("units", Unit.Type).Ref("services"),
		edge.From("barbers", Barber.Type).Ref("services"),
	}
}

// Annotations of the Service.
func (Service) Annotations() []schema.Annotation { return relay() }
