//go:build !unix

package store

import "net"

// idleAlive cannot look at a socket here: the statement finds out.
func idleAlive(net.Conn) bool { return true }
