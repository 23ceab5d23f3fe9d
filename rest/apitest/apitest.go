// Package apitest makes HTTP exchanges with barberd in tests, as its
// clients do: a request with an API key and a JSON body, and the whole
// answer, for REST, GraphQL and MCP alike.
package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Answer is one exchange's status, header and body.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (a *Answer) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.Body, &m); err != nil {
		t.Fatalf("response body is not a JSON object: %v: %s", err, a.Body)
	}
	return m
}

// Decode decodes the body into v.
func (a *Answer) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, a.Body)
	}
}

// Code is the problem code of an error answer, or "".
func (a *Answer) Code() string {
	var p struct{ Code string }
	_ = json.Unmarshal(a.Body, &p)
	return p.Code
}

// NewRequest builds a request to url with the API key key (none when "")
// and body: none when nil, a string, []byte or io.Reader as it is, and
// anything else encoded as JSON.
func NewRequest(method, url, key string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewBuffer(b)
	case io.Reader:
		rd = b
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewBuffer(buf)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Service-Api-Key", key)
	}
	return req, nil
}

// Send performs req with c (http.DefaultClient when nil) and reads the
// whole answer. It returns errors rather than failing a test, so
// goroutines may use it.
func Send(c *http.Client, req *http.Request) (*Answer, error) {
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Do is NewRequest, then Send.
func Do(c *http.Client, method, url, key string, body any) (*Answer, error) {
	req, err := NewRequest(method, url, key, body)
	if err != nil {
		return nil, err
	}
	return Send(c, req)
}
