package main

import (
	"context"
	"strings"
	"sync"
	"testing"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// barberd migrate prints what it applied, then nothing the second time;
// serve --migrate=false refuses a database with pending migrations, and
// serve and migrate refuse one migrated by a newer barberd, naming both
// versions and changing nothing.
func TestMigrateCommand(t *testing.T) {
	eachNewDatabase(t, func(t *testing.T, dbURL string, ms []store.Migration) {
		latest := ms[len(ms)-1].String()
		out := mustCLI(t, "", "migrate", "--database-url", dbURL)
		for _, m := range ms {
			if !strings.Contains(out, "applied "+m.String()+"\n") {
				t.Errorf("migrate printed\n%s\nwithout applied %s", out, m)
			}
		}
		if out := mustCLI(t, "", "migrate", "--database-url", dbURL); out != "schema at "+latest+", the latest this barberd knows\n" {
			t.Errorf("a second migrate printed %q", out)
		}

		db, err := store.Open(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		exec := func(q string) {
			t.Helper()
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		exec(`DELETE FROM barberd_schema_migrations WHERE version = '` + ms[len(ms)-1].Version + `'`)
		_, stderr, code := runCLI(t, "", "serve", "--migrate=false", "--addr", "127.0.0.1:0", "--database-url", dbURL)
		if code == 0 || !strings.Contains(stderr, "run barberd migrate first") || !strings.Contains(stderr, latest) {
			t.Errorf("serve --migrate=false on a database behind: exit %d, %s", code, stderr)
		}
		exec(`INSERT INTO barberd_schema_migrations (version, name, applied_at) VALUES ('` + ms[len(ms)-1].Version + `', 'x', 'x')`)

		exec(`INSERT INTO barberd_schema_migrations (version, name, applied_at) VALUES ('29990101000000', 'from_the_future', 'x')`)
		for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"migrate"}} {
			_, stderr, code := runCLI(t, "", append(args, "--database-url", dbURL)...)
			if code == 0 || !strings.Contains(stderr, "29990101000000_from_the_future") || !strings.Contains(stderr, latest) {
				t.Errorf("%s on a newer database: exit %d, %s", args[0], code, stderr)
			}
		}
	})
}

// Several barberd migrate processes started at once on one new database
// apply each migration once between them.
func TestConcurrentMigrateAppliesOnce(t *testing.T) {
	eachNewDatabase(t, func(t *testing.T, dbURL string, ms []store.Migration) {
		barberd(t) // build before the race
		outs := make([]string, 4)
		var wg sync.WaitGroup
		for i := range outs {
			wg.Go(func() {
				var stderr string
				var code int
				if outs[i], stderr, code = runCLI(t, "", "migrate", "--database-url", dbURL); code != 0 {
					t.Errorf("concurrent migrate: exit %d: %s", code, stderr)
				}
			})
		}
		wg.Wait()
		all := strings.Join(outs, "")
		for _, m := range ms {
			if n := strings.Count(all, "applied "+m.String()+"\n"); n != 1 {
				t.Errorf("%s applied %d times:\n%s", m, n, all)
			}
		}
	})
}

// eachNewDatabase runs fn in parallel on a new, empty database of each
// dialect, with the migrations built in for it.
func eachNewDatabase(t *testing.T, fn func(t *testing.T, dbURL string, ms []store.Migration)) {
	t.Parallel()
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			ms, err := store.Migrations(d)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, storetest.URL(t, d), ms)
		})
	}
}
