//go:build unix

package store

import (
	"net"
	"syscall"
)

// idleAlive reports whether an idle connection's socket is still open with
// nothing to read: the server neither closed nor reset it, nor sent
// anything (which, to an idle connection, is the reason it is about to
// close it). It peeks without blocking and consumes nothing.
func idleAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true // cannot look: let the statement find out
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var (
		buf  [1]byte
		rerr error
	)
	// Go's sockets are non-blocking, so the peek answers at once; returning
	// true tells Read not to wait for the socket to become readable.
	if err := raw.Read(func(fd uintptr) bool {
		for {
			_, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK)
			if rerr != syscall.EINTR {
				return true
			}
		}
	}); err != nil {
		return false
	}
	// Nothing to read is the only answer of a healthy idle connection: a
	// read of 0 bytes is the server's close, of more is its last words, and
	// any other error (a reset) a broken connection.
	return rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
}
