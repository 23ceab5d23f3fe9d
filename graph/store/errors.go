package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
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
	Unreachable      // the connection failed, could not be opened, or timed out
	Canceled         // the caller's context was canceled: nobody waits for the answer
)

// SQLite extended result codes.
const (
	sqliteBusy              = 5
	sqliteBusySnapshot      = 517
	sqliteLocked            = 6
	sqliteInterrupt         = 9 // only ever raised when a context ends
	sqliteConstraintTrigger = 1811
	sqliteConstraintUnique  = 2067
	sqliteConstraintPK      = 1555
)

// Classify tells what a database error means. It is the one place that
// knows the errors of both databases, their drivers and the network.
func Classify(err error) Kind {
	if err == nil {
		return Other
	}
	if errors.Is(err, context.Canceled) {
		return Canceled
	}
	var ce *connectError
	if errors.As(err, &ce) {
		return Unreachable
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
		// Connection exception; operator intervention (shutdown, a
		// statement timeout: query_canceled without a canceled context);
		// insufficient resources (too many connections).
		case "08", "57", "53":
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
		case sqliteInterrupt:
			return Canceled
		}
		return Other
	}
	if lostConnection(err) || errors.Is(err, context.DeadlineExceeded) {
		return Unreachable
	}
	return Other
}

// lostConnection reports whether err is a failure of the connection itself
// rather than of a statement: it broke, was refused or timed out. lib/pq
// reports a connection that broke as driver.ErrBadConn when it ended
// cleanly, as the *net.OpError of the read or write when it was reset, and
// as a bare io.EOF while a new connection was starting up.
func lostConnection(err error) bool {
	var ne net.Error
	var lc *lostConn
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &ne), errors.As(err, &lc):
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// connectError is a failure to open a connection: whatever the cause (the
// host, the network, a server starting up or out of connections, or one
// that hung up during the handshake), the database is unreachable.
type connectError struct{ err error }

func (e *connectError) Error() string { return "connect to the database: " + e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// lostConn is a connection that broke after a statement that may change
// data was sent on it. It deliberately is not driver.ErrBadConn, which
// would make database/sql run the statement again on another connection.
type lostConn struct{ err error }

func (e *lostConn) Error() string { return "connection lost during the statement: " + e.err.Error() }
func (e *lostConn) Unwrap() error {
	if errors.Is(e.err, driver.ErrBadConn) {
		return nil // the cause's text is kept in Error; ErrBadConn must not show through
	}
	return e.err
}

// badConn marks a statement that may safely run again as failed on a bad
// connection, so database/sql retries it on another one, keeping the cause.
type badConn struct{ err error }

func (e *badConn) Error() string   { return e.err.Error() }
func (e *badConn) Unwrap() []error { return []error{driver.ErrBadConn, e.err} }
