package main

import (
	"regexp"
	"slices"
	"testing"

	"barberd/graph/storetest"
)

// productionWalkSteps are what docs/getting-started-production.md must show
// a shop starting from an empty database.
var productionWalkSteps = []string{
	"barberd account create", "barberd account list", "updateAccount(", "account {",
	"createUnit", "timezone:", "createService", "createBarber", "setWorkingHours", "createApiKey",
	"/context", "/availability?", "/appointments", "agenda(",
}

const productionWalkEpilogue = `
printf 'walk-result %s %s %s %s %s\n' "$KEY" "$ADMIN" "$APT" "$UNIT" "$DAY"
`

var productionWalkResult = regexp.MustCompile(`(?m)^walk-result (\S+) (\S+) (\S+) (\S+) (\S+)$`)

// TestProductionWalk pastes docs/getting-started-production.md's walks into
// bash against "barberd serve" on an empty database, on each database, and
// checks that the chatbot's booking is in the unit's agenda and that the
// account's new name is what GET /context tells the chatbot.
func TestProductionWalk(t *testing.T) {
	t.Parallel()
	script := docWalk(t, "../../docs/getting-started-production.md", productionWalkSteps)
	needWalkTools(t)
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			dir := t.TempDir()
			s := startServer(t, dir, "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL)
			out := runWalk(t, s, dir, dbURL, script+productionWalkEpilogue)
			m := productionWalkResult.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the walk's result line is missing:\n%s", out)
			}
			key, admin, apt, unit, day := m[1], m[2], m[3], m[4], m[5]
			if ids := agendaIDs(t, s.URL, admin, unit, day); !slices.Equal(ids, []string{apt}) {
				t.Errorf("the unit's agenda on %s: %v, want the chatbot's %s alone", day, ids, apt)
			}
			ctx := call(t, "GET", s.URL+"/api/integrations/v1/context", key, nil, 200).JSON(t)
			if acc, _ := ctx["account"].(map[string]any); acc["name"] != "Barbearia Central Lisboa" {
				t.Errorf("GET /context's account after updateAccount: %v", ctx["account"])
			}
			if list := mustCLI(t, dir, "account", "list", "--database-url", dbURL); !regexp.MustCompile(`(?m)^acc_\S+\t\S+Z\tBarbearia Central Lisboa$`).MatchString(list) {
				t.Errorf("account list: %q", list)
			}
		})
	}
}
