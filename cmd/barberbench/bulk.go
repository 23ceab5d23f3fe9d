package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"entgo.io/ent/dialect"
)

// bulkWriter streams rows into one table inside a transaction: COPY on
// PostgreSQL, multi-row INSERTs on SQLite. Values go through the same driver
// and DSN barberd uses, so times are stored exactly as barberd stores them.
type bulkWriter struct {
	ctx     context.Context
	tx      *sql.Tx
	dialect string
	table   string
	cols    []string
	rows    int // rows written so far
	started time.Time

	copyStmt *sql.Stmt // PostgreSQL

	batch     int // SQLite: rows per INSERT
	pending   []any
	batchStmt *sql.Stmt
}

func newBulkWriter(ctx context.Context, tx *sql.Tx, dia, table string, cols ...string) (*bulkWriter, error) {
	w := &bulkWriter{ctx: ctx, tx: tx, dialect: dia, table: table, cols: cols, started: time.Now()}
	if dia == dialect.Postgres {
		q := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(cols, ", "))
		stmt, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		w.copyStmt = stmt
		return w, nil
	}
	// SQLite allows 32766 bound parameters per statement.
	w.batch = min(500, 30000/len(cols))
	return w, nil
}

func (w *bulkWriter) insertSQL(rows int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", w.table, strings.Join(w.cols, ", "))
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(w.cols)), ", ") + ")"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// add writes one row; vals follow the column order given at creation.
func (w *bulkWriter) add(vals ...any) error {
	if len(vals) != len(w.cols) {
		return fmt.Errorf("%s: %d values for %d columns", w.table, len(vals), len(w.cols))
	}
	w.rows++
	if w.copyStmt != nil {
		if _, err := w.copyStmt.ExecContext(w.ctx, vals...); err != nil {
			return fmt.Errorf("copy %s: %w", w.table, err)
		}
		return nil
	}
	w.pending = append(w.pending, vals...)
	if len(w.pending) < w.batch*len(w.cols) {
		return nil
	}
	if w.batchStmt == nil {
		stmt, err := w.tx.PrepareContext(w.ctx, w.insertSQL(w.batch))
		if err != nil {
			return fmt.Errorf("insert %s: %w", w.table, err)
		}
		w.batchStmt = stmt
	}
	if _, err := w.batchStmt.ExecContext(w.ctx, w.pending...); err != nil {
		return fmt.Errorf("insert %s: %w", w.table, err)
	}
	w.pending = w.pending[:0]
	return nil
}

// close flushes what is left and ends the statement.
func (w *bulkWriter) close() error {
	if w.copyStmt != nil {
		if _, err := w.copyStmt.ExecContext(w.ctx); err != nil {
			return fmt.Errorf("copy %s: %w", w.table, err)
		}
		return w.copyStmt.Close()
	}
	if w.batchStmt != nil {
		defer w.batchStmt.Close()
	}
	if n := len(w.pending) / len(w.cols); n > 0 {
		if _, err := w.tx.ExecContext(w.ctx, w.insertSQL(n), w.pending...); err != nil {
			return fmt.Errorf("insert %s: %w", w.table, err)
		}
		w.pending = w.pending[:0]
	}
	return nil
}
