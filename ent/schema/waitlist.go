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

// WaitlistEntry is a client waiting for a time of a service at a unit that
// is not free yet: when a matching start becomes free it is offered to the
// oldest waiting entry, held for the entry's key (graph/waitlist).
type WaitlistEntry struct{ ent.Schema }

// Mixin of the WaitlistEntry.
func (WaitlistEntry) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("wl"), TenantMixin{}, TimeMixin{}}
}

// Fields of the WaitlistEntry.
func (WaitlistEntry) Fields() []ent.Field {
	return []ent.Field{
		field.String("api_key_id").Immutable().
			Annotations(entgql.Skip()),
		field.String("unit_id").Immutable(),
		field.String("service_id").Immutable(),
		field.String("barber_id").Optional().Nillable().Immutable(),
		// from_date and to_date are unit-local dates (YYYY-MM-DD), both included.
		field.String("from_date").Immutable(),
		field.String("to_date").Immutable(),
		// time_from and time_to bound a start's local time of day (HH:MM),
		// time_from <= t < time_to; nil: the whole day.
		field.String("time_from").Optional().Nillable().Immutable(),
		field.String("time_to").Optional().Nillable().Immutable(),
		// weekdays are the ISO weekdays a start may fall on; empty: all.
		field.Ints("weekdays").Immutable(),
		// earliest_start and latest_end bound, in UTC, every time the entry
		// could be offered (its service's duration and buffer included): a
		// freed span outside them cannot match it.
		field.Time("earliest_start").Immutable().
			Annotations(entgql.Skip()),
		field.Time("latest_end").Immutable().
			Annotations(entgql.Skip()),
		// window_end bounds them from above more tightly, for the freeings'
		// probe: the end of a start at the last date's daily end (an hour
		// late, for daylight saving), at most latest_end, which is when the
		// entry expires. Nil on entries that joined before it existed.
		field.Time("window_end").Optional().Nillable().Immutable().
			Annotations(entgql.Skip()),
		field.String("customer_id").Immutable().
			Annotations(entgql.Skip()),
		field.String("client_name").Immutable(),
		field.String("client_phone").Immutable(),
		field.String("client_email").Optional().Nillable().Immutable(),
		field.String("external_reference").Optional().Nillable().Immutable().MaxLen(255),
		field.Int("offer_hold_seconds").Immutable(),
		field.Enum("status").Values("waiting", "offered", "booked", "cancelled", "expired").Default("waiting"),
		// waiting is true while the status is waiting and nil otherwise: the
		// unique index over it allows one waiting entry per client, unit and
		// service (NULLs never collide), without a partial index.
		field.Bool("waiting").Optional().Nillable().
			Annotations(entgql.Skip()),
		// The offer, once made: the start, its barber, when, and its hold
		// (nil: told only). Plain columns, not edges: ended holds are pruned.
		field.Time("offer_starts_at").Optional().Nillable(),
		field.Time("offer_ends_at").Optional().Nillable(),
		field.String("offer_barber_id").Optional().Nillable(),
		field.String("offer_hold_id").Optional().Nillable(),
		field.Time("offered_at").Optional().Nillable(),
		// appointment_id is the appointment booked with the offer's hold.
		field.String("appointment_id").Optional().Nillable(),
	}
}

// Edges of the WaitlistEntry.
func (WaitlistEntry) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("unit", Unit.Type).Field("unit_id").Unique().Required().Immutable(),
		edge.To("service", Service.Type).Field("service_id").Unique().Required().Immutable(),
		edge.To("barber", Barber.Type).Field("barber_id").Unique().Immutable(),
		edge.To("appointment", Appointment.Type).Field("appointment_id").Unique(),
		edge.To("api_key", APIKey.Type).Field("api_key_id").Unique().Required().Immutable().
			Annotations(entgql.Skip()),
	}
}

// Indexes of the WaitlistEntry.
func (WaitlistEntry) Indexes() []ent.Index {
	return []ent.Index{
		// Idempotent joins, per key.
		index.Fields("api_key_id", "external_reference").Unique(),
		// One waiting entry per client phone, unit and service.
		index.Fields("account_id", "client_phone", "unit_id", "service_id", "waiting").Unique().
			StorageKey("waitlistentry_one_waiting"),
		// What a freed span matches: the waiting entries whose times reach
		// it, oldest first (graph/store/waitlist.go).
		index.Fields("account_id", "waiting", "earliest_start"),
		// A unit's entries for dashboards, and a key's waiting ones for
		// its cap.
		index.Fields("unit_id", "created_at"),
		index.Fields("api_key_id", "waiting"),
		index.Fields("offer_hold_id"),
	}
}

// Annotations of the WaitlistEntry.
func (WaitlistEntry) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.Skip(entgql.SkipMutationCreateInput, entgql.SkipMutationUpdateInput, entgql.SkipWhereInput),
	}
}

// Opening is a barber's time that became free while waiting entries might
// want it, written in the transaction that freed it and turned into offers
// right after (graph/waitlist/open.go); the row is the promise that the
// offers are made even if the process that freed the time stops.
type Opening struct{ ent.Schema }

// Mixin of the Opening.
func (Opening) Mixin() []ent.Mixin {
	return []ent.Mixin{pulid.WithPrefix("opn"), TenantMixin{}}
}

// Fields of the Opening.
func (Opening) Fields() []ent.Field {
	return []ent.Field{
		field.String("barber_id").Immutable(),
		field.Time("starts_at").Immutable(),
		field.Time("ends_at").Immutable(),
		field.Time("created_at").Default(Now).Immutable(),
	}
}

// Indexes of the Opening.
func (Opening) Indexes() []ent.Index {
	return []ent.Index{index.Fields("created_at")}
}

// Annotations of the Opening.
func (Opening) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip()}
}
