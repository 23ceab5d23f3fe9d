// Package admin is the administration of an account (scope admin): its
// catalog (units, services and barbers), a barber's working hours and time
// off, its API keys, its webhook endpoints with their delivery log, and the
// agenda and active holds dashboards read. Its operations are methods of
// Admin, which the GraphQL resolvers of package graph call.
//
// Every lookup goes through the tenant-filtered client, so another
// account's id is "not found"; rows are always read before they are
// changed, because ent's update and delete builders do not pass the tenant
// filter. Field names in validation errors are the GraphQL input names.
package admin

import (
	"context"
	"time"

	"barberd/ent"
	"barberd/graph/fresh"
	"barberd/graph/metrics"
	"barberd/graph/store"
	"barberd/graph/wake"
)

// Booking is what administration needs of the booking core (package
// graph): its transactions, and the waitlist's news that a barber's time
// may have become free.
type Booking interface {
	// InTx runs fn in a transaction, retried as the booking core retries
	// its own.
	InTx(ctx context.Context, fn func(*ent.Tx) error) error
	// Opened tells, in tx, that a barber's time from start to end became
	// free (time off removed).
	Opened(ctx context.Context, tx *ent.Tx, accountID, barberID string, start, end time.Time) error
	// OpenedHorizon tells, in tx, that any of a barber's time up to the
	// booking horizon may have become free (hours or services changed).
	OpenedHorizon(ctx context.Context, tx *ent.Tx, accountID, barberID string) error
	Now() time.Time
	Metrics() metrics.Events
	// CreateAPIKey makes a key of an account and returns its secret
	// (maxHolds nil: the server's default hold cap, 0: none).
	CreateAPIKey(ctx context.Context, accountID, name string, scopes []string, maxHolds *int) (string, *ent.APIKey, error)
}

// maxCachedUnits bounds the units cached for agendas.
const maxCachedUnits = 10_000

// Admin administers the caller's account.
type Admin struct {
	db      *store.DB
	booking Booking
	// webhooks tells this process's webhook worker of endpoints due now.
	webhooks *wake.Set
	// allowPrivate lets endpoints be plain http and private addresses
	// (package netsafe).
	allowPrivate bool
	// units caches agendas' units (agendaUnit).
	units *fresh.Memo[unitKey, *unitEntry]
}

// New returns the administration of db's accounts over booking. An
// endpoint made due (enabled, redelivered) is told to webhooks; with
// allowPrivate, endpoints may be plain http and private addresses.
func New(db *store.DB, booking Booking, webhooks *wake.Set, allowPrivate bool) *Admin {
	return &Admin{db: db, booking: booking, webhooks: webhooks, allowPrivate: allowPrivate,
		units: fresh.NewMemo[unitKey, *unitEntry](maxCachedUnits, nil)}
}
