package domain

import (
	"context"
	"slices"
	"time"

	"barberd/ent/schema/tenant"
)

// Scopes an API key can hold.
const (
	ScopeContextRead       = "context:read"
	ScopeCatalogRead       = "catalog:read"
	ScopeAvailabilityRead  = "availability:read"
	ScopeHoldsWrite        = "holds:write"
	ScopeAppointmentsRead  = "appointments:read"
	ScopeAppointmentsWrite = "appointments:write"
	ScopeNotificationsRead = "notifications:read"
	ScopeAdmin             = "admin"
)

// BookingScopes are every scope but admin: what a chatbot needs.
var BookingScopes = []string{
	ScopeContextRead, ScopeCatalogRead, ScopeAvailabilityRead, ScopeHoldsWrite,
	ScopeAppointmentsRead, ScopeAppointmentsWrite, ScopeNotificationsRead,
}

// AllScopes are the scopes a key may hold.
var AllScopes = append(slices.Clone(BookingScopes), ScopeAdmin)

// Viewer is the authenticated API key a request acts as.
type Viewer struct {
	AccountID string
	KeyID     string
	KeyName   string
	KeyPrefix string
	Scopes    []string
	// KeyCreatedAt bounds which notifications the key receives.
	KeyCreatedAt time.Time
	// MaxActiveHolds is the key's own cap on active holds (nil: the
	// server's default), as current as ConfigVersion: a change to it
	// raises the account's config version.
	MaxActiveHolds *int

	// ConfigVersion is the account's config version read for this request
	// (at or after its arrival), when Versioned; caches of the account's
	// configuration are valid for the request when stored under it.
	ConfigVersion int64
	Versioned     bool
}

type viewerKey struct{}

// WithViewer returns a context acting as v, scoped to v's account.
func WithViewer(ctx context.Context, v *Viewer) context.Context {
	ctx = tenant.WithAccount(ctx, v.AccountID)
	return context.WithValue(ctx, viewerKey{}, v)
}

// ViewerFrom returns the viewer of ctx, if any.
func ViewerFrom(ctx context.Context) (*Viewer, bool) {
	v, ok := ctx.Value(viewerKey{}).(*Viewer)
	return v, ok
}

// HasScope reports whether the viewer holds scope.
func (v *Viewer) HasScope(scope string) bool { return slices.Contains(v.Scopes, scope) }

// Require returns the viewer of ctx when it holds scope; otherwise
// missing_api_key (no viewer) or insufficient_scope.
func Require(ctx context.Context, scope string) (*Viewer, error) {
	v, ok := ViewerFrom(ctx)
	if !ok {
		return nil, Errorf(CodeMissingAPIKey, "This operation needs an API key in header X-Service-Api-Key.")
	}
	if !v.HasScope(scope) {
		return nil, Errorf(CodeInsufficientScope, "This API key lacks the scope %q that this operation needs.", scope)
	}
	return v, nil
}
