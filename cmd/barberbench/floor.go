package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"barberd/cmd/barberbench/floor"
	"barberd/graph/store"
)

// dbFloor measures the database write floor: the essential SQL of a create
// (package floor), one transaction per booking on barberd's real tables, on
// distinct slots of a scratch account that is removed afterwards, going
// round as many barbers as the create scenarios do. It opens the database
// through store.Open, so the connection pool and SQLite settings are the
// server's.
type dbFloor struct {
	db    *store.DB
	floor *floor.Floor
	op    string             // the write: create, hold, cancel or reschedule (writes.go)
	pool  chan floor.Booking // what cancels and reschedules change
}

func openDBFloor(ctx context.Context, url string, barbers int, op string) (*dbFloor, error) {
	db, err := store.Open(url)
	if err != nil {
		return nil, err
	}
	f, err := floor.Scratch(ctx, db.SQL, db.Dialect, barbers)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &dbFloor{db: db, floor: f, op: op}, nil
}

// close removes the scratch account and everything the floor wrote.
func (f *dbFloor) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.floor.Close(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "barberbench: %v (scratch account %s left behind)\n", err, f.floor.Target().AccountID)
	}
	_ = f.db.Close()
}
