package demo

import (
	"context"
	"fmt"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
)

// IDs are the ids of a demo account's units, services and barbers by name
// (the demo uses each name once), so tests need not look them up.
type IDs map[string]string

// IDsOf reads the ids of the units, services and barbers of the demo
// account accountID.
func IDsOf(ctx context.Context, db *store.DB, accountID string) (IDs, error) {
	ctx = tenant.WithAccount(ctx, accountID)
	units, err := db.Unit.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo ids: %w", err)
	}
	services, err := db.Service.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo ids: %w", err)
	}
	barbers, err := db.Barber.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo ids: %w", err)
	}
	ids := IDs{}
	for _, u := range units {
		ids[u.Name] = u.ID
	}
	for _, s := range services {
		ids[s.Name] = s.ID
	}
	for _, b := range barbers {
		ids[b.Name] = b.ID
	}
	return ids, nil
}
