package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"barberd/graph/domain"
	"barberd/graph/slots"
)

// statusOf is the one table from domain error codes to HTTP statuses.
var statusOf = map[string]int{
	domain.CodeInvalidJSON:           http.StatusBadRequest,
	domain.CodeValidationFailed:      http.StatusBadRequest,
	domain.CodeMissingAPIKey:         http.StatusUnauthorized,
	domain.CodeInvalidAPIKey:         http.StatusUnauthorized,
	domain.CodeInsufficientScope:     http.StatusForbidden,
	domain.CodeNotFound:              http.StatusNotFound,
	domain.CodeUnitNotFound:          http.StatusNotFound,
	domain.CodeServiceNotFound:       http.StatusNotFound,
	domain.CodeBarberNotFound:        http.StatusNotFound,
	domain.CodeHoldNotFound:          http.StatusNotFound,
	domain.CodeAppointmentNotFound:   http.StatusNotFound,
	domain.CodeNotificationNotFound:  http.StatusNotFound,
	domain.CodeWaitlistEntryNotFound: http.StatusNotFound,
	domain.CodeSlotAvailable:         http.StatusConflict,
	domain.CodeAlreadyWaiting:        http.StatusConflict,
	domain.CodeTooManyWaitlist:       http.StatusTooManyRequests, // no Retry-After: leaving an entry is the remedy
	codeMethodNotAllowed:             http.StatusMethodNotAllowed,
	domain.CodeSlotUnavailable:       http.StatusConflict,
	domain.CodeHoldExpired:           http.StatusConflict,
	domain.CodeHoldAlreadyUsed:       http.StatusConflict,
	domain.CodeHoldMismatch:          http.StatusConflict,
	domain.CodeNotCancellable:        http.StatusConflict,
	domain.CodeNotReschedulable:      http.StatusConflict,
	domain.CodeNotMarkable:           http.StatusConflict,
	codePayloadTooLarge:              http.StatusRequestEntityTooLarge,
	codeUnsupportedMediaType:         http.StatusUnsupportedMediaType,
	domain.CodeBarberNotEligible:     http.StatusUnprocessableEntity,
	domain.CodeServiceNotBookable:    http.StatusUnprocessableEntity,
	domain.CodeOutsideWindow:         http.StatusUnprocessableEntity,
	domain.CodeInvalidLocalTime:      http.StatusUnprocessableEntity,
	codeRateLimited:                  http.StatusTooManyRequests,
	codeBadRequest:                   http.StatusBadRequest,
	codeOriginNotAllowed:             http.StatusForbidden,
	domain.CodeCatalogFull:           http.StatusConflict,
	domain.CodeTooManyHolds:          http.StatusTooManyRequests, // no Retry-After: releasing or booking a hold is the remedy, not waiting
	domain.CodeInternal:              http.StatusInternalServerError,
	domain.CodeUnavailable:           http.StatusServiceUnavailable,
	domain.CodeCanceled:              statusClientClosedRequest,
}

// statusClientClosedRequest answers a request whose client went away before
// the answer (nginx's 499): nobody reads it, but the access log and the
// metrics tell it from a failure, and it is not logged as one.
const statusClientClosedRequest = 499

// Codes that only the HTTP layer produces.
const (
	codeMethodNotAllowed     = "method_not_allowed"
	codePayloadTooLarge      = "payload_too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
	codeRateLimited          = "rate_limited"
	codeBadRequest           = "bad_request"        // a request the transport cannot read (MCP)
	codeOriginNotAllowed     = "origin_not_allowed" // a browser page's Origin not allowed (MCP)
)

// retryAfterSeconds is what a 503 tells the client to wait.
const retryAfterSeconds = 2

// problemTypeBase prefixes the code to form the problem's type URI.
const problemTypeBase = "https://barberd.dev/problems/"

// Problem is an RFC 9457 problem detail, barberd's one error body.
type Problem struct {
	Type         string              `json:"type"`
	Title        string              `json:"title"`
	Status       int                 `json:"status"`
	Detail       string              `json:"detail"`
	Code         string              `json:"code"`
	RequestID    string              `json:"request_id"`
	Errors       []domain.FieldError `json:"errors,omitempty"`
	Alternatives []Slot              `json:"alternatives,omitzero"` // present, maybe empty, for slot_unavailable and slot_available
	// WaitlistEntryID is the client's waiting entry, for already_waiting.
	WaitlistEntryID string `json:"waitlist_entry_id,omitempty"`
	// For too_many_holds: the key's active holds, its cap, and its oldest
	// active hold with its expiry.
	ActiveHolds         *int   `json:"active_holds,omitempty"`
	ActiveHoldsMax      *int   `json:"active_holds_max,omitempty"`
	OldestHoldID        string `json:"oldest_hold_id,omitempty"`
	OldestHoldExpiresAt string `json:"oldest_hold_expires_at,omitempty"`
}

// WriteError renders err as problem+json (ProblemOf), as every v1 error
// is; adapters beside REST (the MCP endpoint) answer their HTTP refusals
// with it too.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p := ProblemOf(r.Context(), err)
	WriteStatus(w, p.Status, "application/problem+json")
	_ = json.NewEncoder(w).Encode(p)
}

// WriteStatus writes the head of an error answer with the given status and
// Content-Type: a 503 tells the client, in Retry-After, how long to wait.
// Other protocols over HTTP (GraphQL) answer their refusals with it.
func WriteStatus(w http.ResponseWriter, status int, contentType string) {
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
}

// ProblemOf is the problem that tells of err, with ctx's request id.
// Errors that are not domain errors are classified (graph.DomainError);
// what is internal is logged with ctx's logger and shown as internal_error,
// so nothing internal reaches the client.
func ProblemOf(ctx context.Context, err error) Problem {
	e := domain.DomainError(err)
	status, known := statusOf[e.Code]
	if !known {
		status = http.StatusInternalServerError
	}
	if status >= 500 {
		loggerFrom(ctx).ErrorContext(ctx, "request failed", "code", e.Code, "err", e.Err)
	}
	title := http.StatusText(status)
	if status == statusClientClosedRequest {
		title = "Client Closed Request"
	}
	p := Problem{
		Type:      problemTypeBase + e.Code,
		Title:     title,
		Status:    status,
		Detail:    e.Message,
		Code:      e.Code,
		RequestID: requestID(ctx),
		Errors:    e.Fields,
	}
	if status == http.StatusInternalServerError {
		p.Code, p.Type, p.Detail = domain.CodeInternal, problemTypeBase+domain.CodeInternal, domain.MessageInternal
	}
	if e.Code == domain.CodeSlotUnavailable || e.Code == domain.CodeSlotAvailable {
		p.Alternatives = []Slot{}
	}
	p.WaitlistEntryID = e.WaitlistEntryID
	for _, s := range e.Alternatives {
		p.Alternatives = append(p.Alternatives, SlotOf(s))
	}
	if c := e.HoldCap; c != nil {
		p.ActiveHolds, p.ActiveHoldsMax = &c.Active, &c.Max
		p.OldestHoldID, p.OldestHoldExpiresAt = c.OldestHoldID, slots.UTC(c.OldestExpiresAt)
	}
	return p
}

// logger returns the request's logger.
func logger(r *http.Request) *slog.Logger { return loggerFrom(r.Context()) }

// loggerFrom returns ctx's logger (Middleware, WithRequestID), or the default.
func loggerFrom(ctx context.Context) *slog.Logger {
	if st := stateOf(ctx); st != nil {
		return st.log.logger()
	}
	return slog.Default()
}

// logEnabled reports whether ctx's logger logs at level, without making it.
func logEnabled(ctx context.Context, level slog.Level) bool {
	if st := stateOf(ctx); st != nil {
		return st.log.base.Enabled(ctx, level)
	}
	return slog.Default().Enabled(ctx, level)
}

// jsonContentType is the Content-Type of JSON answers, shared as
// noStoreValue is.
var jsonContentType = []string{"application/json"}

// writeJSON renders v with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeEncoded(w, status, encodeJSON(v))
}

// encodeJSON is v as JSON, with a newline after it.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v) // the adapter's types always encode
	return b.Bytes()
}

// writeEncoded writes a JSON body encoded already.
func writeEncoded(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	// Known length: one write, no chunked framing for large answers.
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
