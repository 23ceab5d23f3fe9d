package graph

import (
	"context"
	"strings"

	"barberd/graph/domain"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/schema/tenant"
	"barberd/graph/fresh"
	"barberd/graph/model"
)

// checkAccountName checks an account's name: 1 to 200 characters of text.
func checkAccountName(name string) error {
	var p domain.Problems
	if domain.CheckText(&p, "name", name) {
		domain.CheckLength(&p, "name", name, 1, 200)
	}
	return p.Err()
}

// CreateAccount makes a new account (a shop or chain) and a first key with
// every scope for its dashboard, in one transaction, and returns the account
// and the key's secret, shown only this once. For operators (barberd account
// create), not for any API. Errors: validation_failed.
func (r *Resolver) CreateAccount(ctx context.Context, name string) (*ent.Account, string, error) {
	if err := checkAccountName(name); err != nil {
		return nil, "", err
	}
	var acc *ent.Account
	var secret string
	err := r.inTx(ctx, func(tx *ent.Tx) error {
		var err error
		acc, err = tx.Account.Create().SetName(strings.TrimSpace(name)).Save(tenant.System(ctx))
		if err != nil {
			return err
		}
		secret, _, err = insertAPIKey(ctx, tx.Client(), acc.ID, "Admin", domain.AllScopes, nil)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return acc.Unwrap(), secret, nil
}

// Accounts lists every account, oldest first. For operators (barberd
// account list), not for any API.
func (r *Resolver) Accounts(ctx context.Context) ([]*ent.Account, error) {
	return r.cfg.DB.Account.Query().Order(account.ByCreatedAt(), account.ByID()).All(tenant.System(ctx))
}

// ownAccount returns the caller's account (scope admin).
func (r *Resolver) ownAccount(ctx context.Context) (*ent.Account, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	return r.cfg.DB.Account.Get(ctx, v.AccountID)
}

// updateAccount changes the caller's account's settings (scope admin);
// GET /context shows the new name from the next request.
// Errors: validation_failed.
func (r *Resolver) updateAccount(ctx context.Context, in model.UpdateAccountInput) (*ent.Account, error) {
	v, err := domain.Require(ctx, domain.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	upd := r.cfg.DB.Account.UpdateOneID(v.AccountID)
	if in.Name != nil {
		if err := checkAccountName(*in.Name); err != nil {
			return nil, err
		}
		upd.SetName(strings.TrimSpace(*in.Name))
	}
	acc, err := upd.Save(ctx)
	if err != nil {
		return nil, err
	}
	fresh.Committed(ctx)
	return acc, nil
}
