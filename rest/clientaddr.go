package rest

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr tells the address a request came from, for the limits that
// are kept per client address (anonymous GraphQL, failed authentication).
// Without trusted proxies it is the connection's peer. Behind a load
// balancer every peer is the balancer, so its addresses are named as
// trusted: then the client is the last address in X-Forwarded-For that is
// not a trusted proxy (each proxy appends the peer it saw, so the addresses
// to the right of the first untrusted one are the ones we can believe).
type ClientAddr struct {
	trusted []netip.Prefix
}

// NewClientAddr parses trusted proxies: comma-separated addresses or CIDR
// prefixes (e.g. "10.0.0.0/8,192.168.1.7").
func NewClientAddr(trustedProxies string) (*ClientAddr, error) {
	c := &ClientAddr{}
	for _, s := range strings.Split(trustedProxies, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR prefix", s)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.trusted = append(c.trusted, p.Masked())
	}
	return c, nil
}

// Of returns the client address of r, as text. A nil ClientAddr trusts
// no proxy.
func (c *ClientAddr) Of(r *http.Request) string {
	peer := peerAddr(r.RemoteAddr)
	if c == nil || len(c.trusted) == 0 || !peer.IsValid() || !c.isTrusted(peer) {
		return addrText(peer, r.RemoteAddr)
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				// A hop we cannot read ends what we can believe.
				return peer.String()
			}
			if a = a.Unmap(); !c.isTrusted(a) {
				return a.String()
			}
			peer = a
		}
	}
	return peer.String()
}

func (c *ClientAddr) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

func addrText(a netip.Addr, remote string) string {
	if a.IsValid() {
		return a.String()
	}
	return remote
}
