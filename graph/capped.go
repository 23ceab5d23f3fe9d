package graph

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/barber"
)

// MaxCatalog is the most units, services and barbers (each, active or not)
// one account has, and the most time off entries one barber has. It equals
// MaxPageSize, so one page always holds a whole list of them, and no list or
// edge of the catalog (a unit's barbers, a barber's services) grows without
// bound.
const MaxCatalog = MaxPageSize

// capped returns full() when an owner (a key, an account, a barber) has
// most rows already (count; most <= 0: no cap). It first locks the owner's
// row (store.DB.LockOwner), then counts in a statement of its own, which in
// READ COMMITTED sees what was committed while it waited.
func (r *Resolver) capped(lock func() error, count func() (int, error), most int, full func() error) error {
	if most <= 0 {
		return nil
	}
	if err := r.cfg.DB.LockOwner(lock); err != nil {
		return err
	}
	n, err := count()
	if err != nil {
		return err
	}
	if n >= most {
		return full()
	}
	return nil
}

// noKeyUpdate locks the rows a query reads FOR NO KEY UPDATE: unlike FOR
// UPDATE, it does not wait for the key-share locks that rows referring to
// them take as they are inserted, so only writers under the same cap wait.
func noKeyUpdate(s *sql.Selector) { s.For(sql.LockNoKeyUpdate) }

// checkCatalogRoom refuses another unit, service or barber (kind, and the
// mutation that changes one, update) when the account has MaxCatalog of
// them. Errors: catalog_full.
func (r *Resolver) checkCatalogRoom(ctx context.Context, tx *ent.Tx, accountID, kind, update string, count func(context.Context) (int, error)) error {
	return r.capped(func() error {
		_, err := tx.Account.Query().Where(account.ID(accountID)).Unique(false).Select(account.FieldID).Modify(noKeyUpdate).Strings(ctx)
		return err
	}, func() (int, error) { return count(ctx) }, MaxCatalog, func() error {
		return Errorf(CodeCatalogFull, "The account already has %d %s, the most it may have (inactive ones count too): change an inactive one with %s and activate it instead.", MaxCatalog, kind, update)
	})
}

// checkTimeOffRoom refuses another time off entry when the barber has
// MaxCatalog of them. Errors: catalog_full.
func (r *Resolver) checkTimeOffRoom(ctx context.Context, tx *ent.Tx, b *ent.Barber) error {
	return r.capped(func() error {
		_, err := tx.Barber.Query().Where(barber.ID(b.ID)).Unique(false).Select(barber.FieldID).Modify(noKeyUpdate).Strings(ctx)
		return err
	}, func() (int, error) { return b.QueryTimeOff().Count(ctx) }, MaxCatalog, func() error {
		return Errorf(CodeCatalogFull, "The barber already has %d time off entries, the most allowed: remove past ones with removeTimeOff first.", MaxCatalog)
	})
}
