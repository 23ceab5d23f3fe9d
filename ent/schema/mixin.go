package schema

import (
	"context"
	"errors"
	"fmt"
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"

	"barberd/ent/intercept"
	"barberd/ent/schema/tenant"
)

// Now is the clock every stored instant comes from: UTC, at the microsecond
// precision PostgreSQL keeps, so both databases store and compare the same
// values.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// ErrNoTenant is returned by a query of a tenant-owned table made without an
// account in its context: failing closed beats leaking another account's rows.
var ErrNoTenant = errors.New("query of tenant-owned data without an account in context")

// TenantMixin marks an entity as owned by an account. Every query of it is
// filtered on account_id from the context, so no code path can read another
// account's rows by forgetting a predicate.
type TenantMixin struct{ mixin.Schema }

// Fields of the TenantMixin.
func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("account_id").Immutable().NotEmpty().
			Annotations(entgql.Skip()),
	}
}

// Edges of the TenantMixin.
func (TenantMixin) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("account", Account.Type).Field("account_id").Unique().Required().Immutable().
			Annotations(entgql.Skip()),
	}
}

// Indexes of the TenantMixin.
func (TenantMixin) Indexes() []ent.Index {
	return []ent.Index{index.Fields("account_id")}
}

// Interceptors of the TenantMixin.
func (TenantMixin) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		ent.TraverseFunc(func(ctx context.Context, q ent.Query) error {
			if tenant.IsSystem(ctx) {
				return nil
			}
			id, ok := tenant.Account(ctx)
			if !ok {
				return ErrNoTenant
			}
			w, err := intercept.NewQuery(q)
			if err != nil {
				return fmt.Errorf("tenant filter: %w", err)
			}
			w.WhereP(sql.FieldEQ("account_id", id))
			return nil
		}),
	}
}

// TimeMixin records when a row was created and last changed.
type TimeMixin struct{ mixin.Schema }

// Fields of the TimeMixin.
func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT"), entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)),
		field.Time("updated_at").Default(Now).UpdateDefault(Now).
			Annotations(entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput)),
	}
}

// relay is the annotation set of an entity listed as a Relay connection.
func relay() []schema.Annotation {
	return []schema.Annotation{
		entgql.QueryField(),
		entgql.RelayConnection(),
	}
}
