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

// WebhookEndpoint is an HTTPS address of the account's that is sent each
// notification of the types it names, signed with its secret
// (docs/webhooks.md).
type WebhookEndpoint struct{ ent.Schema }

// Mixin of the WebhookEndpoint.
func (WebhookEndpoint) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("whe"), TenantMixin{}, TimeMixin{}}
}

// Fields of the WebhookEndpoint.
func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("url").MaxLen(2048),
		field.String("description").Default("").MaxLen(500),
		// event_types are the notification types sent; empty: every type.
		field.Strings("event_types"),
		field.Bool("enabled").Default(true),
		// secret is the signing key, whsec_ and base64. HMAC needs the key
		// itself, so unlike an API key's it cannot be stored hashed; it is
		// shown once, at create and at rotate.
		field.String("secret").Sensitive().
			Annotations(entgql.Skip()),
		// failing_since is set when a delivery gave up (failed), and cleared
		// by the next delivered one.
		field.Time("failing_since").Optional().Nillable(),
		// leased_until and lease_token are the claim of the worker sending
		// the endpoint's deliveries (package webhook): one at a time, in order.
		field.Time("leased_until").Optional().Nillable().
			Annotations(entgql.Skip()),
		field.String("lease_token").Default("").
			Annotations(entgql.Skip()),
	}
}

// Edges of the WebhookEndpoint.
func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", WebhookDelivery.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip()),
	}
}

// Annotations of the WebhookEndpoint.
func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput, entgql.SkipWhereInput, entgql.SkipOrderField)}
}

// WebhookDelivery is one notification owed to one webhook endpoint, written
// in the same transaction as the notification. It stays pending, retried
// with backoff, until the endpoint takes it (delivered) or the retries give
// up (failed).
type WebhookDelivery struct{ ent.Schema }

// Mixin of the WebhookDelivery.
func (WebhookDelivery) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("whd"), TenantMixin{}}
}

// Fields of the WebhookDelivery.
func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("endpoint_id").Immutable(),
		field.String("notification_id").Immutable(),
		field.Enum("status").Values("pending", "delivered", "failed").Default("pending"),
		// attempt_count is how many requests were sent.
		field.Int("attempt_count").Default(0),
		// next_attempt_at is when a pending delivery is due.
		field.Time("next_attempt_at"),
		// retry_since is where the retries' time limit counts from: the first
		// attempt, or the last redelivery (nil until then).
		field.Time("retry_since").Optional().Nillable().
			Annotations(entgql.Skip()),
		field.Time("created_at").Default(Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

// Edges of the WebhookDelivery.
func (WebhookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).Ref("deliveries").Field("endpoint_id").
			Unique().Required().Immutable(),
		edge.To("notification", Notification.Type).Field("notification_id").
			Unique().Required().Immutable(),
		edge.To("attempts", WebhookAttempt.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip()),
	}
}

// Indexes of the WebhookDelivery.
func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		// The worker's poll and claim: pending deliveries by when due. (A
		// partial index WHERE status = 'pending' would be smaller, but
		// PostgreSQL rewrites the condition of an enum's varchar, and ent
		// would then plan to recreate the index on every migration.)
		index.Fields("status", "next_attempt_at"),
		// An endpoint's deliveries, oldest first (the worker) and newest
		// first (the delivery log).
		index.Fields("endpoint_id", "created_at"),
		// Pruning a notification deletes its deliveries, and the foreign
		// key is checked, through this index (graph/retention.go).
		index.Fields("notification_id"),
	}
}

// Annotations of the WebhookDelivery.
func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput, entgql.SkipWhereInput),
	}
}

// WebhookAttempt is one HTTP request of a webhook delivery and what came of
// it: the delivery log.
type WebhookAttempt struct{ ent.Schema }

// Mixin of the WebhookAttempt.
func (WebhookAttempt) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("wha"), TenantMixin{}}
}

// Fields of the WebhookAttempt.
func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("delivery_id").Immutable(),
		field.Time("attempted_at").Immutable(),
		// status_code is the HTTP status answered; nil when none came (a
		// timeout, a refused or failed connection).
		field.Int("status_code").Optional().Nillable().Immutable(),
		field.Int("latency_ms").Immutable(),
		// error says briefly why the attempt failed; empty when delivered.
		field.String("error").Default("").Immutable(),
	}
}

// Edges of the WebhookAttempt.
func (WebhookAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", WebhookDelivery.Type).Ref("attempts").Field("delivery_id").
			Unique().Required().Immutable(),
	}
}

// Indexes of the WebhookAttempt.
func (WebhookAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("delivery_id", "attempted_at")}
}

// Annotations of the WebhookAttempt.
func (WebhookAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput, entgql.SkipWhereInput, entgql.SkipOrderField)}
}
