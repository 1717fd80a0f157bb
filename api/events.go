package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// listEvents godoc
//
//	@Summary		The journal of events, newest first
//	@ID			listEvents
//	@Description	Every event with who caused it, its object, its payload, when it was created and when every subscriber had handled it.
//	@Tags			events
//	@Produce		json
//	@Security		BearerAuth
//	@Param			type			query		string	false	"event type, e.g. order.received"
//	@Param			aggregate_type	query		string	false	"the object's table, e.g. sales_orders"
//	@Param			aggregate_id	query		int		false	"the object's id"
//	@Param			status			query		string	false	"event status"	Enums(pending, processed, failed)
//	@Param			actor_id		query		int		false	"the user who caused it"
//	@Param			since			query		string	false	"created at or after (RFC 3339)"	format(date-time)
//	@Param			until			query		string	false	"created before (RFC 3339)"			format(date-time)
//	@Param			limit			query		int		false	"page size (1-500, default 50)"
//	@Param			cursor			query		string	false	"next_cursor of the previous page"
//	@Success		200				{object}	EventList
//	@Failure		401				{object}	Problem
//	@Failure		422				{object}	Problem
//	@Router			/api/v1/events [get]
func (s *server) listEvents(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f := events.Filter{Type: c.QueryParam("type"), AggregateType: c.QueryParam("aggregate_type"), Status: c.QueryParam("status")}
	var fields []apperr.FieldError
	switch f.Status {
	case "", events.StatusPending, events.StatusProcessed, events.StatusFailed:
	default:
		fields = append(fields, apperr.Field("status", "must be pending, processed or failed"))
	}
	if f.AggregateID, err = queryInt(c, "aggregate_id"); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if f.ActorID, err = queryInt(c, "actor_id"); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := c.QueryParam(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				fields = append(fields, apperr.Field(name, "must be a time in RFC 3339 form, e.g. 2026-11-13T17:20:04Z"))
			}
			*dst = t
		}
	}
	if len(fields) > 0 {
		return apperr.Invalid("invalid query", fields...)
	}
	entries, next, err := s.Journal.List(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(entries, next))
}

// getEvent godoc
//
//	@Summary	One event with every subscriber's delivery
//	@ID		getEvent
//	@Description	The event with its status, processed_at and each subscriber's delivery: status, attempts, last error, next attempt, processed at, and the event it waits for when held.
//	@Tags		events
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"event id"
//	@Success	200	{object}	events.Entry
//	@Failure	401	{object}	Problem
//	@Failure	404	{object}	Problem
//	@Failure	422	{object}	Problem
//	@Router		/api/v1/events/{id} [get]
func (s *server) getEvent(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	e, err := s.Journal.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, e)
}

// RetryResult says how many deliveries were re-queued.
type RetryResult struct {
	Requeued int `json:"requeued" validate:"required" example:"1"`
}

// retryEvent godoc
//
//	@Summary		Re-queue an event's failed deliveries (admin)
//	@ID			retryEvent
//	@Description	The deliveries are attempted again at the dispatcher's next pass, with a fresh count of attempts.
//	@Tags			events
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		int	true	"event id"
//	@Success		200	{object}	RetryResult
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem
//	@Failure		422	{object}	Problem
//	@Router			/api/v1/events/{id}/retry [post]
func (s *server) retryEvent(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	n, err := s.Journal.Retry(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, RetryResult{Requeued: n})
}

// listEventTypes godoc
//
//	@Summary	The catalogue of event types, their owners and payload schemas
//	@ID		listEventTypes
//	@Description	Every event type with the module that writes it, the table of its objects and the JSON Schema of its payload.
//	@Tags		events
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	EventTypeList
//	@Failure	401	{object}	Problem
//	@Router		/api/v1/event-types [get]
func (s *server) listEventTypes(c echo.Context) error {
	return c.JSON(http.StatusOK, list(s.Registry.Types(), ""))
}

// listSubscribers godoc
//
//	@Summary	Subscribers with their lag and failures
//	@ID		listSubscribers
//	@Description	Every registered subscriber with the event types it receives, its pending deliveries, retries, held and failed deliveries, and its lag.
//	@Tags		events
//	@Produce	json
//	@Security	BearerAuth
//	@Success	200	{object}	SubscriberList
//	@Failure	401	{object}	Problem
//	@Router		/api/v1/subscribers [get]
func (s *server) listSubscribers(c echo.Context) error {
	subs, err := s.Journal.Subscribers(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list(subs, ""))
}
