package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"barberd/ent"
	"barberd/graph/model"
	"barberd/graph/store"
)

// Error codes: stable, machine-readable, shared by REST (as "code") and
// GraphQL (as extensions.code). rest/ maps each to an HTTP status in one table.
const (
	CodeInvalidJSON          = "invalid_json"
	CodeValidationFailed     = "validation_failed"
	CodeMissingAPIKey        = "missing_api_key"
	CodeInvalidAPIKey        = "invalid_api_key"
	CodeInsufficientScope    = "insufficient_scope"
	CodeNotFound             = "not_found"
	CodeUnitNotFound         = "unit_not_found"
	CodeServiceNotFound      = "service_not_found"
	CodeBarberNotFound       = "barber_not_found"
	CodeHoldNotFound         = "hold_not_found"
	CodeAppointmentNotFound  = "appointment_not_found"
	CodeNotificationNotFound = "notification_not_found"
	CodeSlotUnavailable      = "slot_unavailable"
	CodeHoldExpired          = "hold_expired"
	CodeHoldAlreadyUsed      = "hold_already_used"
	CodeHoldMismatch         = "hold_mismatch"
	CodeNotCancellable       = "appointment_not_cancellable"
	CodeNotReschedulable     = "appointment_not_reschedulable"
	CodeNotMarkable          = "appointment_not_markable"
	CodeBarberNotEligible    = "barber_not_eligible"
	CodeServiceNotBookable   = "service_not_bookable"
	CodeOutsideWindow        = "outside_booking_window"
	CodeInvalidLocalTime     = "invalid_local_time"
	// CodeTooManyHolds refuses a hold when its key already has as many
	// active holds as it may (its max_active_holds, or
	// Limits.ActiveHoldsPerKey).
	CodeTooManyHolds = "too_many_holds"
	// CodeCatalogFull refuses a unit, service, barber or time off entry
	// past MaxCatalog.
	CodeCatalogFull = "catalog_full"
	CodeInternal    = "internal_error"
	CodeUnavailable = "unavailable"
	// Waitlist refusals: a matching start is free now (book it: the
	// error's Alternatives), the client already waits for the service at
	// the unit (WaitlistEntryID names the entry), the key has as many
	// waiting entries as it may, an unknown entry.
	CodeSlotAvailable         = "slot_available"
	CodeAlreadyWaiting        = "already_waiting"
	CodeTooManyWaitlist       = "too_many_waitlist_entries"
	CodeWaitlistEntryNotFound = "waitlist_entry_not_found"
	// CodeCanceled answers a request whose caller went away (its context
	// was canceled) before the answer: nobody reads it, and it is no
	// failure of the service.
	CodeCanceled = "request_canceled"
)

// Error is a domain error: a stable code and a message safe to show to the
// caller (and the person behind it). Anything that is not an *Error is
// internal: logged, and shown only as internal_error.
type Error struct {
	Code    string
	Message string
	// Fields names every bad input field of a validation_failed error.
	Fields []FieldError
	// Alternatives are the nearest free slots of a slot_unavailable error,
	// or the free matching starts of a slot_available one.
	Alternatives []*model.Slot
	// WaitlistEntryID is the waiting entry of an already_waiting error.
	WaitlistEntryID string
	// HoldCap tells a too_many_holds error's key where it stands.
	HoldCap *HoldCap
	// Err is the cause, for logs only.
	Err error
}

// HoldCap is a key's active holds, its cap, and its oldest active hold:
// the one to release first, or to wait for.
type HoldCap struct {
	Active, Max     int
	OldestHoldID    string
	OldestExpiresAt time.Time
}

// FieldError names one bad input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code DomainError gives err.
func ErrorCode(err error) string {
	return DomainError(err).Code
}

// DomainError is the one classification of failures into domain errors:
// err's own domain error if it has one; else what store.Classify says a
// database failure means: a connection that broke, could not be opened or
// timed out, or a database too busy to serve, are unavailable, and a
// request whose caller went away is request_canceled; anything else is
// internal, its cause kept for the log.
func DomainError(err error) *Error {
	if e, ok := AsError(err); ok {
		return e
	}
	switch store.Classify(err) {
	case store.Unreachable:
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error{Code: CodeUnavailable, Message: "The booking database did not answer in time; try again shortly.", Err: err}
		}
		return &Error{Code: CodeUnavailable, Message: "The booking database is unreachable; try again shortly.", Err: err}
	case store.Retry:
		return &Error{Code: CodeUnavailable, Message: "The booking database is busy; try again shortly.", Err: err}
	case store.Canceled:
		return &Error{Code: CodeCanceled, Message: "The request was canceled before it finished.", Err: err}
	}
	return Internal(err)
}

// MessageInternal is all an internal_error tells its caller, whatever the
// protocol.
const MessageInternal = "Something went wrong on our side."

// Internal is the internal_error of err, which is kept for the log only.
func Internal(err error) *Error {
	return &Error{Code: CodeInternal, Message: MessageInternal, Err: err}
}

// AsError returns err's domain error, if it has one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Problems collects field errors so a caller is told about every bad field
// at once.
type Problems []FieldError

// Add records a bad field.
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err returns a validation_failed error naming every recorded field, or nil.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	names := make([]string, len(p))
	for i, f := range p {
		names[i] = f.Field
	}
	return &Error{
		Code:    CodeValidationFailed,
		Message: "The request has invalid fields: " + strings.Join(names, ", ") + ".",
		Fields:  p,
	}
}

// NotFound turns ent's not-found error into the domain error code with the
// message "No <what> "<id>"."; any other error (or nil) comes back as it is.
func NotFound(err error, code, what, id string) error {
	if ent.IsNotFound(err) {
		return &Error{Code: code, Message: fmt.Sprintf("No %s %q.", what, id), Err: err}
	}
	return err
}
