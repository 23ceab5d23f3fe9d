package admin

import (
	"context"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/graph/domain"
	"barberd/graph/model"
	"barberd/graph/paging"
)

// IssueAPIKey makes a key of the caller's account and returns its secret,
// shown only this once. Errors: validation_failed.
func (a *Admin) IssueAPIKey(ctx context.Context, in model.CreateAPIKeyInput) (*model.CreateAPIKeyPayload, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	secret, k, err := a.booking.CreateAPIKey(ctx, v.AccountID, in.Name, in.Scopes, in.MaxActiveHolds)
	if err != nil {
		return nil, err
	}
	return &model.CreateAPIKeyPayload{Secret: secret, APIKey: k}, nil
}

// APIKeys lists the account's first keys, newest first, revoked ones
// included. Errors: validation_failed.
func (a *Admin) APIKeys(ctx context.Context, first *int) ([]*ent.APIKey, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	n, err := paging.ListPage(first)
	if err != nil {
		return nil, err
	}
	ks, err := a.db.APIKey.Query().
		Order(apikey.ByCreatedAt(sql.OrderDesc()), apikey.ByID(sql.OrderDesc())).Limit(n).All(ctx)
	return ks, err
}

// UpdateAPIKey changes a key's name or hold cap. The cap is read by every
// hold, so the next hold obeys it.
// Errors: not_found, validation_failed.
func (a *Admin) UpdateAPIKey(ctx context.Context, id string, in model.UpdateAPIKeyInput) (*ent.APIKey, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	var p domain.Problems
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		in.Name = &name
	}
	CheckKeyFields(&p, in.Name, in.MaxActiveHolds)
	clear := in.ClearMaxActiveHolds != nil && *in.ClearMaxActiveHolds
	if clear && in.MaxActiveHolds != nil {
		p.Add("clearMaxActiveHolds", "must not be true when maxActiveHolds is given")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return a.changeAPIKey(ctx, id, func(tx *ent.Tx, k *ent.APIKey) (*ent.APIKey, error) {
		u := tx.APIKey.UpdateOne(k).SetNillableName(in.Name).SetNillableMaxActiveHolds(in.MaxActiveHolds)
		if clear {
			u.ClearMaxActiveHolds()
		}
		return u.Save(ctx)
	})
}

// changeAPIKey applies change to the account's key id in a transaction.
// Errors: not_found.
func (a *Admin) changeAPIKey(ctx context.Context, id string, change func(*ent.Tx, *ent.APIKey) (*ent.APIKey, error)) (*ent.APIKey, error) {
	var k *ent.APIKey
	err := a.booking.InTx(ctx, func(tx *ent.Tx) error {
		var err error
		k, err = tx.APIKey.Get(ctx, id)
		if err != nil {
			return domain.NotFound(err, domain.CodeNotFound, "API key", id)
		}
		k, err = change(tx, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return k.Unwrap(), nil
}

// APIKeysConnection pages the account's keys as apiKeys lists them.
// Errors: validation_failed.
func (a *Admin) APIKeysConnection(ctx context.Context, first *int, after *ent.Cursor) (*ent.APIKeyConnection, error) {
	first, err := paging.AdminPage(ctx, first, nil)
	if err != nil {
		return nil, err
	}
	return a.db.APIKey.Query().Paginate(ctx, after, first, nil, nil,
		ent.WithAPIKeyOrder(&ent.APIKeyOrder{Field: ent.APIKeyOrderFieldCreatedAt, Direction: entgql.OrderDirectionDesc}))
}

// RevokeAPIKey revokes a key of the caller's account; Authenticate refuses
// it from the next request on, once the revocation has answered (the
// mutation waits out the freshness window). Revoking a revoked key changes
// nothing.
// Errors: not_found.
func (a *Admin) RevokeAPIKey(ctx context.Context, id string) (*ent.APIKey, error) {
	if _, err := domain.Require(ctx, domain.ScopeAdmin); err != nil {
		return nil, err
	}
	return a.changeAPIKey(ctx, id, func(tx *ent.Tx, k *ent.APIKey) (*ent.APIKey, error) {
		if k.RevokedAt != nil {
			return k, nil
		}
		return tx.APIKey.UpdateOne(k).SetRevokedAt(a.booking.Now()).Save(ctx)
	})
}

// MaxHoldCap bounds a key's own hold cap (max_active_holds).
const MaxHoldCap = 100_000

// CheckKeyFields reports a bad key name or hold cap (nil: not given).
func CheckKeyFields(p *domain.Problems, name *string, maxHolds *int) {
	if name != nil && (*name == "" || len([]rune(*name)) > 200) {
		p.Add("name", "must be 1 to 200 characters")
	}
	if maxHolds != nil && (*maxHolds < 0 || *maxHolds > MaxHoldCap) {
		p.Add("maxActiveHolds", "must be between 0 (no cap) and %d", MaxHoldCap)
	}
}
