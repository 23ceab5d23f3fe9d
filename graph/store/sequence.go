package store

import (
	"context"
	"database/sql"
	"strings"

	"entgo.io/ent/dialect"
)

// A sequence is statements that must each see what the one before it let
// commit: a row lock, then what the lock guards. On PostgreSQL (read
// committed) a statement reads what was committed when it began, so a lock
// and the read it guards cannot be one statement.

// step is one statement of a sequence: its SQL, its values named by bind,
// and what reads its rows (to the end: a simple query's next result set
// follows them).
type step struct {
	query func(bind func(any) string) (string, error)
	scan  func(*sql.Rows) error
}

// sequence runs steps one after another, what naming them in errors. On
// PostgreSQL with the statement cache each is a prepared statement, its
// parameters typed (literalType: a value used twice is deduced one type),
// a round trip each on plans the connection keeps; with the cache off they
// go in one round trip, a simple query with its values as literals,
// planned every time. On SQLite each runs as it is.
func (db *DB) sequence(ctx context.Context, c Queryer, what string, steps ...step) error {
	if db.Dialect == dialect.Postgres && !db.prepares {
		qs := make([]string, len(steps))
		for i, s := range steps {
			q, err := s.query(literal)
			if err != nil {
				return err
			}
			qs[i] = q
		}
		rows, err := c.QueryContext(ctx, strings.Join(qs, ";\n"))
		if err != nil {
			return err
		}
		defer rows.Close()
		for i, s := range steps {
			if i > 0 {
				if err := nextResult(rows, what, false); err != nil {
					return err
				}
			}
			if err := s.scan(rows); err != nil {
				return err
			}
		}
		return rows.Close()
	}
	for _, s := range steps {
		var a sqlArgs
		bind := a.add
		if db.Dialect == dialect.Postgres {
			bind = func(v any) string { return a.add(v) + literalType(v) }
		}
		q, err := s.query(bind)
		if err != nil {
			return err
		}
		if _, err := queryRows(ctx, c, q, a, func(rows *sql.Rows) (struct{}, error) {
			return struct{}{}, s.scan(rows)
		}); err != nil {
			return err
		}
	}
	return nil
}

// found reads a lock's rows, each with each when given, and fails with
// sql.ErrNoRows when there are none.
func found(rows *sql.Rows, each func() error) error {
	n := 0
	for rows.Next() {
		if each != nil {
			if err := each(); err != nil {
				return err
			}
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return nil
}

// drained is a step's scan that reads its rows and keeps none.
func drained(rows *sql.Rows) error {
	for rows.Next() {
	}
	return rows.Err()
}
