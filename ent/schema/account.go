package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"barberd/ent/schema/pulid"
)

// Account is a tenant: a barbershop chain with its units, staff and keys.
type Account struct{ ent.Schema }

// Mixin of the Account.
func (Account) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("acc"), TimeMixin{}}
}

// Fields of the Account.
func (Account) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(200),
		// config_version grows, by database triggers (graph/store), with
		// every change to the account's catalog, schedules and API keys;
		// caches of those are valid while it stays the same.
		field.Int64("config_version").Default(0).
			Annotations(entgql.Skip()),
	}
}

// Annotations of the Account.
func (Account) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)}
}
