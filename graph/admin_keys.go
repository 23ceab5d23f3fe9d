package graph

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/graph/model"
)

// issueAPIKey makes a key of the caller's account and returns its secret,
// shown only this once. Errors: validation_failed.
func (r *Resolver) issueAPIKey(ctx context.Context, in model.CreateAPIKeyInput) (*model.CreateAPIKeyPayload, error) {
	v, err := require(ctx, ScopeAdmin)
	if err != nil {
		return nil, err
	}
	secret, k, err := r.CreateAPIKey(ctx, v.AccountID, in.Name, in.Scopes)
	if err != nil {
		return nil, err
	}
	return &model.CreateAPIKeyPayload{Secret: secret, APIKey: k}, nil
}

// apiKeys lists the account's first keys, newest first, revoked ones
// included. Errors: validation_failed.
func (r *Resolver) apiKeys(ctx context.Context, first *int) ([]*ent.APIKey, error) {
	if _, err := require(ctx, ScopeAdmin); err != nil {
		return nil, err
	}
	n, err := listPage(first)
	if err != nil {
		return nil, err
	}
	ks, err := r.cfg.DB.APIKey.Query().
		Order(apikey.ByCreatedAt(sql.OrderDesc()), apikey.ByID(sql.OrderDesc())).Limit(n).All(ctx)
	return ks, err
}

// revokeAPIKey revokes a key of the caller's account; Authenticate refuses
// it from the next request on, once the revocation has answered (the
// mutation waits out the freshness window). Revoking a revoked key changes
// nothing.
// Errors: not_found.
func (r *Resolver) revokeAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	if _, err := require(ctx, ScopeAdmin); err != nil {
		return nil, err
	}
	var k *ent.APIKey
	err := r.inTx(ctx, func(tx *ent.Tx) error {
		var err error
		k, err = tx.APIKey.Get(ctx, id)
		if ent.IsNotFound(err) {
			return Errorf(CodeNotFound, "No API key %q.", id)
		}
		if err != nil || k.RevokedAt != nil {
			return err
		}
		k, err = tx.APIKey.UpdateOne(k).SetRevokedAt(r.now()).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k.Unwrap(), nil
}
