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

// WorkingHours is when a barber works at a unit on one weekday, in the
// unit's wall-clock time, with breaks inside.
type WorkingHours struct{ ent.Schema }

// Mixin of the WorkingHours.
func (WorkingHours) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("whr"), TenantMixin{}, TimeMixin{}}
}

// Fields of the WorkingHours.
func (WorkingHours) Fields() []ent.Field {
	return []ent.Field{
		field.String("barber_id").Immutable(),
		field.String("unit_id").Immutable(),
		// weekday counts from Sunday = 0, as Go's time.Weekday.
		field.Int("weekday").Range(0, 6),
		// opens_at and closes_at are wall-clock "HH:MM"; closes_at may be "24:00".
		field.String("opens_at"),
		field.String("closes_at"),
		// breaks are wall-clock "HH:MM-HH:MM" spans, e.g. "12:00-13:00".
		field.Strings("breaks").Optional(),
	}
}

// Edges of the WorkingHours.
func (WorkingHours) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("barber", Barber.Type).Ref("working_hours").Field("barber_id").Unique().Required().Immutable(),
		edge.To("unit", Unit.Type).Field("unit_id").Unique().Required().Immutable(),
	}
}

// Indexes of the WorkingHours.
func (WorkingHours) Indexes() []ent.Index {
	return []ent.Index{index.Fields("barber_id", "unit_id", "weekday").Unique()}
}

// Annotations of the WorkingHours.
func (WorkingHours) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)}
}

// TimeOff is a span in which a barber takes no clients (holiday, sick leave).
type TimeOff struct{ ent.Schema }

// Mixin of the TimeOff.
func (TimeOff) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("tof"), TenantMixin{}, TimeMixin{}}
}

// Fields of the TimeOff.
func (TimeOff) Fields() []ent.Field {
	return []ent.Field{
		field.String("barber_id").Immutable(),
		field.Time("starts_at"),
		field.Time("ends_at"),
		field.String("reason").Default("").MaxLen(500),
	}
}

// Edges of the TimeOff.
func (TimeOff) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("barber", Barber.Type).Ref("time_off").Field("barber_id").Unique().Required().Immutable(),
	}
}

// Indexes of the TimeOff.
func (TimeOff) Indexes() []ent.Index {
	return []ent.Index{index.Fields("barber_id", "starts_at")}
}

// Annotations of the TimeOff.
func (TimeOff) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)}
}
