package events

import (
	"context"

	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/telemetry"
)

// withOrigin fills an entry's cause, correlation id and trace context from
// its event.
func withOrigin(en *Entry, ev Event) {
	en.CausedBy = ev.CausedBy
	if ev.CorrelationID != "" {
		en.CorrelationID = &ev.CorrelationID
	}
	if ev.Traceparent != "" {
		en.Traceparent = &ev.Traceparent
		if id := telemetry.TraceID(ev.Traceparent); id != "" {
			en.TraceID = &id
		}
	}
	if ev.Tracestate != "" {
		en.Tracestate = &ev.Tracestate
	}
}

// mustExist returns EINVALID naming the query parameter when no event has
// the id: a filter on an event that does not exist is a mistake, not an
// empty list.
func (j *Journal) mustExist(ctx context.Context, param string, id int64) error {
	exists, err := j.drv.eventExists(ctx, j.db, id)
	if err != nil {
		return err
	}
	if !exists {
		return apperr.Invalid("invalid query", apperr.Field(param, "no event has the id %d", id))
	}
	return nil
}
