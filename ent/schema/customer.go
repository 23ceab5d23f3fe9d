package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"barberd/ent/schema/pulid"
)

// Customer is the account's record of a client, one per phone number per
// account (the id of the REST "client"). Every booking with the phone
// updates its name (and e-mail, when given), for dashboards to search; an
// appointment shows the client as given when it was booked instead.
type Customer struct{ ent.Schema }

// Mixin of the Customer.
func (Customer) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("cli"), TenantMixin{}, TimeMixin{}}
}

// Fields of the Customer.
func (Customer) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty().MaxRuneLen(200).
			Annotations(entgql.OrderField("NAME")),
		// phone is E.164, e.g. "+5511987654321".
		field.String("phone").NotEmpty().MaxLen(16),
		field.String("email").Optional().MaxLen(254),
	}
}

// Indexes of the Customer.
func (Customer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("account_id", "phone").Unique()}
}

// Annotations of the Customer.
func (Customer) Annotations() []schema.Annotation { return relay() }
