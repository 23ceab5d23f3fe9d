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
	} {
		if got := netsafe.Blocked(netip.MustParseAddr(tc.ip)); got != tc.blocked {
			t.Errorf("Blocked(%s) = %v, want %v", tc.ip, got, tc.blocked)
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
