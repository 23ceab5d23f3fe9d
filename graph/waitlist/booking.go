package waitlist

import (
	"context"
	"log/slog"
	"time"

	"barberd/ent"
	"barberd/graph/catalog"
	"barberd/graph/domain"
	"barberd/graph/metrics"
	"barberd/graph/model"
	"barberd/graph/slots"
	"barberd/graph/store"
	"barberd/graph/wake"
)

// Waitlist keeps the waitlist's entries and makes their offers. It books
// nothing itself: holds and notifications are written through Booking, the
// one place where reservations change.
type Waitlist struct {
	db  *store.DB
	log *slog.Logger
	b   Booking
	// perKey caps the waiting entries of one API key; 0: no cap.
	perKey int
	offers offerWorkers
}

// Booking is what the waitlist needs of the booking core (package graph).
type Booking interface {
	// InTx runs fn in a transaction, again when the database asks for it.
	InTx(ctx context.Context, fn func(*ent.Tx) error) error
	Now() time.Time
	Metrics() metrics.Events
	// Offer looks up the unit, service and barber of a request.
	Offer(ctx context.Context, unitID, serviceID string, barberID *string) (*catalog.Offer, error)
	// CachedOffer is the catalog cache's offer of key, current at v's
	// config version, shared (to read only); KeepOffer caches one.
	CachedOffer(v *domain.Viewer, key catalog.Key) (*catalog.Offer, bool)
	KeepOffer(key catalog.Key, e *catalog.Entry)
	// FreeStarts lists up to limit free starts on dates whose local time
	// of day (seconds) is in [from, to), earliest first, as availability
	// answers them (scope appointments:write).
	FreeStarts(ctx context.Context, unitID, serviceID string, barberID *string, dates []slots.Date, from, to, limit int) ([]*model.Slot, error)
	// LockStart locks o's barber until tx ends, frees the barber's holds
	// expired at now, and reports whether o's start is free for o's
	// service then: the check every writer makes under the lock, reading
	// only the start's block of the barber's day.
	LockStart(ctx context.Context, tx *ent.Tx, o *catalog.Offer, now time.Time) (bool, error)
	// AtHoldCap reports whether a key has as many active holds as it may.
	AtHoldCap(ctx context.Context, tx *ent.Tx, keyID string, now time.Time) (bool, error)
	// HoldTime writes a hold and the reservation of its time.
	HoldTime(ctx context.Context, tx *ent.Tx, create *ent.HoldCreate, buffer time.Duration) (*ent.Hold, error)
	// ReleaseHold releases hold id if it is still active (an unknown one
	// is no error), which offers its start to the next entry.
	ReleaseHold(ctx context.Context, tx *ent.Tx, id string) error
	// Notify writes a notification and its deliveries.
	Notify(ctx context.Context, tx *ent.Tx, n store.Note) error
}

// New returns the waitlist of db, capping each key's waiting entries at
// perKey (0: no cap).
func New(db *store.DB, log *slog.Logger, b Booking, perKey int) *Waitlist {
	return &Waitlist{db: db, log: log, b: b, perKey: perKey, offers: offerWorkers{due: wake.New()}}
}
