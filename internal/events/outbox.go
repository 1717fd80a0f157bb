package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// New describes an event to add: its type, the object it is about (the
// owner's table and row id) and its payload, which is encoded as a JSON object.
type New struct {
	Type          string
	AggregateType string
	AggregateID   int64
	Payload       any
}

// ErrNoTransaction is returned by Add when it is not given a transaction.
var ErrNoTransaction = errors.New("events: Add needs the owner's transaction")

// Add writes the event inside tx, the transaction of the module that owns the
// data, so that the data and its event commit or roll back together. The actor
// is taken from ctx (see WithActor), and so are the event's cause and
// correlation id (see WithCause, WithCorrelation) and its W3C trace context:
// that of a "create" span Add records when tracing is on, else the current
// span's, else the cause's. The creation time comes from the database clock,
// and the id is taken when the event is written.
//
// On PostgreSQL the event's INSERT travels with the transaction's COMMIT, in
// the same round trip (database.WithCommit), so that the event costs the
// owner's write no round trip of its own; a rollback, or a rollback to a
// savepoint set before Add, drops it. On SQLite it is written at once.
//
// Add refuses a *gorm.DB that is not a transaction (ErrNoTransaction): there is
// no way to write an event outside its owner's transaction.
func Add(ctx context.Context, tx *gorm.DB, ev New) error {
	if tx == nil || !database.InTx(tx) {
		return ErrNoTransaction
	}
	if ev.Type == "" || ev.AggregateType == "" {
		return errors.New("events: type and aggregate type are required")
	}
	payload, err := json.Marshal(ev.Payload)
	if err != nil {
		return fmt.Errorf("events: encode %s payload: %w", ev.Type, err)
	}
	if len(payload) == 0 || payload[0] != '{' {
		return fmt.Errorf("events: %s payload must be a JSON object", ev.Type)
	}
	var actorID *int64
	var actorName *string
	if a, ok := ActorFrom(ctx); ok {
		actorID, actorName = &a.ID, &a.Name
	}
	ctx, span := startCreate(ctx, ev.Type)
	defer endSpan(span, nil)
	o := originOf(ctx)
	part := PartitionOf(ev.AggregateType, ev.AggregateID)
	err = driverFor(tx).insertEvent(ctx, tx, newEventRow{typ: ev.Type, aggType: ev.AggregateType, aggID: ev.AggregateID,
		part: part, payload: string(payload), actorID: actorID, actorName: actorName,
		causedBy: o.causedBy, correlation: o.correlation, traceparent: o.traceparent, tracestate: o.tracestate})
	if err != nil {
		return fmt.Errorf("events: add %s: %w", ev.Type, err)
	}
	return nil
}
