package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"barberd/ent/schema/pulid"
	"barberd/graph/store"
)

// dbFloor measures the database write floor: the essential SQL of a booking,
// one transaction inserting one reservation-like row, under the same
// no-overlap guarantee barberd's reservations table has (an exclusion
// constraint on PostgreSQL, a trigger on SQLite). It runs on a scratch table
// that is dropped afterwards, through store.Open, so the connection pool and
// SQLite settings are the server's.
type dbFloor struct {
	db     *store.DB
	table  string
	insert string
	next   atomic.Int64
	base   time.Time
}

func openDBFloor(ctx context.Context, url string) (*dbFloor, error) {
	db, err := store.Open(url)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	f := &dbFloor{db: db, table: "barberbench_floor_" + hex.EncodeToString(b), base: time.Now().UTC().Truncate(time.Hour)}
	var ddl []string
	if db.Dialect == dialect.Postgres {
		ddl = []string{
			fmt.Sprintf(`CREATE TABLE %s (id varchar PRIMARY KEY, account_id varchar NOT NULL, barber_id varchar NOT NULL,
				starts_at timestamptz NOT NULL, ends_at timestamptz NOT NULL)`, f.table),
			fmt.Sprintf(`CREATE INDEX %[1]s_barber ON %[1]s (barber_id, starts_at)`, f.table),
			`CREATE EXTENSION IF NOT EXISTS btree_gist`,
			fmt.Sprintf(`ALTER TABLE %[1]s ADD CONSTRAINT %[1]s_no_overlap
				EXCLUDE USING gist (barber_id WITH =, tstzrange(starts_at, ends_at, '[)') WITH &&)`, f.table),
		}
		f.insert = fmt.Sprintf(`INSERT INTO %s (id, account_id, barber_id, starts_at, ends_at) VALUES ($1, $2, $3, $4, $5)`, f.table)
	} else {
		ddl = []string{
			fmt.Sprintf("CREATE TABLE %s (id text PRIMARY KEY, account_id text NOT NULL, barber_id text NOT NULL, starts_at datetime NOT NULL, ends_at datetime NOT NULL)", f.table),
			fmt.Sprintf(`CREATE INDEX %[1]s_barber ON %[1]s (barber_id, starts_at)`, f.table),
			fmt.Sprintf(`CREATE TRIGGER %[1]s_no_overlap BEFORE INSERT ON %[1]s
				BEGIN
					SELECT RAISE(ABORT, 'no_overlap') WHERE EXISTS (
						SELECT 1 FROM %[1]s r
						WHERE r.barber_id = NEW.barber_id AND r.starts_at < NEW.ends_at AND NEW.starts_at < r.ends_at);
				END`, f.table),
		}
		f.insert = fmt.Sprintf(`INSERT INTO %s (id, account_id, barber_id, starts_at, ends_at) VALUES (?, ?, ?, ?, ?)`, f.table)
	}
	for _, q := range ddl {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			f.close()
			return nil, fmt.Errorf("db floor: %w", err)
		}
	}
	return f, nil
}

// write is one booking-shaped transaction on a distinct slot.
func (f *dbFloor) write(ctx context.Context) error {
	n := f.next.Add(1)
	// 64 barbers, each booked hour after hour: no two rows overlap.
	start := f.base.Add(time.Duration(n/64) * time.Hour)
	tx, err := f.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, f.insert, pulid.New("rsv"), "acc_barberbench", fmt.Sprintf("brb_floor%02d", n%64),
		start, start.Add(30*time.Minute)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// close drops the scratch table.
func (f *dbFloor) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = f.db.SQL.ExecContext(ctx, "DROP TABLE IF EXISTS "+f.table)
	_ = f.db.Close()
}
