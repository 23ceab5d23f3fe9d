package graph_test

import (
	"context"
	"errors"
	"testing"

	"barberd/ent"
	"barberd/ent/hook"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

func TestCreateAccount(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		bg := context.Background()
		res := graph.New(graph.Settings{DB: db})

		t.Run("OK", func(t *testing.T) {
			acc, secret, err := res.CreateAccount(bg, "  Fade Street  ")
			if err != nil {
				t.Fatal(err)
			}
			if acc.Name != "Fade Street" {
				t.Errorf("name = %q, want the trimmed name", acc.Name)
			}
			v, err := res.Authenticate(bg, secret)
			if err != nil {
				t.Fatal(err)
			}
			if v.AccountID != acc.ID || v.KeyName != "Admin" || len(v.Scopes) != len(domain.AllScopes) {
				t.Errorf("first key = %+v, want Admin with every scope of %s", v, acc.ID)
			}
		})

		t.Run("ErrValidationFailed", func(t *testing.T) {
			_, _, err := res.CreateAccount(bg, " ")
			if e, ok := domain.AsError(err); !ok || e.Code != domain.CodeValidationFailed {
				t.Fatalf("err = %v, want validation_failed", err)
			}
		})

		t.Run("KeyFailureLeavesNoAccount", func(t *testing.T) {
			before, err := res.Accounts(bg)
			if err != nil {
				t.Fatal(err)
			}
			refused := errors.New("key insert refused")
			db.APIKey.Use(func(next ent.Mutator) ent.Mutator {
				return hook.APIKeyFunc(func(context.Context, *ent.APIKeyMutation) (ent.Value, error) {
					return nil, refused
				})
			})
			if _, _, err := res.CreateAccount(bg, "Half Made"); !errors.Is(err, refused) {
				t.Fatalf("err = %v, want the key insert's", err)
			}
			after, err := res.Accounts(bg)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("accounts: %d before, %d after a failed create", len(before), len(after))
			}
		})
	})
}
