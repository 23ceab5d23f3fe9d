package waitlist

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"barberd/ent/schema/tenant"
	"barberd/graph/store"
	"barberd/graph/storetest"
)

// TestCandidatesPlan: on PostgreSQL, the offer pass's query of the waiting
// entries that may want freed time finds them by their span's index on
// the generic plan a connection keeps for it after five runs, with
// thousands waiting over two months: made from no values, that plan must
// not walk the entries by earliest start, or by anything else.
func TestCandidatesPlan(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		conn := storetest.AnalyzedEntries(t, db, 5000)
		counted, log := storetest.Counting(db)
		from := time.Date(2027, 3, 20, 10, 0, 0, 0, time.UTC)
		es, err := candidates(counted.WaitlistEntry, db.Dialect, "acc_1", "brb_1", from, from.Add(30*time.Minute), from.Add(-24*time.Hour), nil).
			All(tenant.System(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 0 { // brb_1 has neither the unit nor the service
			t.Errorf("%d candidates, want none", len(es))
		}
		lines := log.Take()
		if len(lines) != 1 {
			t.Fatalf("statements: %q", lines)
		}
		query := lines[0][strings.Index(lines[0], "query=")+len("query=") : strings.LastIndex(lines[0], " args=")]
		params := 0
		for _, m := range regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(query, -1) {
			n, _ := strconv.Atoi(m[1])
			params = max(params, n)
		}
		// A generic plan is the same whatever the values: none.
		storetest.WantSpanIndex(t, "the candidates' generic plan",
			storetest.PrepareGeneric(t, conn, "candidates", query)(slices.Repeat([]string{"NULL"}, params)...))
	})
}
