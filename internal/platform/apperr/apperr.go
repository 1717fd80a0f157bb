// Package apperr is tsekh's one error type: a code that says what went wrong
// in business terms, a message a person can act on, and (for validation) the
// fields at fault. Services return these; the HTTP layer maps codes to status
// codes in one place and never shows an internal error's text to a client.
package apperr

import (
	"errors"
	"fmt"
)

// Error codes. Each maps to one HTTP status in api/errors.go.
const (
	EBADREQUEST    = "bad_request"            // the request cannot be read (malformed JSON, bad header)
	EMETHOD        = "method_not_allowed"     // the path does not take the method
	EMEDIATYPE     = "unsupported_media_type" // the body is not of a type the path takes (not JSON)
	ENOTACCEPTABLE = "not_acceptable"         // the Accept header allows none of the types the path answers in
	EINVALID       = "invalid"                // the input is malformed or fails validation
	ENOTFOUND      = "not_found"              // the object does not exist
	ECONFLICT      = "conflict"               // the request conflicts with the current state
	EUNAUTHORIZED  = "unauthorized"           // no or bad credentials
	EFORBIDDEN     = "forbidden"              // credentials are fine, the role is not enough
	EUNPROCESSABLE = "unprocessable"          // well-formed, but cannot be applied (e.g. an idempotency key reused with another body)
	ETOOLARGE      = "too_large"              // the body is over its limit
	EHEADERS       = "headers_too_large"      // the request's line and headers are over their limit
	EUNAVAILABLE   = "unavailable"            // a dependency (the database) is not reachable
	EINTERNAL      = "internal"               // a bug or an unexpected failure
)

// FieldError names one invalid input field, with its path as the client sent
// it (for instance "items[0].sku").
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an application error.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	Err     error // the cause, for logs only
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error naming the fields at fault.
func Invalid(message string, fields ...FieldError) *Error {
	return &Error{Code: EINVALID, Message: message, Fields: fields}
}

// Field is a shorthand for a FieldError.
func Field(field, format string, args ...any) FieldError {
	return FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns an ENOTFOUND error for the object named.
func NotFound(format string, args ...any) *Error { return Errorf(ENOTFOUND, format, args...) }

// Conflict returns an ECONFLICT error.
func Conflict(format string, args ...any) *Error { return Errorf(ECONFLICT, format, args...) }

// Code returns the code of err, EINTERNAL for errors that are not *Error and
// "" for nil.
func Code(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// As returns err as *Error, or nil when it is not one.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
