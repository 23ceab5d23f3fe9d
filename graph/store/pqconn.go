package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
)

// PostgreSQL connections are lib/pq's, with what barberd needs on top.
//
// Arguments as text. With binary_parameters=yes lib/pq sends a query in one
// round trip, but it sends []byte arguments in binary form, which jsonb
// columns (ent's JSON fields) refuse. Every []byte argument goes as text
// instead; barberd has no bytea columns, so nothing is lost.
//
// Dead connections. A restart or failover of PostgreSQL closes every
// connection, and those idle in database/sql's pool only learn it when next
// used. Rather than send a statement on one and then guess whether it ran,
// a connection taken from the pool (or, never used yet, at its first use)
// first looks at its socket: closed by the
// server, reset, or holding anything the server sent unasked (PostgreSQL
// says why it terminates a connection before it closes it), it is reported
// as driver.ErrBadConn and database/sql takes another one, or opens a new
// one, before anything was written. This covers every operation,
// transactions included, in the case a failover actually produces; it is
// the check go-sql-driver/mysql makes too. What remains is a connection
// that dies while a statement is on the wire, and there it matters what the
// statement was:
//
//   - Outside a transaction, a SELECT changes nothing, so it is retried on
//     another connection (as driver.ErrBadConn) however the connection broke.
//   - Any other statement outside a transaction that had been sent may have
//     run: it is not retried (lib/pq would report driver.ErrBadConn and have
//     database/sql run it again), and the caller answers unavailable.
//   - Inside a transaction database/sql never retries: the transaction fails
//     as unavailable and the client retries it (creates are idempotent by
//     external_reference).
//
// A connection that cannot be opened at all is reported as a connectError:
// unavailable, whatever lib/pq's error (a server hanging up during the
// handshake gives a bare io.EOF).

// pqConnector opens lib/pq connections that know their socket, that
// keep their prepared statements unless cache is false, and whose
// transactions send BEGIN with their first statement unless deferBegin is
// false (pipeline.go).
type pqConnector struct {
	pq         *pq.Connector
	cache      bool
	deferBegin bool
}

// newPQConnector connects to dsn, a URL, whose parameters statement_cache
// and deferred_begin (barberd's, not passed on to lib/pq) set to off,
// false or 0 turn the statement cache and the deferred BEGIN off.
func newPQConnector(dsn string) (driver.Connector, error) {
	dsn, switches, err := splitSwitches(dsn)
	if err != nil {
		return nil, err
	}
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	c.Dialer(socketDialer{})
	return pqConnector{c, switches["statement_cache"], switches["deferred_begin"]}, nil
}

// splitSwitches takes barberd's own parameters out of a PostgreSQL URL:
// lib/pq would send them to the server, which refuses names it does not
// know. It returns the URL without them and their values (true unless
// off, false or 0).
func splitSwitches(dsn string) (string, map[string]bool, error) {
	switches := map[string]bool{"statement_cache": true, "deferred_begin": true}
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn, switches, nil // not a URL: lib/pq's key=value form, which has none
	}
	q, found := u.Query(), false
	for name := range switches {
		if !q.Has(name) {
			continue
		}
		switch v := strings.ToLower(q.Get(name)); v {
		case "off", "false", "0":
			switches[name] = false
		case "on", "true", "1":
		default:
			return "", nil, fmt.Errorf("database url: %s=%q: want on or off", name, v)
		}
		q.Del(name)
		found = true
	}
	if found {
		u.RawQuery = q.Encode()
		dsn = u.String()
	}
	return dsn, switches, nil
}

// LibPQURL is a PostgreSQL URL as lib/pq itself takes it: without
// barberd's own parameters (statement_cache, deferred_begin), for a
// connection opened around barberd's driver.
func LibPQURL(dsn string) (string, error) {
	dsn, _, err := splitSwitches(dsn)
	return dsn, err
}

func (c pqConnector) Driver() driver.Driver { return c.pq.Driver() }

func (c pqConnector) Connect(ctx context.Context) (driver.Conn, error) {
	var sock *socket
	cn, err := c.pq.Connect(context.WithValue(ctx, socketKey{}, &sock))
	if err != nil {
		return nil, &connectError{err}
	}
	c2 := &pqConn{pqDriverConn: cn.(pqDriverConn), sock: sock, deferBegin: c.deferBegin, unused: true}
	if c.cache {
		c2.stmts = map[string]driver.Stmt{}
	}
	return c2, nil
}

// socketKey is where Connect asks socketDialer for the connection's socket.
type socketKey struct{}

// socketDialer dials as lib/pq's default dialer does, and gives Connect the
// socket it dialed. lib/pq's cancel requests dial without Connect's
// context, so their sockets are not taken for the connection's.
type socketDialer struct{ d net.Dialer }

func (d socketDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d socketDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d socketDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	s := &socket{Conn: c}
	if slot, ok := ctx.Value(socketKey{}).(**socket); ok {
		*slot = s // a later dial (another host, SSL renegotiated) replaces it
	}
	return s, nil
}

// socket is a connection's network connection, counting what is written
// on it, so a failed statement tells whether it had been sent.
type socket struct {
	net.Conn
	written atomic.Int64 // bytes
	writes  atomic.Int64 // calls: round trips

	// A transaction's BEGIN, kept to ride with its first statement
	// (pipeline.go). lib/pq uses a connection from one goroutine at a
	// time, and so these fields.
	beginning bool     // the next write is lib/pq's BEGIN, to keep
	generic   bool     // with it, the transaction's plans are generic (GenericTx)
	begun     bool     // a BEGIN is kept, not yet sent
	begin     []byte   // its text
	in        []byte   // what reads return before the connection's
	inRead    int      // of in, what they returned
	expect    [][]byte // BEGIN's answers still to take out of the server's
	raw       []byte   // read from the connection, not yet examined
	out       []byte   // the write of BEGIN and the first statement
}

func (s *socket) Write(b []byte) (int, error) {
	if s.beginning {
		if kept, n := s.keepBegin(b); kept {
			return n, nil
		}
	}
	if s.begun && len(b) > 0 {
		if done, n, err := s.sendBegin(b); done {
			return n, err
		}
	}
	return s.write(b)
}

func (s *socket) write(b []byte) (int, error) {
	n, err := s.Conn.Write(b)
	s.writes.Add(1)
	s.written.Add(int64(n))
	return n, err
}

func (s *socket) Read(p []byte) (int, error) {
	if s.held() == 0 && len(s.expect) == 0 {
		return s.Conn.Read(p)
	}
	return s.read(p)
}

// pqDriverConn is everything lib/pq's connection implements that
// database/sql looks for.
type pqDriverConn interface {
	driver.Conn
	driver.QueryerContext
	driver.ExecerContext
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// pqConn is one lib/pq connection. database/sql uses a connection from one
// goroutine at a time, so its fields need no lock.
type pqConn struct {
	pqDriverConn
	sock       *socket // nil if the dialer was not asked (never, with pqConnector)
	deferBegin bool    // BEGIN rides with the first statement (pipeline.go)
	inTx       bool
	// unused: nothing ran on the connection since it was opened, and
	// database/sql may hand it out without ResetSession (firstUse).
	unused bool
	// stmts are the statements prepared on the connection, by their text
	// (nil: no statement cache).
	stmts map[string]driver.Stmt
}

// ResetSession runs when database/sql takes the connection from its pool:
// a connection the server has closed is refused before anything is sent.
func (c *pqConn) ResetSession(ctx context.Context) error {
	if err := c.pqDriverConn.ResetSession(ctx); err != nil {
		return err
	}
	c.unused = false
	return c.alive()
}

// alive is ErrBadConn for a connection whose socket the server closed,
// reset or wrote to unasked while it was idle (idleAlive).
func (c *pqConn) alive() error {
	if c.sock != nil && !idleAlive(c.sock.Conn) {
		return driver.ErrBadConn
	}
	return nil
}

// firstUse makes the check of ResetSession on a connection's first use.
// database/sql resets a connection only once it was used: one it opened in
// the background for a caller who had stopped waiting by the time it was
// ready sits in the pool unchecked, for as long as the pool leaves it
// idle, and a restart meanwhile failed the transaction it was handed to
// (TestUnusedConnectionDropped). A connection used at once costs a look.
func (c *pqConn) firstUse() error {
	if !c.unused {
		return nil
	}
	c.unused = false
	return c.alive()
}

func (c *pqConn) Ping(ctx context.Context) error {
	if err := c.firstUse(); err != nil {
		return err
	}
	return c.pqDriverConn.Ping(ctx)
}

func (c *pqConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.firstUse(); err != nil {
		return nil, err
	}
	sent := c.written()
	var rows driver.Rows
	err := c.run(ctx, query, args, func(st driver.Stmt) (err error) {
		if st == nil {
			rows, err = c.pqDriverConn.QueryContext(ctx, query, args)
		} else {
			rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, args)
		}
		return err
	})
	if err != nil {
		return nil, c.failed(ctx, err, query, sent)
	}
	return rows, nil
}

func (c *pqConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.firstUse(); err != nil {
		return nil, err
	}
	sent := c.written()
	var res driver.Result
	err := c.run(ctx, query, args, func(st driver.Stmt) (err error) {
		if st == nil {
			res, err = c.pqDriverConn.ExecContext(ctx, query, args)
		} else {
			res, err = st.(driver.StmtExecContext).ExecContext(ctx, args)
		}
		return err
	})
	if err != nil {
		return nil, c.failed(ctx, err, query, sent)
	}
	return res, nil
}

// maxStatements bounds the statements a connection keeps prepared; past it,
// statements run unprepared. barberd's statements take few shapes (the
// longest lists are of a unit's barbers), so the bound is seldom reached.
const maxStatements = 128

// prepared is the statement cache. PostgreSQL plans an unprepared
// statement every time it runs; a statement prepared once on the
// connection and run again (its text the same, its arguments bound anew)
// keeps its plan, or, after five runs, a generic plan when that costs no
// more. On the booking path the planning was most of the database's work:
// a barber's day, one statement, ran 2.7 times as often prepared
// (docs/performance.md). It returns nil for a statement that runs
// unprepared: without arguments (a simple query, which may hold several
// statements), with the cache off or full.
func (c *pqConn) prepared(ctx context.Context, query string, args []driver.NamedValue) (driver.Stmt, error) {
	if c.stmts == nil || len(args) == 0 {
		return nil, nil
	}
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	if len(c.stmts) >= maxStatements {
		return nil, nil
	}
	st, err := c.pqDriverConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = st
	return st, nil
}

// run runs query with its arguments (as text) through exec, given the
// query's prepared statement, or nil to run it unprepared. A prepared
// statement the server no longer runs (gone, as after DISCARD ALL, or its
// cached plan refused after the schema under it changed) is forgotten, and
// prepared again by the next run; outside a transaction, where the failed
// run changed nothing, that next run is this one's.
func (c *pqConn) run(ctx context.Context, query string, args []driver.NamedValue, exec func(driver.Stmt) error) error {
	args = asText(args)
	for attempt := 0; ; attempt++ {
		st, err := c.prepared(ctx, query, args)
		if err != nil {
			return err
		}
		err = exec(st)
		var pqErr *pq.Error
		if st == nil || !errors.As(err, &pqErr) || (pqErr.Code != "26000" && pqErr.Code != "0A000") {
			return err
		}
		delete(c.stmts, query)
		if c.inTx || attempt > 0 {
			return err
		}
	}
}

func (c *pqConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.firstUse(); err != nil {
		return nil, err
	}
	riding := c.sock != nil && c.deferBegin
	if riding {
		c.sock.beginning = true // pipeline.go
		c.sock.generic = genericTx(ctx)
	}
	tx, err := c.pqDriverConn.BeginTx(ctx, opts)
	if err == nil && !riding && genericTx(ctx) {
		// BEGIN was sent alone: so is the setting that would ride with it.
		if _, err = c.pqDriverConn.ExecContext(ctx, setGeneric, nil); err != nil {
			_ = tx.Rollback()
		}
	}
	switch {
	case err == nil:
		c.inTx = true
		return pqTx{c, tx}, nil
	case ctx.Err() != nil:
		return nil, canceled(ctx, err)
	case lostConnection(err):
		// BEGIN changes nothing: database/sql may begin on another connection.
		return nil, &badConn{err}
	}
	return nil, err
}

// PrepareContext prepares a statement for database/sql (a sql.Stmt's,
// such as the version reads'), whose runs fail as the connection's own
// statements do (pqStmt).
func (c *pqConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.firstUse(); err != nil {
		return nil, err
	}
	st, err := c.pqDriverConn.PrepareContext(ctx, query)
	switch {
	case err == nil:
		if cs, ok := st.(pqContextStmt); ok {
			return pqStmt{c: c, st: cs, query: query}, nil
		}
		return st, nil // a COPY's (lib/pq's copyin): not a statement that runs again
	case ctx.Err() != nil:
		return nil, canceled(ctx, err)
	case !c.inTx && lostConnection(err):
		// Preparing changes nothing: database/sql may prepare on another
		// connection.
		return nil, &badConn{err}
	}
	return nil, err
}

// pqStmt is a statement prepared through database/sql on a pqConn. Its
// failures are said as pqConn.failed says its own statements': lib/pq
// reports a connection reset while it waited for the answer as the
// network's error, not driver.ErrBadConn, so database/sql handed a read
// that may safely run again on another connection back to its caller (the
// fence's version read, and with it every request waiting on it).
type pqStmt struct {
	c     *pqConn
	st    pqContextStmt // lib/pq's
	query string
}

// pqContextStmt is lib/pq's prepared statement; its COPY FROM STDIN
// statement has no Context forms, and is not wrapped.
type pqContextStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

func (s pqStmt) Close() error  { return s.st.Close() }
func (s pqStmt) NumInput() int { return s.st.NumInput() }

// Exec and Query are driver.Stmt's; database/sql calls the Context forms.
func (s pqStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s pqStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s pqStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	sent := s.c.written()
	res, err := s.st.ExecContext(ctx, asText(args))
	if err != nil {
		return nil, s.c.failed(ctx, err, s.query, sent)
	}
	return res, nil
}

func (s pqStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	sent := s.c.written()
	rows, err := s.st.QueryContext(ctx, asText(args))
	if err != nil {
		return nil, s.c.failed(ctx, err, s.query, sent)
	}
	return rows, nil
}

// named is args as database/sql's Context forms pass them.
func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

func (c *pqConn) written() int64 {
	if c.sock == nil {
		return 0
	}
	return c.sock.written.Load()
}

// failed is the error of a statement that failed on this connection: with
// the context's end when that caused it, and saying whether database/sql
// may run it again on another connection when the connection broke.
func (c *pqConn) failed(ctx context.Context, err error, query string, sentBefore int64) error {
	switch {
	case ctx.Err() != nil:
		return canceled(ctx, err)
	case c.inTx || !lostConnection(err):
		return err
	case readOnly(query):
		return &badConn{err}
	case c.written() != sentBefore:
		return &lostConn{err}
	}
	return err // nothing was sent: lib/pq's driver.ErrBadConn lets database/sql retry
}

// readOnly reports whether a statement outside a transaction only reads, so
// running it twice does no harm.
func readOnly(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// canceled is err, which happened once ctx had ended, as caused by that.
func canceled(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

// pqTx is a transaction of a pqConn, which it tells when it ends.
type pqTx struct {
	c  *pqConn
	tx driver.Tx
}

func (t pqTx) Commit() error {
	t.c.inTx = false
	return t.tx.Commit()
}

func (t pqTx) Rollback() error {
	t.c.inTx = false
	return t.tx.Rollback()
}

func asText(args []driver.NamedValue) []driver.NamedValue {
	for i, a := range args {
		if b, ok := a.Value.([]byte); ok {
			args[i].Value = string(b)
		}
	}
	return args
}
