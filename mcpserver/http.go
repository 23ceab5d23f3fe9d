package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"barberd/graph/domain"
	"barberd/rest"
)

// MaxBatch is the most JSON-RPC messages one request to /mcp may carry. A
// batch exists only in protocol revisions before 2025-06-18.
const MaxBatch = 10

// batchesRemoved is the protocol revision that removed JSON-RPC batches.
const batchesRemoved = "2025-06-18"

// hygiene makes every answer of h uncacheable and unsniffable (answers
// name clients and phones), and turns the SDK's plain-text transport
// errors (400, 405, 413, 415...) into problem+json.
func hygiene(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		noStore(w.Header()) // for an answer written by no one (an empty 200)
		hw := &hygieneWriter{ResponseWriter: w}
		h.ServeHTTP(hw, r)
		hw.finish(r)
	})
}

func noStore(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// hygieneWriter sets the headers of every answer as it starts, and holds
// back a text/plain error body to answer it as a problem instead.
type hygieneWriter struct {
	http.ResponseWriter
	wrote  bool
	status int          // of a held-back plain-text error
	text   bytes.Buffer // its body (the SDK's one-line messages)
}

func (w *hygieneWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	h := w.Header()
	noStore(h) // again: the SDK sets its own Cache-Control
	if code >= 400 && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *hygieneWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.text.Len() < 1024 {
			w.text.Write(b[:min(len(b), 1024-w.text.Len())])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what is written; the SDK flushes streamed answers.
func (w *hygieneWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *hygieneWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish answers a held-back plain-text error as a problem with the
// SDK's message as detail.
func (w *hygieneWriter) finish(r *http.Request) {
	if w.status == 0 {
		return
	}
	code := map[int]string{
		http.StatusBadRequest:            rest.CodeBadRequest,
		http.StatusNotFound:              domain.CodeNotFound,
		http.StatusMethodNotAllowed:      rest.CodeMethodNotAllowed,
		http.StatusRequestEntityTooLarge: rest.CodePayloadTooLarge,
		http.StatusUnsupportedMediaType:  rest.CodeUnsupportedMediaType,
	}[w.status]
	detail := strings.TrimSpace(w.text.String())
	var err error
	if code == "" {
		err = errors.New("mcp transport: " + strconv.Itoa(w.status) + " " + detail) // internal: logged, not shown
	} else {
		err = domain.Errorf(code, "%s", sentence(detail))
	}
	h := w.Header()
	h.Del("Content-Length")
	if w.status == http.StatusMethodNotAllowed && h.Get("Allow") == "" {
		h.Set("Allow", "GET, POST, DELETE")
	}
	rest.WriteError(w.ResponseWriter, r, err)
}

// sentence makes an SDK message read as a sentence: capital, full stop.
func sentence(s string) string {
	if s == "" {
		return "The request could not be read as MCP."
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// checkOrigin refuses, with 403 origin_not_allowed, a request whose Origin
// header is not one of allowed: a page in a browser (DNS rebinding, a
// site the user visits) may not drive /mcp. A request without Origin (any
// client but a browser) passes, and so does a loopback page (a local MCP
// Inspector) calling a loopback address: a rebound name is not loopback.
func checkOrigin(allowed []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o, present := r.Header["Origin"]
			if present && !(len(o) == 1 && originAllowed(allowed, o[0], r.Host)) {
				rest.WriteError(w, r, domain.Errorf(rest.CodeOriginNotAllowed,
					"Requests from the web origin %q are not allowed; the server's operator can allow it (--mcp-allowed-origins).", strings.Join(o, ", ")))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func originAllowed(allowed []string, origin, host string) bool {
	if slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, origin) }) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && loopback(u.Host) && loopback(host)
}

// loopback tells whether host (with or without a port) names this machine.
func loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// countCalls reads the body (LimitBody bounds it) and notes how many calls
// it carries (rest.WithCalls), so the key's limit and the address's failure
// budget charge each: one, or for a JSON-RPC batch its requests,
// notifications costing nothing. A batch is refused when its protocol revision has none,
// or when it holds more than MaxBatch messages.
func countCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			rest.WriteError(w, r, domain.Errorf(rest.CodePayloadTooLarge, "The request is larger than %d bytes.", tooLarge.Limit))
			return
		case err != nil:
			rest.WriteError(w, r, domain.Errorf(rest.CodeBadRequest, "The request body could not be read."))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) == 0 || trimmed[0] != '[' {
			next.ServeHTTP(w, r)
			return
		}
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= batchesRemoved {
			rest.WriteError(w, r, domain.Errorf(rest.CodeBadRequest,
				"JSON-RPC batches were removed in MCP %s (this request says %s): send one message a request.", batchesRemoved, v))
			return
		}
		var msgs []struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msgs) != nil {
			next.ServeHTTP(w, r) // malformed: the SDK says so
			return
		}
		if len(msgs) > MaxBatch {
			rest.WriteError(w, r, domain.Errorf(rest.CodeBadRequest,
				"A batch holds %d messages; at most %d are allowed in one request.", len(msgs), MaxBatch))
			return
		}
		calls := 0
		for _, m := range msgs {
			if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" {
				calls++
			}
		}
		next.ServeHTTP(w, r.WithContext(rest.WithCalls(r.Context(), calls)))
	})
}

// authError answers a refused key; a 401 says how to authenticate.
func authError(w http.ResponseWriter, r *http.Request, err error) {
	if code := domain.ErrorCode(err); code == domain.CodeInvalidAPIKey || code == domain.CodeMissingAPIKey {
		challenge := `Bearer realm="barberd"`
		if code == domain.CodeInvalidAPIKey {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
	}
	rest.WriteError(w, r, err)
}
