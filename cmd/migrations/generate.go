package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"ariga.io/atlas/sql/migrate"
	atlas "ariga.io/atlas/sql/schema"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql/schema"

	entmigrate "barberd/ent/migrate"
	"barberd/graph/store"
)

// generator writes one dialect's next migration.
type generator struct {
	dia      string
	dir      string // the dialect's migration directory
	postgres string // where PostgreSQL scratch databases are made
	out      io.Writer
	tables   []*schema.Table // the Ent schema's tables; nil: ent/migrate's
}

// entTables is the Ent schema the generator plans to.
func (g *generator) entTables() []*schema.Table {
	if g.tables == nil {
		return entmigrate.Tables
	}
	return g.tables
}

// run writes the migration NAME at version: Ent's plan from the replayed
// migrations to the Ent schema (with drops: a removal is a migration like
// any other, written a release after the code stopped using it); on
// PostgreSQL, new indexes on existing tables moved to a second migration
// that builds them CONCURRENTLY; then the hand-written DDL when its objects
// differ after the plan from what it makes. Last, the whole directory is
// replayed and compared with the reference schema.
func (g *generator) run(ctx context.Context, name, version string) error {
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return err
	}
	ldir, err := migrate.NewLocalDir(g.dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(g.dir, migrate.HashFileName)); os.IsNotExist(err) {
		if err := writeSum(ldir); err != nil {
			return err
		}
	}
	stmts, err := g.entPlan(ctx, ldir, name)
	if err != nil {
		return err
	}
	var concurrent []string
	if g.dia == dialect.Postgres {
		stmts, concurrent = splitConcurrent(stmts)
	}
	main := filepath.Join(g.dir, version+"_"+name+".sql")
	var wrote []string
	if len(stmts) > 0 {
		wrote = append(wrote, main)
		if err := os.WriteFile(main, []byte(strings.Join(stmts, "\n")), 0o644); err != nil {
			return err
		}
	}
	if len(concurrent) > 0 {
		at, _ := time.Parse("20060102150405", version)
		file := filepath.Join(g.dir, at.Add(time.Second).Format("20060102150405")+"_"+name+"_concurrently.sql")
		body := "-- atlas:txmode none\n\n" + strings.Join(concurrent, "\n")
		wrote = append(wrote, file)
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := writeSum(ldir); err != nil {
		return err
	}
	ddl, err := g.handWritten(ctx)
	if err != nil {
		return err
	}
	if len(ddl) > 0 {
		if len(stmts) == 0 {
			wrote = append(wrote, main)
		}
		stmts = append(stmts, "-- The DDL Ent does not write (graph/store: HandWrittenDDL).\n"+strings.Join(ddl, ";\n")+";\n")
		if err := os.WriteFile(main, []byte(strings.Join(stmts, "\n")), 0o644); err != nil {
			return err
		}
		if err := writeSum(ldir); err != nil {
			return err
		}
	}
	if len(wrote) == 0 {
		fmt.Fprintf(g.out, "%s: no change\n", g.dir)
		return nil
	}
	if err := g.verify(ctx); err != nil {
		return fmt.Errorf("the migrations do not reach the Ent schema (the files stay for a look; remove them): %w", err)
	}
	fmt.Fprintf(g.out, "wrote %s\n", strings.Join(wrote, ", "))
	return nil
}

// entPlan is Ent's plan, as commented statements, from the replayed
// migrations to the Ent schema.
func (g *generator) entPlan(ctx context.Context, ldir *migrate.LocalDir, name string) ([]string, error) {
	db, done, err := g.replayed(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	mem := migrate.OpenMemDir("barberd-" + g.dia + "-" + name)
	defer mem.Close()
	if err := writeSum(mem); err != nil {
		return nil, err
	}
	m, err := schema.NewMigrate(entDriver(db),
		schema.WithDir(mem), schema.WithFormatter(migrate.DefaultFormatter), schema.WithMigrationMode(schema.ModeInspect), schema.WithDialect(g.dia),
		schema.WithDropColumn(true), schema.WithDropIndex(true), schema.WithDiffHook(keepHandWritten))
	if err == nil {
		err = m.NamedDiff(ctx, name, g.entTables()...)
	}
	if err != nil {
		return nil, fmt.Errorf("ent's plan: %w", err)
	}
	files, err := mem.Files()
	if err != nil || len(files) == 0 {
		return nil, err
	}
	decls, err := files[0].StmtDecls()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range decls {
		out = append(out, strings.Join(append(slices.Clone(d.Comments), d.Text), "\n")+"\n")
	}
	if g.dia != dialect.SQLite {
		return out, nil
	}
	drops, err := dropNamingRebuilt(ctx, db, out)
	return append(drops, out...), err
}

// rebuilt matches the statement that ends a table's rebuild in an SQLite
// plan: the new table renamed to the old one's name.
var rebuilt = regexp.MustCompile("(?m)^ALTER TABLE `new_([^`]+)` RENAME TO `([^`]+)`")

// dropNamingRebuilt returns, for an SQLite plan that rebuilds tables, the
// drops of the triggers that name a rebuilt table. SQLite checks every
// trigger of the schema when a table is renamed, and fails the rename of
// the new table on a trigger that names the old one, dropped a statement
// before (the reservations' triggers name barbers). The triggers dropped
// come back with the hand-written DDL, which run appends when the
// triggers after the plan differ from the reference's.
func dropNamingRebuilt(ctx context.Context, db *store.DB, plan []string) ([]string, error) {
	var names []string
	for _, s := range plan {
		for _, m := range rebuilt.FindAllStringSubmatch(s, -1) {
			names = append(names, regexp.QuoteMeta(m[2]))
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	naming := regexp.MustCompile(`(?i)\b(` + strings.Join(names, "|") + `)\b`)
	have, err := store.HandWritten(ctx, db.SQL, dialect.SQLite)
	if err != nil {
		return nil, err
	}
	var drops []string
	for _, name := range slices.Sorted(maps.Keys(have)) {
		trigger, ok := strings.CutPrefix(name, "trigger ")
		if !ok || !naming.MatchString(have[name]) {
			continue
		}
		drops = append(drops, fmt.Sprintf("-- Drop trigger %q, which names a rebuilt table (made again at the end)\nDROP TRIGGER IF EXISTS `%s`;\n", trigger, trigger))
	}
	return drops, nil
}

// keepHandWritten keeps Ent from planning to drop what the hand-written DDL
// made: the exclusion constraint's index and the waiting entries' span
// index on PostgreSQL.
func keepHandWritten(next schema.Differ) schema.Differ {
	return schema.DiffFunc(func(current, desired *atlas.Schema) ([]atlas.Change, error) {
		changes, err := next.Diff(current, desired)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			if m, ok := c.(*atlas.ModifyTable); ok {
				m.Changes = slices.DeleteFunc(m.Changes, func(c atlas.Change) bool {
					d, ok := c.(*atlas.DropIndex)
					return ok && (d.I.Name == "reservations_no_overlap" || d.I.Name == store.WaitingSpanIndex)
				})
			}
		}
		return changes, nil
	})
}

var createIndex = regexp.MustCompile(`(?s)^(.*?)CREATE (UNIQUE )?INDEX ("[^"]+") ON ("[^"]+")(.*)$`)

// splitConcurrent moves the creation of indexes on tables the plan does not
// create out of stmts, rewritten to build CONCURRENTLY: a table in use may
// be large, and a plain CREATE INDEX blocks its writes while it builds.
func splitConcurrent(stmts []string) (plain, concurrent []string) {
	created := map[string]bool{}
	for _, s := range stmts {
		if m := regexp.MustCompile(`CREATE TABLE ("[^"]+")`).FindStringSubmatch(s); m != nil {
			created[m[1]] = true
		}
	}
	for _, s := range stmts {
		m := createIndex.FindStringSubmatch(s)
		if m == nil || created[m[4]] {
			plain = append(plain, s)
			continue
		}
		concurrent = append(concurrent, m[1]+"CREATE "+m[2]+"INDEX CONCURRENTLY IF NOT EXISTS "+m[3]+" ON "+m[4]+m[5])
	}
	return plain, concurrent
}

// handWritten returns the hand-written DDL to append, with the drops of
// objects it no longer makes or makes differently, when the objects after
// the replayed migrations differ from the reference's.
func (g *generator) handWritten(ctx context.Context) ([]string, error) {
	have, done, err := g.replayed(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	want, done2, err := g.reference(ctx)
	if err != nil {
		return nil, err
	}
	defer done2()
	got, err := store.HandWritten(ctx, have.SQL, g.dia)
	if err != nil {
		return nil, err
	}
	wanted, err := store.HandWritten(ctx, want.SQL, g.dia)
	if err != nil {
		return nil, err
	}
	if maps.Equal(got, wanted) {
		return nil, nil
	}
	var ddl []string
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if def, ok := wanted[name]; ok && def == got[name] {
			continue
		}
		kind, object, _ := strings.Cut(name, " ")
		switch {
		case g.dia == dialect.SQLite && kind == "trigger":
			ddl = append(ddl, "DROP TRIGGER IF EXISTS "+object)
		case kind == "function" && wanted[name] == "":
			ddl = append(ddl, "DROP FUNCTION IF EXISTS "+object+" CASCADE")
		case wanted[name] == "":
			fmt.Fprintf(g.out, "%s: %s is no longer made by HandWrittenDDL: add its DROP to the migration by hand\n", g.dir, name)
		}
	}
	return append(ddl, store.HandWrittenDDL(g.dia)...), nil
}

// verify replays the directory and compares the result with the reference.
func (g *generator) verify(ctx context.Context) error {
	have, done, err := g.replayed(ctx)
	if err != nil {
		return err
	}
	defer done()
	want, done2, err := g.reference(ctx)
	if err != nil {
		return err
	}
	defer done2()
	diff, err := have.SchemaDifference(ctx, want)
	if err == nil && diff != "" {
		err = fmt.Errorf("%s", diff)
	}
	return err
}

func writeSum(dir migrate.Dir) error {
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return migrate.WriteSumFile(dir, sum)
}
