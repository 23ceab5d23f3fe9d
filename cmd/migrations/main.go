// Command migrations writes barberd's next schema migration, for SQLite and
// for PostgreSQL, from the difference between the migration files in
// graph/store/migrations and the Ent schema:
//
//	go run ./cmd/migrations new NAME
//
// It needs PostgreSQL (it creates and drops scratch databases there), so it
// is not part of go generate. docs/migrations.md says what it writes.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"time"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"barberd/graph/store"
)

const usage = `usage: go run ./cmd/migrations new [flags] NAME
       go run ./cmd/migrations hash [--dir DIR]

Writes the migration that brings graph/store/migrations/{sqlite,postgres} to
the Ent schema (ent/schema, after go generate), named NAME (lower case,
digits and _), and checks that replaying every migration gives the schema
Ent and the hand-written DDL make. Writes nothing when there is no change.
hash writes each directory's atlas.sum again, after a migration not yet
merged was edited by hand.

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "migrations:", err)
		}
		os.Exit(2)
	}
}

var validName = regexp.MustCompile(`^[a-z0-9_]+$`)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "new" && args[0] != "hash") {
		fmt.Fprint(stderr, usage)
		return errors.New("want: new NAME, or hash")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	dir := fs.String("dir", "graph/store/migrations", "the migration directories' parent")
	pg := fs.String("postgres", envOr("BARBERD_DEV_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"a PostgreSQL where scratch databases may be created and dropped (env BARBERD_DEV_POSTGRES_URL)")
	version := fs.String("version", time.Now().UTC().Format("20060102150405"), "the migration's version, a UTC time as YYYYMMDDHHMMSS")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] == "hash" {
		return rehash(*dir)
	}
	if fs.NArg() != 1 || !validName.MatchString(fs.Arg(0)) {
		fs.Usage()
		return errors.New("want one NAME of lower-case letters, digits and _")
	}
	if _, err := time.Parse("20060102150405", *version); err != nil {
		return fmt.Errorf("--version: %w", err)
	}
	for _, dia := range []string{dialect.SQLite, dialect.Postgres} {
		g := &generator{dia: dia, dir: filepath.Join(*dir, store.MigrationsDir(dia)), postgres: *pg, out: stdout}
		if err := g.run(ctx, fs.Arg(0), *version); err != nil {
			return fmt.Errorf("%s: %w", dia, err)
		}
	}
	return nil
}

// rehash writes the atlas.sum of each dialect's directory under dir.
func rehash(dir string) error {
	for _, dia := range []string{dialect.SQLite, dialect.Postgres} {
		ldir, err := migrate.NewLocalDir(filepath.Join(dir, store.MigrationsDir(dia)))
		if err != nil {
			return err
		}
		if err := writeSum(ldir); err != nil {
			return err
		}
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// scratch opens an empty database of the generator's dialect, dropped by
// the returned function.
func (g *generator) scratch(ctx context.Context) (*store.DB, func(), error) {
	if g.dia == dialect.SQLite {
		tmp, err := os.MkdirTemp("", "barberd-migrations-")
		if err != nil {
			return nil, nil, err
		}
		db, err := store.Open("sqlite:" + filepath.Join(tmp, "scratch.db"))
		if err != nil {
			os.RemoveAll(tmp)
			return nil, nil, err
		}
		return db, func() { db.Close(); os.RemoveAll(tmp) }, nil
	}
	admin, err := store.Open(g.postgres)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "barberd_migrations_" + hex.EncodeToString(b)
	if _, err := admin.SQL.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, nil, fmt.Errorf("scratch database on %s: %w", store.Redact(g.postgres), err)
	}
	drop := func() {
		_, _ = admin.SQL.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	u, _ := url.Parse(g.postgres)
	u.Path = "/" + name
	db, err := store.Open(u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	return db, func() { db.Close(); drop() }, nil
}

// reference is a scratch database with the schema Ent and the hand-written
// DDL make on an empty database.
func (g *generator) reference(ctx context.Context) (*store.DB, func(), error) {
	db, done, err := g.scratch(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := db.CreateReferenceOf(ctx, g.entTables()); err != nil {
		done()
		return nil, nil, fmt.Errorf("reference schema: %w", err)
	}
	return db, done, nil
}

// replayed is a scratch database with every migration of the directory
// applied.
func (g *generator) replayed(ctx context.Context) (*store.DB, func(), error) {
	ms, err := store.ReadMigrations(os.DirFS(g.dir), g.dia)
	if err != nil {
		return nil, nil, err
	}
	db, done, err := g.scratch(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := db.Apply(ctx, ms); err != nil {
		done()
		return nil, nil, fmt.Errorf("replaying the migrations: %w", err)
	}
	return db, done, nil
}

// entDriver is db's connections as an Ent driver.
func entDriver(db *store.DB) dialect.Driver { return entsql.OpenDB(db.Dialect, db.SQL) }
