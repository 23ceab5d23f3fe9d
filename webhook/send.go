// Package webhook sends each account's notifications to its webhook
// endpoints (docs/webhooks.md), beside the polling feed of package rest and
// through the same resolver.
//
// A delivery is an HTTP POST of the notification's JSON, exactly as an item
// of GET /notifications/pending shows it, signed as Standard Webhooks
// (standardwebhooks.com) define: header webhook-id is the notification's
// id, the same on every retry; webhook-timestamp the attempt's Unix time in
// seconds; webhook-signature "v1," and the base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>" keyed with the base64-decoded part of the
// endpoint's secret after "whsec_". Any 2xx within the timeout delivers it.
// Anything else (another status, a redirect, which is never followed, a
// timeout, a refused connection) is retried with exponential backoff and
// jitter until the retries' time limit passes; then the delivery fails and
// its endpoint is marked failing.
//
// Every replica runs a Worker. A worker claims an endpoint with a lease
// before it sends anything to it; while the lease runs no other worker
// claims the endpoint, so two replicas never send the same attempt at once
// and one endpoint's deliveries go out one at a time, oldest first. A
// worker that dies mid-delivery leaves the delivery pending: once the lease
// runs out another worker sends it again. A worker shares its senders among
// accounts (at most PerAccount endpoints of one account, accounts in turn),
// and an endpoint whose delivery failed backs off before it is claimed
// again. The queue's reads and writes are graph/store's (webhooks.go).
//
// Outbound requests never use a proxy, read at most MaxResponse bytes of an
// answer, and connect only to public addresses (package netsafe), checked
// on the address each connection is made to, so a host name that resolves
// to a private address, now or later, is refused too; unless AllowPrivate.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"barberd/graph/netsafe"
)

// MaxResponse is how much of an endpoint's answer is read before the
// connection is closed.
const MaxResponse = 64 << 10

// UserAgent names barberd in every request.
const UserAgent = "barberd-webhooks/1"

// Sign returns the webhook-signature of a request: "v1," and the base64
// HMAC-SHA256 of id.timestamp.body keyed with the secret's key.
func Sign(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// errRefusedAddress is a connection refused by the address check.
var errRefusedAddress = errors.New("refused address")

// newClient returns the HTTP client of deliveries: no proxy, no redirects,
// connections only to public addresses unless allowPrivate, and dial and
// TLS handshake bounded by timeout (the whole request is bounded by its
// context).
func newClient(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		// Control sees the address actually connected to, after any DNS
		// lookup: what a rebinding name resolves to is checked too.
		d.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return errRefusedAddress
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || netsafe.Blocked(ip) {
				return errRefusedAddress
			}
			return nil
		}
	}
	dial := d.DialContext
	if !allowPrivate {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			return dialChecked(ctx, d, network, address)
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // never the environment's proxy: it would reach what the check refuses
			DialContext:            dial,
			TLSHandshakeTimeout:    timeout,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: MaxResponse,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialChecked dials address after the check URLs get when saved
// (netsafe.CheckHost), so a host saved before the rule grew is refused too;
// an address written in a numeric shorthand is dialed as the address it
// names rather than looked up in DNS.
func dialChecked(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil || netsafe.CheckHost(host, false) != "" {
		return nil, errRefusedAddress
	}
	if ip, isAddr, _ := netsafe.Host(host); isAddr {
		address = net.JoinHostPort(ip.String(), port)
	}
	return d.DialContext(ctx, network, address)
}

// outcome is what one request came to.
type outcome struct {
	status  *int
	latency time.Duration
	err     string // "": delivered
}

// post sends one signed delivery and says how it went. Its error text is
// safe to show the account: it names no address the account did not give.
func post(ctx context.Context, c *http.Client, timeout time.Duration, url, secret, id string, body []byte) outcome {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	began := time.Now()
	ts := began.Unix()
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		return outcome{err: "the endpoint's secret is not valid base64"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return outcome{err: "the URL is not valid"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := c.Do(req)
	if err != nil {
		return outcome{latency: time.Since(began), err: describe(ctx, err, timeout)}
	}
	_, rerr := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponse))
	resp.Body.Close()
	o := outcome{status: &resp.StatusCode, latency: time.Since(began)}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		o.err = fmt.Sprintf("HTTP %d: redirects are not followed", resp.StatusCode)
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		o.err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	case rerr != nil && ctx.Err() != nil:
		o.err = fmt.Sprintf("timed out after %s reading the answer", timeout)
	}
	return o
}

// describe says briefly and safely why a request got no answer.
func describe(ctx context.Context, err error, timeout time.Duration) string {
	var dns *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, errRefusedAddress):
		return "refused: the host is a loopback, private, link-local or otherwise internal address"
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %s", timeout)
	case ctx.Err() != nil:
		return "stopped: barberd was shutting down"
	case errors.As(err, &dns):
		return "the host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.As(err, &certErr), errors.As(err, &recordErr):
		return "TLS handshake failed"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	return "connection failed"
}
