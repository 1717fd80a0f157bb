// Package events is tsekh's transactional outbox and journal: the writer that
// adds an event inside its owner's transaction (Add), the dispatcher that hands
// committed events to the registered subscribers, and the queries behind the
// journal API.
package events

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"time"
)

// Partitions is the number of partitions the journal is split into. The
// events of one object always fall into the same partition, which is
// dispatched in id order by one dispatcher at a time; different partitions are
// dispatched in parallel, by one or several processes.
const Partitions = 16

// Event is one row of the journal, as handed to subscribers.
type Event struct {
	ID            int64           `json:"id"`
	Type          string          `json:"type"`
	AggregateType string          `json:"aggregate_type"`
	AggregateID   int64           `json:"aggregate_id"`
	Payload       json.RawMessage `json:"payload" swaggertype:"object"`
	Actor         *Actor          `json:"actor"`
	CreatedAt     time.Time       `json:"created_at" format:"date-time"`
	// CausedBy is the id of the event whose handling wrote this one; nil
	// for an event a request, a command or the scheduler wrote.
	CausedBy *int64 `json:"caused_by"`
	// CorrelationID is the id of the request (X-Request-Id) or command that
	// set this event going, directly or through subscribers; "" when none.
	CorrelationID string `json:"correlation_id"`
	// Traceparent and Tracestate are the W3C trace context of the span
	// that wrote the event; "" when none.
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
}

// Object returns the event's object as the journal screen shows it: "sales_orders #22".
func (e Event) Object() string {
	return e.AggregateType + " #" + strconv.FormatInt(e.AggregateID, 10)
}

// Decode unmarshals the payload into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Payload, v) }

// Actor is the user who caused an event; nil for work the system does itself.
type Actor struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

type actorKey struct{}

// WithActor returns ctx carrying the actor whose requests it serves. Events
// added under ctx name that actor; events added without one name nobody (the
// system), as subscribers and the scheduler do.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor carried by ctx, if any.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// PartitionOf returns the partition of an object.
func PartitionOf(aggregateType string, aggregateID int64) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(aggregateType))
	_, _ = h.Write([]byte(strconv.FormatInt(aggregateID, 10)))
	return int(h.Sum32() % Partitions)
}

// Type describes one event type for the catalogue at GET /api/v1/event-types.
// Modules declare their types with Declare, which generates the schema from
// the payload's Go type (see Contract).
type Type struct {
	Type          string         `json:"type" example:"order.received"`
	Owner         string         `json:"owner" example:"sales"`                 // the module that writes it
	AggregateType string         `json:"aggregate_type" example:"sales_orders"` // the owner's table
	Description   string         `json:"description"`
	Schema        map[string]any `json:"schema"` // JSON Schema (2020-12) of the payload

	shape string    // the payload's fields in declared order (see Shape)
	order *keyOrder // the payload's keys in declared order (see InDeclaredOrder)
}
