package events

// The statuses of an event and of one subscriber's delivery of it, as the
// journal shows them and as events_deliveries stores the exceptions. An event
// is pending, processed or failed; a delivery is any of the five.
const (
	StatusPending   = "pending"   // not yet handled (by every subscriber, for an event)
	StatusProcessed = "processed" // handled (by every subscriber, or none is registered, for an event)
	StatusRetrying  = "retrying"  // a delivery failed and waits for its next attempt
	StatusHeld      = "held"      // a delivery waits behind an earlier open delivery of the same object
	StatusFailed    = "failed"    // a delivery gave up after its attempts; an admin may retry it
)

// Subscriber statuses, as GET /api/v1/subscribers shows them.
const (
	SubscriberActive  = "active"  // a replica ran it recently
	SubscriberWaiting = "waiting" // no replica runs it now: its lanes wait, losing nothing
	SubscriberRetired = "retired" // retired by an admin: no event waits for it any more
)
