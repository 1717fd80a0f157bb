package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// MIMETextEventStream is the media type of Server-Sent Events.
const MIMETextEventStream = "text/event-stream"

// DefaultStreamHeartbeat is how often an idle stream sends a comment line
// when Deps.StreamHeartbeat is not set.
const DefaultStreamHeartbeat = 15 * time.Second

// streamEvents godoc
//
//	@Summary		The journal live, as Server-Sent Events
//	@ID			streamEvents
//	@Description	Each event once, in id order, as it becomes final: an SSE message with the event's id as its id and the event (as in the list) as its data. Resumable: a client that reconnects with the Last-Event-ID header (browsers' EventSource send it), or with ?after=, receives every event after that id, with no gap and no repeat; without either, the stream starts with the events committed from now on (after=0: the whole journal first).
//	@Description	An event is sent only once no transaction in flight can still commit a lower id (commit order is not id order on PostgreSQL), so a later-committing lower id is never skipped. The list's filters apply, but status (an event streams when it is committed, pending). Events about users and their tokens reach administrators only. An idle stream sends a comment line (": heartbeat") every EVENTS_STREAM_HEARTBEAT. A replica serves at most EVENTS_STREAM_MAX_CLIENTS streams at once: beyond, 503 with Retry-After. The stream ends when the replica shuts down; the client reconnects with its Last-Event-ID.
//	@Tags			events
//	@Produce		text/event-stream
//	@Produce		json
//	@Security		BearerAuth
//	@Param			Last-Event-ID	header		int		false	"the id of the last event received: the stream resumes after it (400 when not an event id)"	minimum(1) example(1)
//	@Param			after			query		int		false	"start after this event id (Last-Event-ID wins when both are sent)"	minimum(0) example(0)
//	@Param			type			query		string	false	"event type, e.g. order.received; one of GET /api/v1/event-types (422 otherwise)"		maxlength(100)	example(order.received)
//	@Param			aggregate_type	query		string	false	"the object's table, e.g. sales_orders; the aggregate_type of an event type (422 otherwise)"	maxlength(100)	example(sales_orders)
//	@Param			aggregate_id	query		int		false	"the object's id"	minimum(1) example(1)
//	@Param			actor_id		query		int		false	"the user who caused it"	minimum(1) example(1)
//	@Param			caused_by		query		int		false	"the events written by the handling of this event (an event id; 422 when no event has it)"	minimum(1) example(1)
//	@Param			correlation_id	query		string	false	"the events set going by one request (its X-Request-Id) or command: up to 128 of A-Z, a-z, 0-9, '.', '_', '-' (422 otherwise)"	maxlength(128) example(CDMJ64LC2CNXIY22SPB7NZTONC)
//	@Param			since			query		string	false	"created at or after (RFC 3339, from 2000-01-01 to 2100-12-31)"	format(date-time)	example(2026-12-01T00:00:00Z)
//	@Param			until			query		string	false	"created before (RFC 3339, from 2000-01-01 to 2100-12-31)"		format(date-time)	example(2026-12-02T00:00:00Z)
//	@Success		200				{string}	string	"id: 132\ndata: {\"id\":132,\"type\":\"order.received\",…}\n\n"
//	@Failure		400				{object}	Problem
//	@Failure		401				{object}	Problem
//	@Failure		406				{object}	Problem	"the Accept header does not allow text/event-stream"
//	@Failure		422				{object}	Problem
//	@Failure		503				{object}	Problem
//	@Router			/api/v1/events/stream [get]
func (s *server) streamEvents(c echo.Context) error {
	if _, ok := preferred(c.Request().Header.Values(echo.HeaderAccept), []string{MIMETextEventStream}); !ok {
		// The operation lists JSON for its problems only: the stream itself
		// is never JSON.
		return apperr.Errorf(apperr.ENOTACCEPTABLE, "the event stream answers in %s only; the Accept header %q does not allow it (GET /api/v1/events lists the journal as JSON)",
			MIMETextEventStream, printableHeader(strings.Join(c.Request().Header.Values(echo.HeaderAccept), ", ")))
	}
	if s.Stream == nil {
		return apperr.Errorf(apperr.EUNAVAILABLE, "the event stream is not served by this replica")
	}
	f, err := s.eventFilter(c)
	if err != nil {
		return err
	}
	if f.Status != "" {
		return apperr.Invalid("invalid query", apperr.Field("status", "the stream does not filter on status: an event streams once, when it is committed (pending); read the list for statuses"))
	}
	ctx := c.Request().Context()
	after, resume, err := streamStart(c)
	if err != nil {
		return err
	}
	if resume {
		newest, err := s.Stream.NewestID(ctx)
		if err != nil {
			return err
		}
		if after > newest {
			return apperr.Errorf(apperr.EBADREQUEST, "Last-Event-ID or after %d is not an event id: the newest event is %d", after, newest)
		}
	}
	cl, err := s.Stream.Join()
	switch {
	case errors.Is(err, events.ErrStreamFull):
		return &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the event stream serves as many clients as it may on this replica; try again shortly", Err: err}
	case errors.Is(err, events.ErrStreamClosed):
		return &apperr.Error{Code: apperr.EUNAVAILABLE, Message: "the replica is shutting down; reconnect", Err: err}
	case err != nil:
		return err
	}
	defer cl.Leave()
	if !resume {
		// From the stream's position: the events committed from now on.
		if after, err = cl.Position(ctx); err != nil {
			return nil // the client left or the replica shuts down before the stream began
		}
	}

	res := c.Response()
	// The server's read and write timeouts are for requests that end: a
	// stream lives on (a client that is gone fails the next heartbeat).
	rc := http.NewResponseController(res)
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	h := res.Header()
	h.Set(echo.HeaderContentType, MIMETextEventStream)
	h.Set(echo.HeaderCacheControl, "no-cache")
	h.Set("X-Accel-Buffering", "no") // a proxy must not hold the events back
	res.WriteHeader(http.StatusOK)
	if methodOf(c) == http.MethodHead {
		return nil // the headers a GET would get, and no stream
	}
	if _, err := res.Write([]byte(": connected\n\n")); err != nil {
		return nil
	}
	res.Flush()
	every := s.StreamHeartbeat
	if every <= 0 {
		every = DefaultStreamHeartbeat
	}
	heartbeat := time.NewTicker(every)
	defer heartbeat.Stop()
	var buf []byte
	for {
		r, err := cl.Read(ctx, f, after)
		if err != nil {
			if ctx.Err() == nil {
				s.Logger.ErrorContext(ctx, "event stream failed", "err", err, "request_id", h.Get(echo.HeaderXRequestID))
			}
			return nil // the status is sent: the client reconnects with its Last-Event-ID
		}
		if len(r.Entries) > 0 {
			buf = buf[:0]
			for i, e := range r.Entries {
				if i < len(r.Frames) && r.Frames[i] != nil {
					buf = append(buf, r.Frames[i]...)
					continue
				}
				frame, err := StreamFrame(e)
				if err != nil {
					return err
				}
				buf = append(buf, frame...)
			}
			if _, err := res.Write(buf); err != nil {
				return nil
			}
			res.Flush()
			heartbeat.Reset(every)
		}
		after = r.Position
		if r.Wait == nil {
			continue // catching up from the database
		}
		select {
		case <-r.Wait:
		case <-heartbeat.C:
			if _, err := res.Write([]byte(": heartbeat\n\n")); err != nil {
				return nil
			}
			res.Flush()
		case <-ctx.Done():
			return nil
		case <-cl.Done():
			return nil
		}
	}
}

// StreamFrame is an event as a stream's client receives it: an SSE message
// with the event's id and, as its data, the event as the list writes it.
func StreamFrame(e events.Entry) ([]byte, error) {
	e.Payload = events.InDeclaredOrder(e.Type, e.Payload)
	js, err := marshalAPI(e, "")
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(js)+32)
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, e.ID, 10)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, js[:len(js)-1]...) // without the encoder's newline
	return append(buf, "\n\n"...), nil
}

// streamStart reads where the client resumes: the Last-Event-ID header,
// else ?after=. resume is false when neither is sent.
func streamStart(c echo.Context) (after int64, resume bool, err error) {
	if ids := c.Request().Header.Values("Last-Event-ID"); len(ids) > 0 {
		v := strings.TrimSpace(ids[0])
		id, perr := strconv.ParseInt(v, 10, 64)
		if len(ids) > 1 || perr != nil || id < 0 || v != strconv.FormatInt(id, 10) {
			return 0, false, apperr.Errorf(apperr.EBADREQUEST, "the Last-Event-ID header must be one event id, a whole number (got %q)", strings.Join(ids, ", "))
		}
		return id, true, nil
	}
	v := c.QueryParam("after")
	if v == "" {
		return 0, false, nil
	}
	id, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil || id < 0 {
		return 0, false, apperr.Invalid("invalid query", apperr.Field("after", "must be an event id, a whole number from 0 (got %q)", v))
	}
	return id, true, nil
}
