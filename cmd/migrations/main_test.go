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
	last := map[string][]byte{}
	for _, d := range []string{"sqlite", "postgres"} {
		src := filepath.Join("..", "..", "graph", "store", "migrations", d)
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		names, _ := filepath.Glob(filepath.Join(src, "*.sql"))
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, "_api_key_hold_cap") {
				last[filepath.Join(d, filepath.Base(name))] = data
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, d, filepath.Base(name)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(last) != 2 {
		t.Fatalf("the last migration's files: %v", last)
	}
	ctx := context.Background()
	var out, errs bytes.Buffer
	if err := run(ctx, []string{"hash", "--dir", dir}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	args := []string{"new", "--dir", dir, "--postgres", pg, "--version", "20261124222201", "api_key_hold_cap"}
	if err := run(ctx, args, &out, &errs); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
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
