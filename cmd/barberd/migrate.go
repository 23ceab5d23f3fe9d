package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"barberd/graph/store"
)

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newFlagSet("migrate", "migrate [flags]",
		`Applies the schema migrations built into barberd that the database has not had, in order,
and prints each one it applied and the version the schema is at. Several processes may run it
at once: each migration is applied once. A database migrated by a newer barberd is refused
unchanged. serve and demo apply pending migrations too when they start, unless --migrate=false.
Back up the database first (docs/operations.md, "Upgrading").`, stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, db, err := f.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, m := range f.applied {
		fmt.Fprintf(stdout, "applied %s\n", m)
	}
	st, err := db.CheckSchema(ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "schema at %s, the latest this barberd knows\n", st.Current)
	return err
}

// migrateSchema applies db's pending migrations, or with f.checkOnly
// (serve --migrate=false) only checks that there are none.
func (f *dbFlags) migrateSchema(ctx context.Context, db *store.DB, log *slog.Logger) error {
	if !f.checkOnly {
		applied, err := db.Upgrade(ctx)
		f.applied = applied
		for _, m := range applied {
			log.Info("migrated", "migration", m.String())
		}
		return err
	}
	st, err := db.CheckSchema(ctx)
	if err != nil || len(st.Pending) == 0 {
		return err
	}
	at := "has no migration recorded"
	if st.Current.Version != "" {
		at = "is at migration " + st.Current.String()
	}
	return fmt.Errorf("the database's schema %s and this barberd needs %s: run barberd migrate first (--migrate=false only checks)", at, st.Latest)
}
