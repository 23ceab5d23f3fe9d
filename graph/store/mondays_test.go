package store_test

import (
	"context"
	"testing"

	"barberd/ent"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
)

// mondays is an account with a unit in Lisbon and a barber who works there
// on Mondays, 09:00–18:00: what the tests of a barber's locked day write to.
type mondays struct {
	sys, ctx context.Context // the system's, and the account's
	acc      *ent.Account
	unit     *ent.Unit
	barber   *ent.Barber
}

func newMondays(t *testing.T, db *store.DB) mondays {
	t.Helper()
	s := mondays{sys: tenant.System(context.Background())}
	s.acc = db.Account.Create().SetName("Chain").SaveX(s.sys)
	s.unit = db.Unit.Create().SetAccountID(s.acc.ID).SetName("Shop").SetTimezone("Europe/Lisbon").SaveX(s.sys)
	s.barber = db.Barber.Create().SetAccountID(s.acc.ID).SetName("Ana").AddUnitIDs(s.unit.ID).SaveX(s.sys)
	db.WorkingHours.Create().SetAccountID(s.acc.ID).SetBarberID(s.barber.ID).SetUnitID(s.unit.ID).
		SetWeekday(1).SetOpensAt("09:00").SetClosesAt("18:00").ExecX(s.sys)
	s.ctx = tenant.WithAccount(context.Background(), s.acc.ID)
	return s
}
