package store_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"barberd/ent"
	"barberd/ent/customer"
	"barberd/ent/hold"
	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestReadHold: ReadHold reads a hold as ent reads it (every column, so a
// column added to holds fails here until ReadHold reads it), finds no hold
// of another account, and, with a customer riding, upserts the customer
// in the same statement, whether or not the hold is found.
func TestReadHold(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		m := newMondays(t, db)
		now := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
		at := now.Add(24 * time.Hour)
		key := keyHolding(t, db, m, 5, at, now)
		plain := db.Hold.Query().Where(hold.APIKeyID(key.ID)).OnlyX(m.sys)
		buyer := db.Customer.Create().SetAccountID(m.acc.ID).SetName("Rui").SetPhone("+351912000333").SaveX(m.sys)
		entry := db.WaitlistEntry.Create().SetAccountID(m.acc.ID).SetAPIKeyID(key.ID).SetUnitID(m.unit.ID).SetServiceID(plain.ServiceID).
			SetFromDate("2027-03-02").SetToDate("2027-03-02").SetWeekdays([]int{}).SetEarliestStart(at).SetLatestEnd(at.Add(time.Hour)).
			SetCustomerID(buyer.ID).SetClientName("Rui").SetClientPhone(buyer.Phone).SetOfferHoldSeconds(300).SaveX(m.sys)
		offered := db.Hold.Create().SetAccountID(m.acc.ID).SetAPIKeyID(key.ID).SetUnitID(m.unit.ID).SetServiceID(plain.ServiceID).
			SetBarberID(m.barber.ID).SetStartsAt(at.Add(time.Hour)).SetEndsAt(at.Add(90 * time.Minute)).SetExpiresAt(now.Add(time.Minute)).
			SetWaitlistEntryID(entry.ID).SetStatus(hold.StatusConsumed).SaveX(m.sys)

		if n := len(hold.Columns); n != 13 {
			t.Fatalf("holds has %d columns; ReadHold reads 13: read the new ones too", n)
		}
		asJSON := func(h *ent.Hold) string {
			t.Helper()
			b, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		for _, h := range []*ent.Hold{plain, offered} {
			want := db.Hold.GetX(m.ctx, h.ID)
			got, err := store.ReadHold(m.ctx, db.SQL, h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if asJSON(got) != asJSON(want) {
				t.Errorf("ReadHold:\n\t%s\nent:\n\t%s", asJSON(got), asJSON(want))
			}
		}
		if _, err := store.ReadHold(tenant.WithAccount(m.ctx, "acc_elsewhere"), db.SQL, plain.ID); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("another account's context: %v, want no rows", err)
		}

		// With a customer riding (PostgreSQL; elsewhere ID sends it alone).
		for _, id := range []string{plain.ID, "hld_missing"} {
			phone := "+351912000444"
			if id != plain.ID {
				phone = "+351912000555"
			}
			ctx, ride := store.RideCustomer(m.ctx, db.Dialect, store.Customer{AccountID: m.acc.ID, Name: "Ana", Phone: phone})
			h, err := store.ReadHold(ctx, db.SQL, id)
			switch {
			case id == plain.ID && (err != nil || h.ID != id):
				t.Fatalf("the hold, a customer riding: %v, %v", h, err)
			case id != plain.ID && !errors.Is(err, sql.ErrNoRows):
				t.Fatalf("no hold, a customer riding: %v, want no rows", err)
			}
			customerID, err := ride.ID(ctx, db.SQL)
			if err != nil {
				t.Fatal(err)
			}
			if got := db.Customer.Query().Where(customer.Phone(phone)).OnlyX(m.sys); got.ID != customerID {
				t.Errorf("the customer of %s: %s, ride says %s", phone, got.ID, customerID)
			}
		}
	})
}
