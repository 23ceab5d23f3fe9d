// Package netsafe says which addresses barberd may send webhooks to, so an
// account's admin cannot make barberd reach into the network it runs in
// (server-side request forgery): loopback, private, link-local (the cloud
// metadata service at 169.254.169.254 among them), unspecified, multicast,
// shared (CGNAT) and reserved addresses are refused, in IPv4, IPv6 and
// IPv4-mapped IPv6 forms alike. The check runs twice: on the URL when an
// endpoint is saved (a literal address), and on the address each
// connection is actually made to (rest/webhook), so a name that resolves to
// a private address, now or after a DNS change, is refused too.
package netsafe

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// MaxURL is the longest webhook URL, in bytes.
const MaxURL = 2048

// refused are the prefixes no webhook may reach, beyond what netip's
// predicates name.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 of any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4, which embeds an IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo, likewise
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// Blocked reports whether ip is an address webhooks must not reach.
func Blocked(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() ||
		ip.IsMulticast() {
		return true
	}
	for _, p := range refused {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// CheckURL returns why raw may not be a webhook URL, or "" when it may: an
// absolute https URL (http too when allowPrivate) with a host, no user
// information, of clean text at most MaxURL bytes long; with a literal
// address, not a Blocked one unless allowPrivate. Host names are checked
// when connecting.
func CheckURL(raw string, allowPrivate bool) string {
	if raw == "" || len(raw) > MaxURL {
		return "must be an absolute https URL of 1 to 2048 characters"
	}
	for _, r := range raw {
		if r > unicode.MaxASCII || unicode.IsControl(r) || unicode.IsSpace(r) {
			return "must be plain ASCII without spaces or control characters (percent-encode the rest)"
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "must be an absolute https URL"
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return "must use https"
	}
	if u.User != nil {
		return "must not hold a user name or password"
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return "must not have a fragment"
	}
	host := u.Hostname()
	if host == "" {
		return "must name a host"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "must have a port between 1 and 65535"
		}
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !allowPrivate && Blocked(ip) {
			return "must not be a loopback, private, link-local or otherwise internal address"
		}
	} else if !allowPrivate && isLocalName(host) {
		return "must not be a local host name"
	}
	return ""
}

// isLocalName reports whether host names this machine or its local network
// by convention; such names are refused at once rather than at connect time.
func isLocalName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") ||
		strings.HasSuffix(h, ".internal")
}
