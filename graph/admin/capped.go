package admin

import (
	"context"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/barber"
	"barberd/graph/domain"
	"barberd/graph/paging"
	"barberd/graph/store"
)

// MaxCatalog is the most units, services and barbers (each, active or not)
// one account has, and the most time off entries one barber has. It equals
// MaxPageSize, so one page always holds a whole list of them, and no list or
// edge of the catalog (a unit's barbers, a barber's services) grows without
// bound.
const MaxCatalog = paging.MaxPageSize

// checkCatalogRoom refuses another unit, service or barber (kind, and the
// mutation that changes one, update) when the account has MaxCatalog of
// them. Errors: catalog_full.
func (a *Admin) checkCatalogRoom(ctx context.Context, tx *ent.Tx, accountID, kind, update string, count func(context.Context) (int, error)) error {
	return a.db.Capped(func() error {
		_, err := tx.Account.Query().Where(account.ID(accountID)).Unique(false).Select(account.FieldID).Modify(store.NoKeyUpdate).Strings(ctx)
		return err
	}, func() (int, error) { return count(ctx) }, MaxCatalog, func() error {
		return domain.Errorf(domain.CodeCatalogFull, "The account already has %d %s, the most it may have (inactive ones count too): change an inactive one with %s and activate it instead.", MaxCatalog, kind, update)
	})
}

// checkTimeOffRoom refuses another time off entry when the barber has
// MaxCatalog of them. Errors: catalog_full.
func (a *Admin) checkTimeOffRoom(ctx context.Context, tx *ent.Tx, b *ent.Barber) error {
	return a.db.Capped(func() error {
		_, err := tx.Barber.Query().Where(barber.ID(b.ID)).Unique(false).Select(barber.FieldID).Modify(store.NoKeyUpdate).Strings(ctx)
		return err
	}, func() (int, error) { return b.QueryTimeOff().Count(ctx) }, MaxCatalog, func() error {
		return domain.Errorf(domain.CodeCatalogFull, "The barber already has %d time off entries, the most allowed: remove past ones with removeTimeOff first.", MaxCatalog)
	})
}
