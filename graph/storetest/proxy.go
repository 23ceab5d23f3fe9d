package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy forwards TCP connections from a local port to a database, and fails
// them on demand the ways a database's network can: every open connection
// dropped (a restart or failover), dropped in the middle of a statement,
// new connections refused, or a host gone silent.
type Proxy struct {
	t      testing.TB
	target string
	// Addr is 127.0.0.1:PORT, the same for the proxy's whole life.
	Addr string

	mu        sync.Mutex
	ln        net.Listener
	conns     map[net.Conn]struct{}
	blackhole bool          // accept connections but never answer
	armed     chan struct{} // non-nil: drop everything on the next bytes a client sends, then close it
	reset     bool          // with armed: reset the connections rather than close them
}

// StartProxy listens on a fresh local port and forwards to target
// (host:port).
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{t: t, target: target, Addr: "127.0.0.1:0", conns: map[net.Conn]struct{}{}}
	if err := p.listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Cut)
	return p
}

// ProxyTarget is the host:port of a PostgreSQL URL.
func ProxyTarget(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Port() == "" {
		return u.Hostname() + ":5432"
	}
	return u.Host
}

// URL returns dbURL reaching its database through the proxy.
func (p *Proxy) URL(dbURL string) string {
	p.t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.Addr
	return u.String()
}

func (p *Proxy) listen() error {
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln, p.Addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c, ln)
		}
	}()
	return nil
}

// track registers c, or closes it and says false when ln no longer serves.
func (p *Proxy) track(c net.Conn, ln net.Listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != ln || p.ln == nil {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) forward(client net.Conn, ln net.Listener) {
	if !p.track(client, ln) {
		return
	}
	p.mu.Lock()
	silent := p.blackhole
	p.mu.Unlock()
	if silent {
		_, _ = io.Copy(io.Discard, client)
		p.untrack(client)
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.untrack(client)
		return
	}
	if !p.track(server, ln) {
		p.untrack(client)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if _, werr := server.Write(buf[:n]); werr != nil {
					break
				}
				p.fire()
			}
			if err != nil {
				break
			}
		}
		p.untrack(client, server) // either side ending ends both
	})
	wg.Go(func() {
		_, _ = io.Copy(client, server)
		p.untrack(client, server)
	})
	wg.Wait()
}

// fire drops every connection if DropMidStatement armed the proxy.
func (p *Proxy) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed != nil {
		if p.reset {
			p.resetConns()
		}
		p.dropConns()
		close(p.armed)
		p.armed = nil
	}
}

// Open is the number of connections through the proxy, counting each
// client's and its server's apart.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// WaitClosed waits until every connection open through the proxy when it
// is called has closed, as after the database closed them all; connections
// opened since do not count.
func (p *Proxy) WaitClosed() {
	p.t.Helper()
	open := p.Since()
	for deadline := time.Now().Add(10 * time.Second); open() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("proxy: %d connections still open after 10 s", open())
		}
	}
}

// Since returns a function telling how many of the connections open now
// through the proxy are still open.
func (p *Proxy) Since() func() int {
	p.mu.Lock()
	was := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		was = append(was, c)
	}
	p.mu.Unlock()
	return func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, c := range was {
			if _, ok := p.conns[c]; ok {
				n++
			}
		}
		return n
	}
}

// Drop closes every connection through the proxy and goes on accepting
// new ones, as a database restart or failover does.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropConns()
}

// DropMidStatement arms the proxy: the next bytes a client sends (a
// statement, or a connection's startup) reach the database, and then every
// connection is closed before an answer can come back. The returned channel
// is closed when that has happened.
func (p *Proxy) DropMidStatement() <-chan struct{} {
	return p.arm(false)
}

// ResetMidStatement is DropMidStatement with every connection reset (a TCP
// RST) rather than closed: the client reads "connection reset by peer"
// where a close lets it read the end of the stream, as when a host that
// dies or a firewall that forgets the connection answers what it is sent.
func (p *Proxy) ResetMidStatement() <-chan struct{} {
	return p.arm(true)
}

func (p *Proxy) arm(reset bool) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == nil {
		p.armed = make(chan struct{})
	}
	p.reset = reset
	return p.armed
}

// Cut closes the listener, so new connections are refused, and every
// connection through the proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	p.dropConns()
}

// Silence closes every connection through the proxy and leaves new ones
// unanswered: the database's host is gone without a word.
func (p *Proxy) Silence() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole = true
	p.dropConns()
}

// Speak ends Silence: new connections are forwarded again.
func (p *Proxy) Speak() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blackhole = false
	p.dropConns()
}

// dropConns closes every connection through the proxy; p.mu is held.
func (p *Proxy) dropConns() {
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// resetConns makes the close of every connection through the proxy a
// reset; p.mu is held.
func (p *Proxy) resetConns() {
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
}

// Restore listens again on the same port after Cut.
func (p *Proxy) Restore() {
	p.t.Helper()
	var err error
	for range 50 {
		if err = p.listen(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("proxy: listen again on %s: %v", p.Addr, err)
}
