package graph

import (
	"log/slog"
	"time"

	"barberd/ent/schema"
	"barberd/graph/admin"
	"barberd/graph/quota"
	"barberd/graph/store"
	"barberd/graph/waitlist"
	"barberd/graph/wake"
)

// Resolver is the root of every domain operation. GraphQL reaches it through
// gqlgen; the REST adapter calls the same methods directly. Each operation
// owns its transaction, so it works the same from either side.
type Resolver struct {
	cfg   Settings
	cache *caches
	// webhooks tells this process's webhook worker of deliveries due now
	// (WebhookWake).
	webhooks *wake.Set
	// waitlist keeps the waitlist and makes its offers.
	waitlist *waitlist.Waitlist
	// admin administers accounts: catalog, schedules, webhooks.
	admin *admin.Admin
	// changes prunes the log of bookings changes the caches' fence reads.
	changes *store.ChangesPruner
}

// Settings are what New makes a Resolver of.
type Settings struct {
	// DB is the database; required.
	DB *store.DB
	// Log receives what goes wrong; nil discards it.
	Log *slog.Logger
	// Limits bound what a caller may ask for; the zero Limits means
	// DefaultLimits.
	Limits Limits
	// Now is the clock; nil is the wall clock (schema.Now).
	Now func() time.Time
	// Metrics counts domain events (graph/metrics.go); nil counts nothing.
	Metrics Metrics
	// AvailabilityCacheBytes bounds the memory of cached availability days
	// (and the REST adapter's of their encoded answers); 0 means
	// DefaultAvailabilityCacheBytes.
	AvailabilityCacheBytes int
	// FreshnessWindow is the freshness window of the caches and of writes
	// (package fresh); 0 checks every cached answer by a read made after
	// its request arrived. Servers use DefaultFreshnessWindow.
	FreshnessWindow time.Duration
	// WebhookAllowPrivate lets webhook endpoints be plain http and
	// loopback, private or link-local addresses: for development and tests
	// (flag --webhook-allow-private; package netsafe).
	WebhookAllowPrivate bool
}

// New returns a resolver made of c, with defaults for what c leaves out.
func New(c Settings) *Resolver {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Limits == (Limits{}) {
		c.Limits = DefaultLimits
	}
	if c.Now == nil {
		c.Now = schema.Now
	}
	if c.AvailabilityCacheBytes <= 0 {
		c.AvailabilityCacheBytes = DefaultAvailabilityCacheBytes
	}
	r := &Resolver{cfg: c, webhooks: wake.New()}
	r.cache = newCaches(r)
	r.admin = admin.New(c.DB, core{r}, r.webhooks, c.WebhookAllowPrivate)
	r.waitlist = waitlist.New(c.DB, c.Log, core{r}, c.Limits.WaitlistPerKey)
	r.changes = store.NewChangesPruner(c.DB)
	return r
}

// WebhookWake receives a value when this process has committed webhook
// deliveries due now, or made one due again; WokenWebhookEndpoints then
// says to which endpoints.
func (r *Resolver) WebhookWake() <-chan struct{} { return r.webhooks.C() }

// WokenWebhookEndpoints returns the endpoints wakes named since it was last
// called, and forgets them.
func (r *Resolver) WokenWebhookEndpoints() []string { return r.webhooks.Take() }

// Settings returns what the resolver is made of, defaults filled in.
func (r *Resolver) Settings() Settings { return r.cfg }

// Limits bound what a caller may ask for.
type Limits struct {
	HoldTTLDefault, HoldTTLMin, HoldTTLMax time.Duration
	NotificationsDefault, NotificationsMax int
	// ActiveHoldsPerKey caps the holds an API key without a cap of its own
	// (max_active_holds) may have active at once, so no key can hold a
	// shop's free time; 0: no cap. See docs/operations.md.
	ActiveHoldsPerKey int
	// WaitlistPerKey caps the waiting waitlist entries of one API key; 0:
	// no cap.
	WaitlistPerKey int
	// MaxSlots bounds the slots one availability answer may list and one
	// search for the next free times may compute (availability.go); 0:
	// quota.DefaultMaxSlots.
	MaxSlots int
}

// DefaultLimits are the limits of rest-v1.md.
var DefaultLimits = Limits{
	HoldTTLDefault:       300 * time.Second,
	HoldTTLMin:           10 * time.Second,
	HoldTTLMax:           1800 * time.Second,
	NotificationsDefault: 50,
	NotificationsMax:     200,
	ActiveHoldsPerKey:    DefaultActiveHoldsPerKey,
	MaxSlots:             quota.DefaultMaxSlots,
	WaitlistPerKey:       waitlist.DefaultPerKey,
}

// DefaultActiveHoldsPerKey is the hold cap of keys without their own: a
// chatbot serving a chain keeps about 100 conversations, a third of them
// between hold and booking and some abandoned with their holds for a TTL,
// well under it, while one key cannot hold more than about two days of a
// three-barber shop's half-hour slots.
const DefaultActiveHoldsPerKey = 100

// DefaultFreshnessWindow is the freshness window servers use (flag
// --freshness-window).
const DefaultFreshnessWindow = 5 * time.Millisecond

func (r *Resolver) now() time.Time { return r.cfg.Now().UTC().Truncate(time.Microsecond) }
