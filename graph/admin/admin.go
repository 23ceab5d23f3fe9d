// Package admin is the administration of an account's catalog and
// schedules (scope admin): units, services and barbers, a barber's working
// hours and time off. Its operations are methods of Admin, which the
// GraphQL resolvers of package graph call.
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
	"barberd/graph/store"
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
}

// Admin administers the catalog and schedules of the caller's account.
type Admin struct {
	db      *store.DB
	booking Booking
}

// New returns the administration of db's accounts over booking.
func New(db *store.DB, booking Booking) *Admin {
	return &Admin{db: db, booking: booking}
}
