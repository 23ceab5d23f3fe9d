package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"barberd/graph/domain"

	"github.com/go-chi/chi/v5"
)

// Codes of the HTTP layer that other adapters (GraphQL, MCP) answer with too.
const (
	CodePayloadTooLarge      = codePayloadTooLarge
	CodeMethodNotAllowed     = codeMethodNotAllowed
	CodeUnsupportedMediaType = codeUnsupportedMediaType
	CodeBadRequest           = codeBadRequest
	CodeOriginNotAllowed     = codeOriginNotAllowed
)

// DefaultMaxBody is the largest request body accepted unless configured
// otherwise (rest-v1.md: 64 KiB).
const DefaultMaxBody = 64 << 10

// Status is the HTTP status of a domain error code, from the one table
// (statusOf); unknown codes are 500.
func Status(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// LimitBody refuses a request whose body is over limit bytes with
// payload_too_large, through onError: at once when Content-Length says so,
// else when a handler reads past the limit (http.MaxBytesReader). With
// buffer, the body is read here, so handlers that cannot tell a cut body
// from a bad one (gqlgen's transports) never see one; the query string of
// a GET counts as its body then.
func LimitBody(limit int64, buffer bool, onError func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	tooLarge := func(w http.ResponseWriter, r *http.Request) {
		onError(w, r, domain.Errorf(codePayloadTooLarge, "The request is larger than %s.", sizeText(limit)))
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit || (buffer && int64(len(r.URL.RawQuery)) > limit) {
				tooLarge(w, r)
				return
			}
			if r.Body == http.NoBody || r.Body == nil {
				next.ServeHTTP(w, r) // nothing to read (net/http's request without a body)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			if buffer {
				b, err := io.ReadAll(r.Body)
				var mbe *http.MaxBytesError
				switch {
				case errors.As(err, &mbe):
					tooLarge(w, r)
					return
				case err != nil:
					onError(w, r, domain.Errorf(domain.CodeInvalidJSON, "The request body could not be read."))
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// sizeText is n bytes for people: "64 KiB", "1 MiB", or bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Allowed lists the methods that the router serving r routes r's path
// for, for the Allow header of a 405 answer.
func Allowed(r *http.Request) string {
	rctx := chi.RouteContext(r.Context())
	if rctx == nil || rctx.Routes == nil {
		return ""
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		// HEAD goes wherever GET does (middleware.GetHead), unrouted.
		if rctx.Routes.Match(chi.NewRouteContext(), m, r.URL.Path) ||
			m == http.MethodHead && slices.Contains(allow, http.MethodGet) {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}
