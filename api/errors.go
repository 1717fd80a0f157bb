package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Problem is an RFC 9457 problem detail, the body of every error response.
type Problem struct {
	// A URI naming the kind of problem, e.g. "urn:tsekh:problem:invalid".
	Type string `json:"type" validate:"required" example:"urn:tsekh:problem:invalid"`
	// A short summary of the kind of problem.
	Title string `json:"title" validate:"required" example:"Invalid request"`
	// The HTTP status code.
	Status int `json:"status" validate:"required" example:"422"`
	// What went wrong this time, for a person to act on.
	Detail string `json:"detail" validate:"required" example:"the order is not valid"`
	// The request path.
	Instance string `json:"instance,omitempty" example:"/api/v1/orders"`
	// The request id, also in the X-Request-Id header and the logs.
	RequestID string `json:"request_id,omitempty"`
	// The fields at fault, for validation errors.
	Errors []apperr.FieldError `json:"errors,omitempty"`
}

// statusOf is the one place where error codes become HTTP status codes.
var statusOf = map[string]int{
	apperr.EBADREQUEST:    http.StatusBadRequest,
	apperr.EMETHOD:        http.StatusMethodNotAllowed,
	apperr.EMEDIATYPE:     http.StatusUnsupportedMediaType,
	apperr.ENOTACCEPTABLE: http.StatusNotAcceptable,
	apperr.EINVALID:       http.StatusUnprocessableEntity,
	apperr.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	apperr.ENOTFOUND:      http.StatusNotFound,
	apperr.ECONFLICT:      http.StatusConflict,
	apperr.EUNAUTHORIZED:  http.StatusUnauthorized,
	apperr.EFORBIDDEN:     http.StatusForbidden,
	apperr.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	apperr.EHEADERS:       http.StatusRequestHeaderFieldsTooLarge,
	apperr.EUNAVAILABLE:   http.StatusServiceUnavailable,
	apperr.EINTERNAL:      http.StatusInternalServerError,
}

var titleOf = map[string]string{
	apperr.EBADREQUEST:    "Malformed request",
	apperr.EMETHOD:        "Method not allowed",
	apperr.EMEDIATYPE:     "Unsupported media type",
	apperr.ENOTACCEPTABLE: "Not acceptable",
	apperr.EINVALID:       "Invalid request",
	apperr.EUNPROCESSABLE: "Request cannot be applied",
	apperr.ENOTFOUND:      "Not found",
	apperr.ECONFLICT:      "Conflict",
	apperr.EUNAUTHORIZED:  "Unauthorized",
	apperr.EFORBIDDEN:     "Forbidden",
	apperr.ETOOLARGE:      "Request body too large",
	apperr.EHEADERS:       "Request headers too large",
	apperr.EUNAVAILABLE:   "Service unavailable",
	apperr.EINTERNAL:      "Internal server error",
}

// codeOfStatus maps Echo's own errors (unknown route, wrong method, body too
// large) to our codes.
var codeOfStatus = map[int]string{
	http.StatusBadRequest:                  apperr.EBADREQUEST,
	http.StatusNotFound:                    apperr.ENOTFOUND,
	http.StatusMethodNotAllowed:            apperr.EMETHOD,
	http.StatusUnauthorized:                apperr.EUNAUTHORIZED,
	http.StatusForbidden:                   apperr.EFORBIDDEN,
	http.StatusRequestEntityTooLarge:       apperr.ETOOLARGE,
	http.StatusRequestHeaderFieldsTooLarge: apperr.EHEADERS,
	http.StatusUnsupportedMediaType:        apperr.EMEDIATYPE,
	http.StatusNotAcceptable:               apperr.ENOTACCEPTABLE,
	http.StatusServiceUnavailable:          apperr.EUNAVAILABLE,
}

// errorHandler writes every error as problem+json. Internal errors are
// logged and never shown to the client.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		p := problemOf(err, c)
		if p.Status >= 500 {
			log.ErrorContext(c.Request().Context(), "request failed", "err", err, "request_id", p.RequestID,
				"method", methodOf(c), "path", c.Request().URL.Path)
		}
		c.Response().Header().Set(echo.HeaderContentType, "application/problem+json")
		c.Response().WriteHeader(p.Status)
		if methodOf(c) == http.MethodHead {
			return
		}
		_ = jsonEncode(c.Response(), p)
	}
}

func problemOf(err error, c echo.Context) Problem {
	p := Problem{Instance: c.Request().URL.Path, RequestID: c.Response().Header().Get(echo.HeaderXRequestID)}
	var he *echo.HTTPError
	switch {
	case errors.As(err, &he) && apperr.As(err) == nil:
		code, ok := codeOfStatus[he.Code]
		if !ok {
			code = apperr.EINTERNAL
		}
		p.Status, p.Title = he.Code, titleOf[code]
		p.Type = "urn:tsekh:problem:" + code
		switch he.Code {
		case http.StatusNotFound:
			p.Detail = "no such resource: " + methodOf(c) + " " + c.Request().URL.Path
		case http.StatusMethodNotAllowed:
			p.Detail = methodOf(c) + " is not allowed on " + c.Request().URL.Path
		case http.StatusRequestEntityTooLarge:
			p.Detail = "the request body is larger than allowed"
		default:
			if msg, ok := he.Message.(string); ok && he.Code < 500 {
				p.Detail = msg
			} else {
				p.Detail = http.StatusText(he.Code)
			}
		}
		return p
	case errors.Is(err, context.DeadlineExceeded), apperr.As(err) == nil && database.IsTimeout(err):
		err = &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the request took too long (the database is slow or unreachable); try again shortly", Err: err}
	case errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil:
		// The client has gone: nobody reads the answer, which is not a fault.
		err = &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the request was cancelled", Err: err}
	case apperr.As(err) == nil && database.IsUnavailable(err):
		err = &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the database is not reachable; try again shortly", Err: err}
	case apperr.As(err) == nil && database.IsTxConflict(err):
		// Still colliding after database.Transaction's runs: busy, not broken.
		err = &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the request collided with others on the same data; try again", Err: err}
	}
	code := apperr.Code(err)
	p.Status, p.Title, p.Type = statusOf[code], titleOf[code], "urn:tsekh:problem:"+code
	if e := apperr.As(err); e != nil && code != apperr.EINTERNAL {
		p.Detail, p.Errors = e.Message, e.Fields
	} else {
		p.Detail = "an unexpected error occurred; it has been logged with the request id"
	}
	if p.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	return p
}
