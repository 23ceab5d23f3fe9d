package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"barberd/ent/schema/pulid"
)

// APIKey authenticates a chatbot, CRM or dashboard for one account. Only a
// hash of the secret is stored; the plaintext is shown once, at creation.
type APIKey struct{ ent.Schema }

// Mixin of the APIKey.
func (APIKey) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("key"), TenantMixin{}, TimeMixin{}}
}

// Fields of the APIKey.
func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxLen(200),
		// prefix is the start of the secret, safe to show so people can tell keys apart.
		field.String("prefix").Immutable(),
		// secret_hash is the SHA-256 of the secret; keys are long random strings,
		// so a fast hash with a unique index is the right lookup.
		field.String("secret_hash").Immutable().Sensitive().
			Annotations(entgql.Skip()),
		field.Strings("scopes"),
		field.Time("last_used_at").Optional().Nillable(),
		field.Time("revoked_at").Optional().Nillable(),
		// max_active_holds caps the key's active holds; nil: the server's
		// default (--max-holds-per-key), 0: no cap.
		field.Int("max_active_holds").Optional().Nillable().NonNegative(),
	}
}

// Indexes of the APIKey.
func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("secret_hash").Unique()}
}

// Annotations of the APIKey.
func (APIKey) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput), entgql.RelayConnection()}
}
