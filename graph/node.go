package graph

import (
	"context"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/schema/pulid"
)

// node resolves a Relay node id of the caller's account; another account's
// id, like an unknown one, resolves to null. Scope admin.
func (r *Resolver) node(ctx context.Context, id string) (ent.Noder, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	// Accounts are the tenants themselves, not filtered by tenant: only the
	// caller's own is visible.
	if pulid.Prefix(id) == "acc" && id != v.AccountID {
		return nil, nil
	}
	n, err := r.cfg.DB.Noder(ctx, id, ent.WithNodeType(ent.TableOfID))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return n, err
}

// nodes resolves several node ids; unknown ones are null.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]ent.Noder, error) {
	out := make([]ent.Noder, len(ids))
	for i, id := range ids {
		n, err := r.node(ctx, id)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
