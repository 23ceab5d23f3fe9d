package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"barberd/graph/storetest"
)

// The generator, run on the migration directories without their last
// migration, writes that migration again byte for byte: the committed files
// are its output. Run on the whole directories, it finds nothing to do.
func TestGeneratorWritesTheLastMigration(t *testing.T) {
	storetest.URL(t, "postgres") // skips, or fails, as the other PostgreSQL tests do
	pg := os.Getenv("BARBERD_TEST_POSTGRES_URL")
	if pg == "" {
		pg = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	dir := t.TempDir()
	src := func(d string) string { return filepath.Join("..", "..", "graph", "store", "migrations", d) }
	// The last migration: the newest version in either directory (a
	// migration may have a file for one database only).
	// A migration that builds indexes on PostgreSQL also has a file of the
	// next second, NAME_concurrently: then the two are the last migration.
	var version, name string
	files := map[string]string{} // version: name
	for _, d := range []string{"sqlite", "postgres"} {
		names, _ := filepath.Glob(filepath.Join(src(d), "*.sql"))
		for _, n := range names {
			v, rest, _ := strings.Cut(strings.TrimSuffix(filepath.Base(n), ".sql"), "_")
			files[v] = rest
			if v > version {
				version, name = v, rest
			}
		}
	}
	versions := []string{version}
	if base, ok := strings.CutSuffix(name, "_concurrently"); ok {
		first := ""
		for v, n := range files {
			if n == base && v < version && v > first {
				first = v
			}
		}
		version, name = first, base
		versions = append(versions, first)
	}
	ofLast := func(file string) bool {
		for _, v := range versions {
			if strings.HasPrefix(file, v+"_") {
				return true
			}
		}
		return false
	}
	last := map[string][]byte{}
	for _, d := range []string{"sqlite", "postgres"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		names, _ := filepath.Glob(filepath.Join(src(d), "*.sql"))
		for _, n := range names {
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			if ofLast(filepath.Base(n)) {
				last[filepath.Join(d, filepath.Base(n))] = data
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, d, filepath.Base(n)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	var out, errs bytes.Buffer
	if err := run(ctx, []string{"hash", "--dir", dir}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	args := []string{"new", "--dir", dir, "--postgres", pg, "--version", version, name}
	if err := run(ctx, args, &out, &errs); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
	}
	for _, d := range []string{"sqlite", "postgres"} {
		wrote, _ := filepath.Glob(filepath.Join(dir, d, "*.sql"))
		for _, w := range wrote {
			if _, had := last[filepath.Join(d, filepath.Base(w))]; ofLast(filepath.Base(w)) && !had {
				t.Errorf("%s: wrote %s, which the committed migration has no file for", d, w)
			}
		}
	}
	for name, want := range last {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s written again differs:\n%s\nwant\n%s", name, got, want)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"new", "--dir", dir, "--postgres", pg, "nothing"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "no change") != 2 {
		t.Errorf("on the whole directories: %s", out.String())
	}
}
