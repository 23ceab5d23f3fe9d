package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"syscall"

	"github.com/lib/pq"
	"modernc.org/sqlite"
)

// Kind is what a database error means to the booking rules.
type Kind int

const (
	Other       Kind = iota
	Overlap          // the no-overlap constraint or trigger refused a reservation
	Unique           // a unique index refused a row
	Retry            // serialization failure, deadlock or busy database: try again
	Unreachable      // the database cannot be reached
)

// SQLite extended result codes.
const (
	sqliteBusy              = 5
	sqliteBusySnapshot      = 517
	sqliteLocked            = 6
	sqliteConstraintTrigger = 1811
	sqliteConstraintUnique  = 2067
	sqliteConstraintPK      = 1555
)

// Classify tells what a database error means.
func Classify(err error) Kind {
	if err == nil {
		return Other
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23P01":
			return Overlap
		case "23505":
			return Unique
		case "40001", "40P01", "55P03":
			return Retry
		}
		switch pe.Code.Class() {
		case "08", "57": // connection exception, operator intervention (shutdown)
			return Unreachable
		}
		return Other
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqliteConstraintTrigger:
			return Overlap
		case sqliteConstraintUnique, sqliteConstraintPK:
			return Unique
		case sqliteBusy, sqliteBusySnapshot, sqliteLocked:
			return Retry
		}
		return Other
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, driver.ErrBadConn) {
		return Unreachable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Unreachable
	}
	return Other
}
