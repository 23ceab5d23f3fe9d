package store_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/lib/pq"

	"barberd/graph/store"
	"barberd/graph/storetest"
)

// openVia opens a fresh, migrated PostgreSQL database through a proxy.
func openVia(t *testing.T) (*store.DB, *storetest.Proxy, string) {
	t.Helper()
	dbURL := storetest.URL(t, dialect.Postgres)
	proxy := storetest.StartProxy(t, storetest.ProxyTarget(t, dbURL))
	return storetest.OpenURL(t, proxy.URL(dbURL)), proxy, dbURL
}

// probeTable creates the table probe (n int) the tests write, and returns
// their context.
func probeTable(t *testing.T, db *store.DB) context.Context {
	t.Helper()
	ctx := context.Background()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE probe (n int)"); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// fillPool leaves n connections idle in the pool.
func fillPool(t *testing.T, db *store.DB, n int) {
	t.Helper()
	ctx := context.Background()
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close()
	}
}

// A restart or failover closes every connection idle in the pool. What
// comes next must not notice: a ping (/readyz), a read, a write outside a
// transaction and a transaction all succeed, each time, because a
// connection the server closed is replaced before anything is sent on it.
// Before the check, database/sql sent the statement on a dead connection:
// a ping failed outright (a replica whose database is fine said not ready),
// and everything else relied on lib/pq calling the failure ErrBadConn.
func TestPooledConnectionsDropped(t *testing.T) {
	t.Parallel()
	db, proxy, dbURL := openVia(t)
	direct, err := sql.Open("postgres", storetest.LibPQURL(t, dbURL))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx := probeTable(t, db)
	ways := map[string]func() error{
		"proxy drops every connection": func() error { proxy.Drop(); return nil },
		"PostgreSQL terminates every backend": func() error {
			_, err := direct.ExecContext(ctx, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			proxy.WaitClosed()
			return err
		},
	}
	ops := map[string]func() error{
		"ping": func() error { return db.Ping(ctx) },
		"read": func() error {
			var n int
			return db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM probe WHERE n >= $1", 0).Scan(&n)
		},
		"write": func() error {
			_, err := db.SQL.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", 1)
			return err
		},
		"transaction": func() error {
			tx, err := db.SQL.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", 2); err != nil {
				return err
			}
			return tx.Commit()
		},
	}
	for way, drop := range ways {
		for op, run := range ops {
			for round := range 3 {
				fillPool(t, db, 3)
				if err := drop(); err != nil {
					t.Fatal(err)
				}
				if err := run(); err != nil {
					t.Errorf("%s, then %s (round %d): %v (%s)", way, op, round, err, kindName(store.Classify(err)))
				}
			}
		}
	}
}

// database/sql opens a connection in the background for a caller waiting
// on a full pool. When that caller has stopped waiting by the time it is
// ready, the connection goes to the pool without ever being reset, so the
// look at its socket that a pooled connection gets (ResetSession) was never
// made: a restart before its first use failed the transaction it was then
// handed, which the check at its first use now replaces. A round whose
// caller got the connection in time is not counted.
func TestUnusedConnectionDropped(t *testing.T) {
	t.Parallel()
	db, proxy, _ := openVia(t)
	ctx := probeTable(t, db)
	db.SQL.SetMaxOpenConns(1)
	caught := 0
	for round := 0; caught < 3 && round < 100; round++ {
		taken, err := db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waits := db.SQL.Stats().WaitCount
		waitCtx, stop := context.WithCancel(ctx)
		waited := make(chan *sql.Conn, 1)
		go func() {
			c, _ := db.SQL.Conn(waitCtx)
			waited <- c
		}()
		for db.SQL.Stats().WaitCount == waits {
			time.Sleep(100 * time.Microsecond)
		}
		// The taken connection breaks: database/sql closes it and opens
		// another for the waiting caller, who stops waiting.
		_ = taken.Raw(func(any) error { return driver.ErrBadConn })
		stop()
		if c := <-waited; c != nil {
			c.Close()
			continue
		}
		for deadline := time.Now().Add(5 * time.Second); db.SQL.Stats().Idle != 1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the connection opened for the caller never reached the pool: %+v", round, db.SQL.Stats())
			}
		}
		proxy.Drop()
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err == nil {
			if _, err = tx.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", round); err == nil {
				err = tx.Commit()
			}
			_ = tx.Rollback()
		}
		if err != nil {
			t.Fatalf("round %d: a transaction on the pool's unused connection, closed by the server: %v (%s)", round, err, kindName(store.Classify(err)))
		}
		caught++
	}
	if caught == 0 {
		t.Fatal("no round left an unused connection in the pool: the test caught nothing")
	}
}

// A statement outside a transaction whose connection breaks after it was
// sent may have run. A read is run again on another connection, prepared
// (a sql.Stmt, as the version reads are) or not; a write is not (lib/pq
// reports the break as ErrBadConn, and database/sql used to run the insert
// twice): it fails as unreachable, and ran at most once. Each round breaks
// the connection both ways a network does: closed (the client reads the
// end of the stream, which lib/pq calls ErrBadConn) and reset (it reads
// "connection reset by peer", which lib/pq hands on as the network's
// error: a prepared read was not run again, and failed).
func TestConnectionDroppedMidStatement(t *testing.T) {
	t.Parallel()
	db, proxy, _ := openVia(t)
	ctx := probeTable(t, db)
	db.SQL.SetMaxIdleConns(1) // the statement goes on the wire, not on a dead pooled connection
	prepared, err := db.SQL.PrepareContext(ctx, "SELECT count(*) FROM probe WHERE n = $1 AND $2 = 'prepared'")
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close()
	ways := []struct {
		name string
		arm  func() <-chan struct{}
	}{{"closed", proxy.DropMidStatement}, {"reset", proxy.ResetMidStatement}}
	// read runs a read with the proxy armed, the pool holding one live
	// connection for it. The drop may still fire on a connection's opening
	// (the pool's, or database/sql's in the background), which fails as
	// unreachable, as it should, but breaks no statement: the read is
	// made again then.
	read := func(what string, arm func() <-chan struct{}, run func() (int, error)) {
		t.Helper()
		for try := 1; ; try++ {
			if err := db.SQL.PingContext(ctx); err != nil {
				t.Fatalf("%s: ping: %v", what, err)
			}
			fired := arm()
			n, err := run()
			<-fired
			if err != nil && try < 5 && strings.Contains(err.Error(), "connect to the database") {
				t.Logf("%s: the drop fired on a connection's opening: %v", what, err)
				continue
			}
			if err != nil || n != 0 {
				t.Fatalf("%s: %d, %v", what, n, err)
			}
			return
		}
	}
	ran := 0
	for round := range 10 {
		for _, way := range ways {
			what := fmt.Sprintf("round %d, connection %s", round, way.name)
			read(what+": read", way.arm, func() (n int, err error) {
				return n, db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM probe WHERE n = $1", round).Scan(&n)
			})
			// The prepared read twice: on a connection it is not prepared
			// on (what breaks is preparing it), then on the one it was
			// prepared on then (what breaks is its run).
			for _, step := range []string{"prepare", "run"} {
				read(what+": prepared read ("+step+")", way.arm, func() (n int, err error) {
					return n, prepared.QueryRowContext(ctx, round, "prepared").Scan(&n)
				})
			}
		}
		way := ways[round%len(ways)]
		what := fmt.Sprintf("round %d, connection %s", round, way.name)
		if err := db.SQL.PingContext(ctx); err != nil {
			t.Fatalf("%s: ping: %v", what, err)
		}
		fired := way.arm()
		_, err := db.SQL.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", round)
		<-fired
		// The armed drop may fire on other bytes first (the pool closing a
		// surplus connection sends a Terminate message); the insert then
		// runs on a fresh connection and succeeds, once.
		if err != nil && store.Classify(err) != store.Unreachable {
			t.Fatalf("%s: insert: %v (%s), want unreachable", what, err, kindName(store.Classify(err)))
		}
		if errors.Is(err, driver.ErrBadConn) {
			t.Errorf("%s: insert: %v is ErrBadConn: database/sql would run it again", what, err)
		}
		// The database may still be running the insert it was sent, or may
		// never have had all of it: wait for it to show, then make sure it
		// shows once.
		var n int
		count := func() int {
			t.Helper()
			if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM probe WHERE n = $1", round).Scan(&n); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return n
		}
		for deadline := time.Now().Add(2 * time.Second); count() == 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		switch count() {
		case 0:
			if err == nil {
				t.Errorf("%s: the insert succeeded, yet it is not in the database", what)
			}
		case 1:
			ran++
		default:
			t.Errorf("%s: the insert ran %d times, want at most once", what, n)
		}
	}
	if ran == 0 {
		t.Log("no insert reached the database before its connection was dropped: the rounds could not catch one run twice")
	}
}

// A transaction whose connection breaks half-way fails as unreachable, and
// nothing of it is committed.
func TestConnectionDroppedInTransaction(t *testing.T) {
	t.Parallel()
	db, proxy, _ := openVia(t)
	ctx := probeTable(t, db)
	for round := range 5 {
		tx, err := db.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", round); err != nil {
			t.Fatal(err)
		}
		proxy.Drop()
		_, err = tx.ExecContext(ctx, "INSERT INTO probe (n) VALUES ($1)", round)
		if err == nil {
			err = tx.Commit()
		}
		_ = tx.Rollback()
		if k := store.Classify(err); k != store.Unreachable {
			t.Errorf("round %d: the transaction's next statement: %v (%s), want unreachable", round, err, kindName(k))
		}
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM probe").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows committed by broken transactions (%v)", n, err)
	}
}

// A connection that cannot be opened is unreachable, however it fails: no
// listener, a server that hangs up during the handshake, one that never
// answers (connect_timeout), one gone during the handshake of a connection
// among others. Never a bare EOF taken for an internal error.
func TestConnectFailures(t *testing.T) {
	t.Parallel()
	listen := func(t *testing.T, serve func(net.Conn)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go serve(c)
			}
		}()
		return ln.Addr().String()
	}
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	hangUp := listen(t, func(c net.Conn) { c.Close() })
	readThenHangUp := listen(t, func(c net.Conn) { _, _ = c.Read(make([]byte, 512)); c.Close() })
	mute := listen(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	for name, addr := range map[string]string{
		"refused":                 closed,
		"hung up at once":         hangUp,
		"hung up after a request": readThenHangUp,
		"silent":                  mute,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db, err := store.Open(fmt.Sprintf("postgres://postgres@%s/x?sslmode=disable&connect_timeout=1", addr))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = db.SQL.QueryRowContext(ctx, "SELECT 1").Err()
			if k := store.Classify(err); k != store.Unreachable {
				t.Errorf("%v (%s), want unreachable", err, kindName(k))
			}
		})
	}
}

// The requests of a caller who went away end with Canceled, on both
// databases and whatever the statement was doing; a deadline that passed
// is Unreachable (the database did not answer in time).
func TestContextEnded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		slow := "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000000) SELECT count(*) FROM c"
		if db.Dialect == dialect.Postgres {
			slow = "SELECT pg_sleep(10)"
		}
		query := func(ctx context.Context) error {
			var n any
			return db.SQL.QueryRowContext(ctx, slow).Scan(&n)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		if err := query(ctx); store.Classify(err) != store.Canceled {
			t.Errorf("canceled while running: %v (%s), want canceled", err, kindName(store.Classify(err)))
		}
		if err := query(ctx); store.Classify(err) != store.Canceled {
			t.Errorf("canceled before: %v (%s), want canceled", err, kindName(store.Classify(err)))
		}
		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := query(ctx); store.Classify(err) != store.Unreachable {
			t.Errorf("deadline passed while running: %v (%s), want unreachable", err, kindName(store.Classify(err)))
		}
		tx, err := db.SQL.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		var n any
		if err := tx.QueryRowContext(ctx, slow).Scan(&n); store.Classify(err) != store.Canceled {
			t.Errorf("canceled in a transaction: %v (%s), want canceled", err, kindName(store.Classify(err)))
		}
	})
}

// Classify's table for the errors the drivers and the network produce
// without a database to provoke them.
func TestClassifyConnectionErrors(t *testing.T) {
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", errno)}
	}
	for _, c := range []struct {
		err  error
		want store.Kind
	}{
		{io.EOF, store.Unreachable},
		{io.ErrUnexpectedEOF, store.Unreachable},
		{fmt.Errorf("database: %w", driver.ErrBadConn), store.Unreachable},
		{sql.ErrConnDone, store.Unreachable},
		{opErr(syscall.ECONNRESET), store.Unreachable},
		{opErr(syscall.EPIPE), store.Unreachable},
		{os.NewSyscallError("write", syscall.EPIPE), store.Unreachable},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, store.Unreachable},
		{context.DeadlineExceeded, store.Unreachable},
		{&pq.Error{Code: "57P01"}, store.Unreachable}, // admin_shutdown
		{&pq.Error{Code: "57P03"}, store.Unreachable}, // cannot_connect_now
		{&pq.Error{Code: "08006"}, store.Unreachable}, // connection_failure
		{&pq.Error{Code: "53300"}, store.Unreachable}, // too_many_connections
		{&pq.Error{Code: "57014"}, store.Unreachable}, // query_canceled by statement_timeout
		{fmt.Errorf("%w: %w", context.Canceled, &pq.Error{Code: "57014"}), store.Canceled},
		{context.Canceled, store.Canceled},
		{&pq.Error{Code: "40001"}, store.Retry},
		{&pq.Error{Code: "23505"}, store.Unique},
		{&pq.Error{Code: "22021"}, store.Other},
		{errors.New("sql: Transaction has already been committed or rolled back"), store.Other},
	} {
		if got := store.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, kindName(got), kindName(c.want))
		}
	}
}

func kindName(k store.Kind) string {
	return map[store.Kind]string{store.Other: "other", store.Overlap: "overlap", store.Unique: "unique",
		store.Retry: "retry", store.Unreachable: "unreachable", store.Canceled: "canceled"}[k]
}
