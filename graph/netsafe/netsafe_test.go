package netsafe_test

import (
	"net/netip"
	"strings"
	"testing"

	"barberd/graph/netsafe"
)

func TestBlocked(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"169.254.169.254", true}, // cloud metadata
		{"fe80::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"100.64.0.1", true},
		{"100.127.255.254", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of the metadata address
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.32.0.1", false},
		{"2606:4700::1111", false},
		{"::ffff:8.8.8.8", false},
		{"::127.0.0.1", true},         // IPv4-compatible (::/96)
		{"::7f00:1", true},            // the same, in hex
		{"::10.0.0.1", true},          // IPv4-compatible, private
		{"::8.8.8.8", true},           // IPv4-compatible is deprecated: every one
		{"::ffff:7f00:1", true},       // IPv4-mapped, in hex
		{"::ffff:a9fe:a9fe", true},    // IPv4-mapped metadata address
		{"::ffff:0:7f00:1", true},     // IPv4-translated (SIIT)
		{"64:ff9b::7f00:1", true},     // NAT64 of loopback
		{"64:ff9b::10.0.0.1", true},   // NAT64 of a private address
		{"64:ff9b:1::a00:1", true},    // local-use NAT64
		{"2002:7f00:1::1", true},      // 6to4 of loopback
		{"2002:a00:1::", true},        // 6to4 of 10.0.0.1
		{"2002:c0a8:101::1", true},    // 6to4 of 192.168.1.1
		{"2001:0:4136:e378::1", true}, // Teredo
		{"fec0::1", true},             // site-local
	} {
		if got := netsafe.Blocked(netip.MustParseAddr(tc.ip)); got != tc.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", tc.ip, got, tc.blocked)
		}
	}
}

func TestHostShorthands(t *testing.T) {
	for host, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"127.1": "127.0.0.1", "10.1": "10.0.0.1", "10.1.2": "10.1.0.2", "0x7f.1": "127.0.0.1",
		"[::127.0.0.1]": "::7f00:1", "134744072": "8.8.8.8", "8.8.8.8": "8.8.8.8",
	} {
		ip, ok, err := netsafe.Host(host)
		if !ok || err != nil || ip.String() != want {
			t.Errorf("Host(%q) = %v, %v, %v; want %s", host, ip, ok, err, want)
		}
	}
	for _, name := range []string{"crm.example.com", "1x.example.com", "localhost"} {
		if _, ok, err := netsafe.Host(name); ok || err != nil {
			t.Errorf("Host(%q) is an address or an error (%v), want a name", name, err)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url          string
		allowPrivate bool
		want         string // part of the reason; "" for a good URL
	}{
		{"https://crm.example.com/hooks/barberd", false, ""},
		{"https://crm.example.com:8443/h?x=1", false, ""},
		{"https://93.184.216.34/h", false, ""},
		{"https://[2606:4700::1111]/h", false, ""},
		{"http://crm.example.com/h", false, "https"},
		{"http://crm.example.com/h", true, ""},
		{"http://127.0.0.1:8080/h", true, ""},
		{"http://localhost:8080/h", true, ""},
		{"ftp://crm.example.com/h", true, "https"},
		{"https://127.0.0.1/h", false, "internal address"},
		{"https://10.0.0.5/h", false, "internal address"},
		{"https://169.254.169.254/latest/meta-data", false, "internal address"},
		{"https://[::ffff:127.0.0.1]/h", false, "internal address"},
		{"https://[fe80::1]/h", false, "internal address"},
		// Every form of a non-public address that a client or resolver
		// reads as one (issue: numeric shorthands were taken for names).
		{"https://[::127.0.0.1]/h", false, "internal address"},
		{"https://[::ffff:7f00:1]/h", false, "internal address"},
		{"https://[::ffff:10.0.0.1]/h", false, "internal address"},
		{"https://[64:ff9b::10.0.0.1]/h", false, "internal address"},
		{"https://[64:ff9b::7f00:1]/h", false, "internal address"},
		{"https://[2002:a00:1::1]/h", false, "internal address"},
		{"https://[2002:7f00:1::1]/h", false, "internal address"},
		{"https://2130706433/h", false, "internal address"},    // decimal 127.0.0.1
		{"https://167772161/h", false, "internal address"},     // decimal 10.0.0.1
		{"https://0x7f000001/h", false, "internal address"},    // hex
		{"https://0X7F000001/h", false, "internal address"},    // hex, upper case
		{"https://0xa9fea9fe/h", false, "internal address"},    // hex metadata address
		{"https://0177.0.0.1/h", false, "internal address"},    // octal
		{"https://0300.0250.0.1/h", false, "internal address"}, // octal 192.168.0.1
		{"https://0x7f.0.0.1/h", false, "internal address"},    // hex part
		{"https://127.1/h", false, "internal address"},         // short form
		{"https://10.1/h", false, "internal address"},          // short form
		{"https://192.168.257/h", false, "internal address"},   // short form, 192.168.1.1
		{"https://127.0.0.1./h", false, "internal address"},    // trailing dot
		{"https://0/h", false, "internal address"},             // 0.0.0.0
		{"https://0x/h", false, "internal address"},            // browsers read 0x as 0
		{"https://127.0.0.1.5/h", false, "valid IP address"},   // five parts
		{"https://09.1.1.1/h", false, "valid IP address"},      // not octal
		{"https://4294967296/h", false, "valid IP address"},    // past 32 bits
		{"https://256.1.1.1/h", false, "valid IP address"},
		{"https://crm.example.com.1/h", false, "valid IP address"}, // ends in a number
		{"https://134744072/h", false, ""},                         // 8.8.8.8: public
		{"https://0x08080808/h", false, ""},
		{"https://1.2.3.example.com/h", false, ""},
		{"https://0xcafe.example.com/h", false, ""},
		{"https://localhost/h", false, "local host name"},
		{"https://metadata.google.internal/h", false, "local host name"},
		{"https://user:pw@crm.example.com/h", false, "user name"},
		{"https://crm.example.com/h#x", false, "fragment"},
		{"https://crm.example.com/a b", false, "spaces"},
		{"https://crm.example.com/\u00e9", false, "ASCII"},
		{"https://crm.example.com/\x00", false, "control"},
		{"https://crm.example.com:0/h", false, "port"},
		{"https://crm.example.com:70000/h", false, "port"},
		{"/relative", false, "absolute"},
		{"https:///nohost", false, "absolute"},
		{"", false, "1 to 2048"},
		{"https://crm.example.com/" + strings.Repeat("a", 2048), false, "1 to 2048"},
	} {
		got := netsafe.CheckURL(tc.url, tc.allowPrivate)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("CheckURL(%q, %v) = %q, want ok", tc.url, tc.allowPrivate, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("CheckURL(%q, %v) = %q, want it to say %q", tc.url, tc.allowPrivate, got, tc.want)
		}
	}
}
