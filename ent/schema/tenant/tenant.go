// Package tenant carries the account a request acts for through a context, so
// that every query of a tenant-owned table can be filtered on account_id in
// one place (see the schema's TenantMixin).
package tenant

import "context"

type accountKey struct{}
type systemKey struct{}

// WithAccount returns a context acting for the account with the given id.
func WithAccount(ctx context.Context, accountID string) context.Context {
	return context.WithValue(ctx, accountKey{}, accountID)
}

// Account returns the account the context acts for.
func Account(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(accountKey{}).(string)
	return id, ok && id != ""
}

// System returns a context that may read every account's rows. Only trusted
// paths use it: key authentication (before the account is known),
// migrations, seeding and background jobs that work across accounts.
func System(ctx context.Context) context.Context {
	return context.WithValue(ctx, systemKey{}, true)
}

// IsSystem reports whether ctx was made by System.
func IsSystem(ctx context.Context) bool {
	v, _ := ctx.Value(systemKey{}).(bool)
	return v
}
