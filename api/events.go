package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// listEvents godoc
//
//	@Summary		The journal of events, newest first
//	@ID			listEvents
//	@Description	Every event with who caused it, its object, its payload, when it was created and when every subscriber had handled it. Events about users and their tokens (aggregate type auth_users) are shown to administrators only.
//	@Description	With Accept: text/csv (preferred to JSON by its q-value), the whole journal the filters select (limit and cursor do not apply) as a spreadsheet, streamed, in the layout ?layout= names (office by default; see docs/operating.md, CSV exports): the columns №, Событие, Объект, Данные, Создано, Обработано, Кто (id, type, object, payload, created_at, processed_at, actor in the machine's), "—" for the system.
//	@Description	Every event with who caused it, its object, its payload, when it was created and when every subscriber had handled it, and where it came from: the event whose handling wrote it (caused_by), the request or command that set it going (correlation_id) and its W3C trace context.
//	@Tags			events
//	@Produce		json
//	@Produce		text/csv
//	@Security		BearerAuth
//	@Param			type			query		string	false	"event type, e.g. order.received; one of GET /api/v1/event-types (422 otherwise)"		maxlength(100)	example(order.received)
//	@Param			aggregate_type	query		string	false	"the object's table, e.g. sales_orders; the aggregate_type of an event type (422 otherwise)"	maxlength(100)	example(sales_orders)
//	@Param			aggregate_id	query		int		false	"the object's id"	minimum(1) example(1)
//	@Param			status			query		string	false	"event status"	Enums(pending, processed, failed)	example(pending)
//	@Param			actor_id		query		int		false	"the user who caused it"	minimum(1) example(1)
//	@Param			caused_by		query		int		false	"the events written by the handling of this event (an event id; 422 when no event has it)"	minimum(1) example(1)
//	@Param			correlation_id	query		string	false	"the events set going by one request (its X-Request-Id) or command: up to 128 of A-Z, a-z, 0-9, '.', '_', '-' (422 otherwise)"	maxlength(128) example(CDMJ64LC2CNXIY22SPB7NZTONC)
//	@Param			since			query		string	false	"created at or after (RFC 3339, from 2000-01-01 to 2100-12-31)"	format(date-time)	example(2026-12-01T00:00:00Z)
//	@Param			until			query		string	false	"created before (RFC 3339, from 2000-01-01 to 2100-12-31)"		format(date-time)	example(2026-12-02T00:00:00Z)
//	@Param			limit			query		int		false	"page size (1-500, default 50)"	minimum(1) maximum(500) default(50) example(50)
//	@Param			cursor			query		string	false	"next_cursor of the previous page"	maxlength(1000) extensions(x-pattern=cursor) example(eyJsIjoiL2FwaS92MS9ldmVudHMiLCJpZCI6MX0)
//	@Param		layout	query	string	false	"CSV only: office (\";\", decimal commas, FACTORY_TIMEZONE, Russian headers) or machine (\",\", RFC 3339 UTC, decimal points, English headers); see docs/operating.md, CSV exports"	Enums(office, machine) default(office) example(machine)
//	@Success		200				{object}	EventList
//	@Failure		401				{object}	Problem
//	@Failure		422				{object}	Problem	"a filter that cannot match (since not before until), a cursor not of this list"
//	@Router			/api/v1/events [get]
func (s *server) listEvents(c echo.Context) error {
	pr, err := pageOf(c)
	if err != nil {
		return err
	}
	f, err := s.eventFilter(c)
	if err != nil {
		return err
	}
	if prefersCSV(c) {
		return s.writeEventsCSV(c, "events.csv", f)
	}
	entries, next, err := s.Journal.List(c.Request().Context(), f, pr)
	if err != nil {
		return err
	}
	for i := range entries {
		entries[i].Payload = events.InDeclaredOrder(entries[i].Type, entries[i].Payload)
	}
	return c.JSON(http.StatusOK, pageList(c, entries, next))
}

// eventFilter reads the journal's filters from the query, and leaves out
// what the caller's role may not read (see hiddenAggregateTypes).
func (s *server) eventFilter(c echo.Context) (events.Filter, error) {
	var err error
	f := events.Filter{Status: c.QueryParam("status"), HideAggregateTypes: hiddenAggregateTypes(c)}
	var fields, more []apperr.FieldError
	// A type or aggregate type no event can have is refused, not answered
	// with an empty list.
	f.Type, more = queryText(c, "type", input.MaxQuery)
	if len(more) == 0 && f.Type != "" && !s.Registry.HasType(f.Type) {
		more = append(more, apperr.Field("type", "no event type is named %q (GET /api/v1/event-types lists them)", f.Type))
	}
	fields = append(fields, more...)
	f.AggregateType, more = queryText(c, "aggregate_type", input.MaxQuery)
	if len(more) == 0 && f.AggregateType != "" && !s.hasAggregateType(f.AggregateType) {
		more = append(more, apperr.Field("aggregate_type", "no event type is about %q (GET /api/v1/event-types lists the aggregate types)", f.AggregateType))
	}
	fields = append(fields, more...)
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
	if f.CausedBy, err = queryInt(c, "caused_by"); err != nil {
		fields = append(fields, apperr.As(err).Fields...)
	}
	if f.CorrelationID = c.QueryParam("correlation_id"); f.CorrelationID != "" && !plainRequestID(f.CorrelationID) {
		fields = append(fields, apperr.Field("correlation_id", "must be a request id: up to %d of A-Z, a-z, 0-9, '.', '_', '-'", maxRequestID))
	}
	f.Since, more = input.Time("since", c.QueryParam("since"))
	fields = append(fields, more...)
	f.Until, more = input.Time("until", c.QueryParam("until"))
	fields = append(fields, more...)
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		// An empty range selects nothing: a typing error, never a question.
		fields = append(fields, apperr.Field("since", "must be before until"), apperr.Field("until", "must be after since"))
	}
	if len(fields) > 0 {
		return f, apperr.Invalid("invalid query", fields...)
	}
	return f, nil
}

// adminOnlyAggregateTypes are the objects whose events only administrators
// read: users and their tokens (names, roles, token names), as GET
// /api/v1/users is theirs alone. Every way of reading the journal (the list,
// its CSV, the stream, one event) leaves them out for the other roles.
var adminOnlyAggregateTypes = []string{"auth_users"}

// hiddenAggregateTypes are the aggregate types whose events the caller may
// not read (events.Filter.HideAggregateTypes).
func hiddenAggregateTypes(c echo.Context) []string {
	if currentUser(c).Role == auth.RoleAdmin {
		return nil
	}
	return adminOnlyAggregateTypes
}

// mayRead tells whether the caller may read the event.
func mayRead(c echo.Context, aggregateType string) bool {
	return !slices.Contains(hiddenAggregateTypes(c), aggregateType)
}

// hasAggregateType tells whether some declared event type is about objects
// of the table t.
func (s *server) hasAggregateType(t string) bool {
	for _, typ := range s.Registry.Types() {
		if typ.AggregateType == t {
			return true
		}
	}
	return false
}

// getEvent godoc
//
//	@Summary	One event with every subscriber's delivery
//	@ID		getEvent
//	@Description	The event with its status, processed_at and each subscriber's delivery: status, attempts, last error, next attempt, processed at, and the event it waits for when held. An event about a user or a token is 404 to all but administrators, as in the list.
//	@Tags		events
//	@Produce	json
//	@Security	BearerAuth
//	@Param		id	path		int	true	"event id"	minimum(1) example(1)
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
	if !mayRead(c, e.AggregateType) {
		// As for an event that does not exist: its existence is not told.
		return apperr.NotFound("event %d does not exist", id)
	}
	e.Payload = events.InDeclaredOrder(e.Type, e.Payload)
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
//	@Param			id	path		int	true	"event id"	minimum(1) example(1)
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

// asyncAPI godoc
//
//	@Summary	The AsyncAPI 3.0 document of the events
//	@ID		getAsyncAPI
//	@Description	Every event type as the NATS channel tsekh.events.<type> carrying CloudEvents, with the payload's JSON Schema under components.schemas.<type> (where the CloudEvents' dataschema points), and the shop's signed HTTP callback. Public: no token. Like every request, one with a body over 1 MiB is refused (413).
//	@Tags		events
//	@Produce	json
//	@Security
//	@Success	200	{object}	map[string]any
//	@Failure	413	{object}	Problem
//	@Router		/asyncapi.json [get]
func (s *server) asyncAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, s.AsyncAPI)
}

// listSubscribers godoc
//
//	@Summary	Subscribers with their lanes, replicas, lag and failures
//	@ID		listSubscribers
//	@Description	Every subscriber a replica has run, retired ones included: the event types it receives; its status (active: a replica ran it within the last minute; waiting: no replica runs it now, its lanes wait and lose nothing; retired); its lanes (its position in each partition, with lag in events and seconds, and the replica holding the lane); the replicas that ran it and when; its pending, retrying, held and failed deliveries.
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

// ReplayRequest says from which event on a subscriber receives the journal again.
type ReplayRequest struct {
	FromEventID int64 `json:"from_event_id" validate:"required" minimum:"1" example:"1"`
}

// replaySubscriber godoc
//
//	@Summary		Replay the journal to one subscriber (admin)
//	@ID			replaySubscriber
//	@Description	Every event of the subscriber's types with an id from from_event_id on reaches that subscriber again, and no other subscriber: its lanes move back, its delivery records from there on are dropped, and the journal shows those deliveries pending until the replay has passed them. Journalled as subscriber.replayed with the admin as actor. A local subscriber (its effect lives in this database) can be replayed only when it declares itself replayable.
//	@Tags			events
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			name	path		string			true	"subscriber name, e.g. nats.relay"	minlength(1) maxlength(100) example(nats.relay)
//	@Param			body	body		ReplayRequest	true	"where the replay starts"
//	@Success		202		{object}	events.Replayed
//	@Failure		400		{object}	Problem
//	@Failure		401		{object}	Problem
//	@Failure		403		{object}	Problem
//	@Failure		404		{object}	Problem
//	@Failure		409		{object}	Problem
//	@Failure		413		{object}	Problem
//	@Failure		422		{object}	Problem
//	@Router			/api/v1/subscribers/{name}/replay [post]
func (s *server) replaySubscriber(c echo.Context) error {
	var req ReplayRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	r, err := s.Journal.Replay(c.Request().Context(), c.Param("name"), req.FromEventID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, r)
}

// retireSubscriber godoc
//
//	@Summary		Retire a subscriber that is gone for good (admin)
//	@ID			retireSubscriber
//	@Description	No event waits for the subscriber any more (their status and processed_at stop counting it), its lanes are dropped and its recorded deliveries stay visible. Refused while a replica still runs it (it ran within the last minute). A replica that runs it again brings it back, starting at the journal's end. Journalled as subscriber.retired with the admin as actor.
//	@Tags			events
//	@Security		BearerAuth
//	@Param			name	path	string	true	"subscriber name"	minlength(1) maxlength(100) example(nats.relay)
//	@Success		204
//	@Failure		401	{object}	Problem
//	@Failure		403	{object}	Problem
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem
//	@Router			/api/v1/subscribers/{name} [delete]
func (s *server) retireSubscriber(c echo.Context) error {
	if err := s.Journal.Retire(c.Request().Context(), c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
