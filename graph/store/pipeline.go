package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// A transaction's BEGIN rides with its first statement.
//
// lib/pq sends BEGIN as a query of its own and waits for its answer: a
// round trip, on every transaction, that tells the client nothing it
// could act on (BEGIN on an idle connection does not fail while the
// connection works). The socket (socket) keeps it instead: it answers
// lib/pq's BEGIN itself, as PostgreSQL would, and sends BEGIN to the
// server in front of the transaction's first statement, in the same
// write, as the extended protocol's Parse, Bind and Execute with no Sync
// of their own (the form PostgreSQL's JDBC driver sends). The server runs
// BEGIN, then the statement, in the order written, and the socket takes
// BEGIN's three answers out of what the server sends back before lib/pq
// reads the statement's. Should BEGIN fail all the same, the server skips
// what follows until the statement's Sync, so the statement never runs
// outside the transaction: lib/pq reads BEGIN's error as the statement's,
// and the connection, no longer in a transaction when lib/pq expects one,
// is closed when the transaction ends.
//
// What a transaction sends first decides:
//
//   - a statement of the extended protocol (Parse or Bind: every statement
//     with arguments, prepared or not): BEGIN rides in front of it;
//   - COMMIT or ROLLBACK, nothing sent in between: nothing is sent, and
//     the socket answers as the server would have (nor is BEGIN sent
//     before lib/pq's Terminate, when it closes the connection);
//   - anything else (a simple query: a statement without arguments): BEGIN
//     is sent alone first and its answer read, as lib/pq would have.
//
// A transaction begun under GenericTx has SET LOCAL plan_cache_mode ride
// with its BEGIN, in the same form, so that its first statement already
// runs on its generic plan.

// Protocol message types (PostgreSQL's frontend/backend protocol).
const (
	msgQuery           = 'Q'
	msgParse           = 'P'
	msgBind            = 'B'
	msgExecute         = 'E'
	msgTerminate       = 'X'
	msgParseComplete   = '1'
	msgBindComplete    = '2'
	msgCommandComplete = 'C'
	msgReadyForQuery   = 'Z'
	msgError           = 'E'
	msgNotice          = 'N'
	msgParameterStatus = 'S'
	msgNotification    = 'A'
)

// errProtocol is an answer the socket did not expect while it took out
// BEGIN's: the connection is closed rather than guessed at.
var errProtocol = errors.New("store: unexpected message from the server while a transaction began")

// errBeginRefused is BEGIN's error when it was sent alone: the query
// after it is not sent, and the connection is closed.
var errBeginRefused = errors.New("store: the server refused BEGIN")

// message appends a protocol message of type typ with body to b.
func message(b []byte, typ byte, body ...[]byte) []byte {
	n := 4
	for _, p := range body {
		n += len(p)
	}
	b = append(b, typ)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for _, p := range body {
		b = append(b, p...)
	}
	return b
}

// cstring is s with the protocol's terminating NUL.
func cstring(s string) []byte { return append([]byte(s), 0) }

// answer is the server's answer to a simple query whose command tag is
// tag, leaving the connection in transaction status status ('I' idle, 'T'
// in a transaction).
func answer(tag string, status byte) []byte {
	return message(message(nil, msgCommandComplete, cstring(tag)), msgReadyForQuery, []byte{status})
}

var (
	// begun is BEGIN's answer to a simple query, as lib/pq reads it.
	begun = answer("BEGIN", 'T')
	// begunExtended are BEGIN's answers in the extended form, without a
	// Sync: each message the socket takes out of the server's answer.
	begunExtended = [][]byte{
		message(nil, msgParseComplete),
		message(nil, msgBindComplete),
		message(nil, msgCommandComplete, cstring("BEGIN")),
	}
	// begunAlone are BEGIN's answers when it is sent alone.
	begunAlone = [][]byte{
		message(nil, msgCommandComplete, cstring("BEGIN")),
		message(nil, msgReadyForQuery, []byte{'T'}),
	}
	// Under GenericTx, the setting's answers follow BEGIN's.
	setGenericExtended   = append(slices.Clone(begunExtended[:2]), message(nil, msgCommandComplete, cstring("SET")))
	begunGenericExtended = slices.Concat(begunExtended, setGenericExtended)
	begunGenericAlone    = slices.Insert(slices.Clone(begunAlone), 1, message(nil, msgCommandComplete, cstring("SET")))
)

// setGeneric is what rides with BEGIN under GenericTx; genericPlans is
// the same setting as an expression, made by a statement that has other
// work to do (LockedSchedule's lock), for the statements after it in its
// transaction.
const (
	setGeneric   = "SET LOCAL plan_cache_mode = force_generic_plan"
	genericPlans = `set_config('plan_cache_mode', 'force_generic_plan', true)`
)

// genericKey is the context key of GenericTx's mark.
type genericKey struct{}

// GenericTx returns a context whose transactions (on PostgreSQL) run
// their prepared statements on their generic plans (plan_cache_mode, for
// the transaction alone) from their first statement on, at no round trip:
// the setting rides with BEGIN (with deferred_begin=off, it follows BEGIN
// in a round trip of its own).
//
// Why: PostgreSQL plans a prepared statement afresh for its first five
// runs on a connection, and then again whenever its generic plan's
// estimate is the higher, which for a read of a barber's day or an offer
// pass's statements is nearly always (a third of a barber's holds guessed
// expired, say), for the same plan. An offer pass planned its take, its
// candidates, the barber's lock and its reservations on nearly every
// pass: about 1.5 ms of planning each, 6 ms a pass, more than the pass's
// own work; a guarded hold's read and insert, 0.25–0.45 ms a hold
// (docs/performance.md). The generic plans are the ones the tests check
// (TestWaitingSpanIndex, TestCandidatesPlan, TestLockedScheduleGeneric):
// by an index, whatever the values.
func GenericTx(ctx context.Context) context.Context {
	return context.WithValue(ctx, genericKey{}, true)
}

// genericTx reports whether ctx is GenericTx's.
func genericTx(ctx context.Context) bool {
	g, _ := ctx.Value(genericKey{}).(bool)
	return g
}

// extendedBegin is query (BEGIN, or the setting that rides with it) as
// Parse, Bind and Execute of the unnamed statement and portal, without a
// Sync.
func extendedBegin(b []byte, query []byte) []byte {
	b = message(b, msgParse, []byte{0}, query, []byte{0, 0, 0})
	b = message(b, msgBind, []byte{0, 0}, []byte{0, 0, 0, 0, 0, 0})
	return message(b, msgExecute, []byte{0}, []byte{0, 0, 0, 0})
}

// simpleQuery returns the text of b when b is exactly one simple query.
func simpleQuery(b []byte) ([]byte, bool) {
	if len(b) < 6 || b[0] != msgQuery || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-1 || b[len(b)-1] != 0 {
		return nil, false
	}
	return b[5 : len(b)-1], true
}

// keepBegin is the socket's Write while a transaction begins: lib/pq's
// BEGIN is kept and answered here. Anything else is written as it is.
func (s *socket) keepBegin(b []byte) (bool, int) {
	s.beginning = false
	q, ok := simpleQuery(b)
	if !ok || !bytes.HasPrefix(q, []byte("BEGIN")) {
		s.generic = false
		return false, 0
	}
	s.begin = append(s.begin[:0], q...)
	s.begun = true
	s.in = append(s.in, begun...)
	return true, len(b)
}

// sendBegin writes the kept BEGIN before b, the transaction's first
// message: with it, or (see the package's comment above) not at all, or
// alone first. It reports whether b was handled.
func (s *socket) sendBegin(b []byte) (bool, int, error) {
	s.begun = false
	generic := s.generic
	s.generic = false
	if q, ok := simpleQuery(b); ok {
		switch string(q) {
		case "COMMIT", "ROLLBACK":
			s.in = append(s.in, answer(string(q), 'I')...)
			return true, len(b), nil
		}
	}
	if b[0] == msgTerminate {
		return false, 0, nil // the connection closes: BEGIN is moot
	}
	if b[0] != msgParse && b[0] != msgBind {
		// Alone, its answer read now.
		s.expect = begunAlone
		q := s.begin
		if generic {
			s.expect = begunGenericAlone
			q = slices.Concat(q, []byte("; "+setGeneric))
		}
		if _, err := s.write(message(nil, msgQuery, q, []byte{0})); err != nil {
			return true, 0, err
		}
		for len(s.expect) > 0 {
			refused, err := s.filter()
			if err == nil && refused {
				err = errBeginRefused
			}
			if err != nil {
				// lib/pq reads a write's error as a broken connection.
				_ = s.Conn.Close()
				return true, 0, err
			}
		}
		return false, 0, nil
	}
	s.out = extendedBegin(s.out[:0], s.begin)
	s.expect = begunExtended
	if generic {
		s.out = extendedBegin(s.out, []byte(setGeneric))
		s.expect = begunGenericExtended
	}
	prefix := len(s.out)
	s.out = append(s.out, b...)
	n, err := s.write(s.out)
	if cap(s.out) > 64<<10 {
		s.out = nil // a first statement of large arguments, seldom
	}
	return true, max(0, n-prefix), err
}

// filter reads the server's next message and takes it out if it is the
// next of BEGIN's answers (s.expect); a notice, a parameter's new value or
// a notification is kept for lib/pq, which reads them anywhere; BEGIN's
// error ends the expectation and goes to lib/pq with everything after it.
// It reports whether that was BEGIN's error.
func (s *socket) filter() (refused bool, err error) {
	n, err := s.next()
	if err != nil {
		return false, err
	}
	m := s.raw[:n]
	switch {
	case string(m) == string(s.expect[0]):
		s.expect = s.expect[1:]
	case m[0] == msgNotice || m[0] == msgParameterStatus || m[0] == msgNotification:
		s.in = append(s.in, m...)
	case m[0] == msgError:
		s.in = append(s.in, m...)
		s.expect, refused = nil, true
	default:
		return false, fmt.Errorf("%w: %q", errProtocol, m[0])
	}
	s.raw = append(s.raw[:0], s.raw[n:]...)
	if len(s.expect) == 0 {
		// What was read past BEGIN's answers is lib/pq's.
		s.in = append(s.in, s.raw...)
		s.raw = s.raw[:0]
	}
	return refused, nil
}

// next reads from the connection until s.raw begins with a whole message,
// and returns its length.
func (s *socket) next() (int, error) {
	if err := s.fill(5); err != nil {
		return 0, err
	}
	n := 1 + int(binary.BigEndian.Uint32(s.raw[1:5]))
	if n < 5 || n > 1<<20 {
		return 0, fmt.Errorf("%w: a message of %d bytes", errProtocol, n)
	}
	return n, s.fill(n)
}

// fill reads from the connection until s.raw holds n bytes.
func (s *socket) fill(n int) error {
	for len(s.raw) < n {
		if cap(s.raw)-len(s.raw) < 512 {
			s.raw = append(make([]byte, 0, 2*cap(s.raw)+512), s.raw...)
		}
		k, err := s.Conn.Read(s.raw[len(s.raw):cap(s.raw)])
		s.raw = s.raw[:len(s.raw)+k]
		if err != nil && len(s.raw) < n {
			return err
		}
	}
	return nil
}

// read is the socket's Read: what the socket has for lib/pq first (its
// own answers, and what it read while it took out BEGIN's), then the
// connection's.
func (s *socket) read(p []byte) (int, error) {
	for s.held() == 0 && len(s.expect) > 0 {
		if _, err := s.filter(); err != nil {
			_ = s.Conn.Close()
			return 0, err
		}
	}
	if s.held() > 0 {
		n := copy(p, s.in[s.inRead:])
		s.inRead += n
		if s.inRead == len(s.in) {
			s.in, s.inRead = s.in[:0], 0
		}
		return n, nil
	}
	return s.Conn.Read(p)
}

// held is how many bytes the socket holds for lib/pq's reads.
func (s *socket) held() int { return len(s.in) - s.inRead }
