// Package netsafe says which addresses barberd may send webhooks to, so an
// account's admin cannot make barberd reach into the network it runs in
// (server-side request forgery): loopback, private, link-local (the cloud
// metadata service at 169.254.169.254 among them), unspecified, multicast,
// shared (CGNAT) and reserved addresses are refused, however written: IPv4,
// IPv6, IPv6 that embeds IPv4 (mapped, compatible, translated, NAT64, 6to4,
// Teredo), and the numeric IPv4 shorthands (2130706433, 0x7f000001,
// 0177.0.0.1, 127.1) that URL parsers and resolvers take for addresses. The
// same rule (Host) runs on the URL when an endpoint is saved and on the host
// dialed (package webhook), and Blocked on the address each connection is
// actually made to, so a name that resolves to a private address, now or
// after a DNS change, is refused too.
package netsafe

import (
	"errors"
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
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): ::127.0.0.1
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT)
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

// Host says what a URL's host (brackets allowed) is: an address (ok) in
// any form the URL parsers of browsers and curl, or the C resolver, read
// as one, numeric IPv4 shorthands included; or a name (!ok, err nil). A
// host that is numeric but no valid address is an error: resolvers
// disagree on what it is.
func Host(host string) (ip netip.Addr, ok bool, err error) {
	h := strings.TrimSuffix(host, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		ip, err := netip.ParseAddr(h[1 : len(h)-1])
		return ip, err == nil, err
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip, true, nil
	}
	parts := strings.Split(h, ".")
	if !numeric(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil // a name: its last label is not a number
	}
	if v, ok := shorthandIPv4(parts); ok {
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
	}
	return netip.Addr{}, false, errors.New("not a valid IP address")
}

// numeric reports whether a host label is a number as inet_aton reads one:
// decimal, octal (leading 0) or hex (0x).
func numeric(label string) bool {
	_, ok := parseNumber(label)
	return ok || (len(label) > 0 && strings.Trim(strings.ToLower(label), "0123456789x") == "")
}

// parseNumber reads one part of an inet_aton address.
func parseNumber(s string) (uint64, bool) {
	base := 10
	switch l := strings.ToLower(s); {
	case strings.HasPrefix(l, "0x"):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is 0, as browsers read it
		}
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	v, err := strconv.ParseUint(s, base, 32)
	return v, err == nil
}

// shorthandIPv4 reads 1 to 4 numeric parts as inet_aton does: the last
// part fills the bytes the others leave (127.1 is 127.0.0.1, 10.1 is
// 10.0.0.1, 2130706433 is 127.0.0.1).
func shorthandIPv4(parts []string) (uint32, bool) {
	if len(parts) > 4 {
		return 0, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseNumber(p)
		if !ok {
			return 0, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return 0, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return 0, false
		}
		v |= n
	}
	return uint32(v), true
}

// CheckHost returns why a URL's host may not be dialed, or "" when it
// may: a Blocked address in any form, a numeric host that is no valid
// address, or a local name; unless allowPrivate. Host names are checked
// again, on what they resolve to, when connecting.
func CheckHost(host string, allowPrivate bool) string {
	if allowPrivate {
		return ""
	}
	ip, isAddr, err := Host(host)
	switch {
	case err != nil:
		return "must be a host name or a valid IP address"
	case isAddr && Blocked(ip):
		return "must not be a loopback, private, link-local or otherwise internal address"
	case !isAddr && isLocalName(host):
		return "must not be a local host name"
	}
	return ""
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
	return CheckHost(host, allowPrivate)
}

// isLocalName reports whether host names this machine or its local network
// by convention; such names are refused at once rather than at connect time.
func isLocalName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") ||
		strings.HasSuffix(h, ".internal")
}
