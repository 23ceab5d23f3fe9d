package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"barberd/rest"
)

// checkLoopback refuses any target but this machine: barberbench is a load
// generator, and pointing it elsewhere would be an attack, not a benchmark.
func checkLoopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q: want http://127.0.0.1:PORT", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--url %q: refusing a non-loopback target; barberbench only drives a server on this machine (localhost, 127.0.0.0/8, ::1)", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// apiClient is the HTTP client every simulated chatbot and the HTTP floor
// share: one keep-alive connection per concurrent request.
type apiClient struct {
	root string // scheme://host:port
	key  string
	http *http.Client
}

func newAPIClient(u *url.URL, key string, conns int) *apiClient {
	tr := &http.Transport{
		Proxy:               nil, // never through a proxy: the target is local
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// Whole answers in one read: availability answers run to 80 kB.
		ReadBufferSize: 128 << 10,
	}
	return &apiClient{root: u.Scheme + "://" + u.Host + u.Path, key: key, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// bodies are response buffers, reused so that reading answers costs the
// load generator as little as it can: it shares the machine with the server.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// errStop ends a worker: its phase is over (time or request budget).
var errStop = errors.New("phase over")

// exchange is the outcome of one request.
type exchange struct {
	status int
	code   string // problem code of an error response
	header http.Header
}

// send makes one request to path (under the REST base path unless it
// starts with "//", which is relative to the server root), decodes a 2xx
// body into out, and records the exchange under name.
func (c *apiClient) send(ctx context.Context, rec *recorder, name, method, path string, body, out any) (exchange, error) {
	target := c.root + rest.BasePath + path
	if rootPath, ok := strings.CutPrefix(path, "//"); ok {
		target = c.root + "/" + rootPath
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return exchange{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return exchange{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("X-Service-Api-Key", c.key)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			rec.record(name, time.Since(start), 0, "")
		}
		return exchange{}, err
	}
	buf := bodies.Get().(*bytes.Buffer)
	defer bodies.Put(buf)
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	data := buf.Bytes()
	d := time.Since(start)
	if err != nil {
		if ctx.Err() == nil {
			rec.record(name, d, 0, "")
		}
		return exchange{}, err
	}
	ex := exchange{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode >= 400 {
		var p struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(data, &p)
		ex.code = p.Code
	} else if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			rec.record(name, d, resp.StatusCode, "")
			return ex, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	rec.record(name, d, resp.StatusCode, ex.code)
	return ex, nil
}

// The parts of REST v1 responses the chatbots read.
type (
	apiList[T any] struct {
		Data []T `json:"data"`
	}
	apiUnit struct {
		ID       string `json:"id"`
		Timezone string `json:"timezone"`
	}
	apiService struct {
		ID              string `json:"id"`
		DurationMinutes int    `json:"duration_minutes"`
	}
	apiBarber struct {
		ID string `json:"id"`
	}
	apiSlot struct {
		StartsAt    string    `json:"starts_at"`
		StartsAtUTC time.Time `json:"starts_at_utc"`
		EndsAtUTC   time.Time `json:"ends_at_utc"`
		BarberID    string    `json:"barber_id"`
	}
	apiAvailability struct {
		Slots []apiSlot `json:"slots"`
	}
	apiHold struct {
		HoldID   string `json:"hold_id"`
		BarberID string `json:"barber_id"`
	}
	apiAppointment struct {
		ID       string `json:"id"`
		BarberID string `json:"barber_id"`
		StartsAt string `json:"starts_at"`
	}
)
