package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDialRefusesEveryForm sends to a loopback receiver written in each
// form netsafe refuses: none reaches it, every one is refused before a
// connection is made. The same client with allowPrivate reaches it, so the
// refusals are the check's.
func TestDialRefusesEveryForm(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	strict := newClient(time.Second, false)
	for _, host := range []string{
		"127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1", "127.0.0.1.",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "[::1]", "localhost", "127.0.0.1.5",
	} {
		o := post(context.Background(), strict, time.Second, "http://"+host+":"+port+"/", "whsec_AAAA", "ntf_1", []byte(`{}`))
		if !strings.HasPrefix(o.err, "refused:") {
			t.Errorf("%s: %q, want refused", host, o.err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the receiver was reached %d times", n)
	}
	o := post(context.Background(), newClient(time.Second, true), time.Second, srv.URL, "whsec_AAAA", "ntf_1", []byte(`{}`))
	if o.err != "" || calls.Load() != 1 {
		t.Fatalf("allowed: %q, %d calls", o.err, calls.Load())
	}
}
