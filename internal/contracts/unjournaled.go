package contracts

// Unjournaled declares, once for the whole service, the tables (and columns)
// whose changes need no event: everything else in the schema is a module's
// owned data, and a transaction that changes it writes at least one event
// naming its actor (docs/outbox.md, "Delivery guarantees": no change without its event). The test suite enforces this on
// PostgreSQL for every transaction it runs (internal/platform/dbtest): a new
// table is owned data until it is declared here, with the reason.
var Unjournaled = map[string]Exemption{
	// The journal itself: its rows are the events; the dispatcher's
	// processed_at and settled_at are its bookkeeping.
	"events": {Reason: "the journal itself: its rows are the events, and the dispatcher's processed_at and settled_at its bookkeeping"},

	// The outbox's bookkeeping: where each subscriber stands and what it has
	// been handed. A local subscriber's progress commits with its effect.
	"events_lanes": {Reason: "each subscriber's position and lease per partition: the dispatcher's bookkeeping",
		Progress: true},
	"events_batches": {Reason: "the record of each dispatched batch, from which the journal tells when an event reached a subscriber",
		Progress: true},
	"events_deliveries": {Reason: "the exceptions of delivery (retrying, held, failed) and their attempts: the dispatcher's bookkeeping",
		Progress: true},
	"events_delivery_failures": {Reason: "the latest failures of each delivery (time, error, HTTP status): the dispatcher's record of its attempts"},
	"events_subscribers":       {Reason: "the subscribers the replicas have run, registered at start-up"},
	"events_replicas":          {Reason: "which replica ran which subscriber, and when last: a heartbeat"},
	"events_compaction":        {Reason: "how far the compaction of the batches record has got per partition"},

	// The plan's own views of the sales module's orders, fed by sales'
	// events: they change with the event that feeds them (order.received,
	// order.changed, order.cancelled) or with the plan's own event (a launch
	// takes items out of the backlog).
	"plan_backlog":          {Reason: "the plan's read model of sales-order items waiting for production, fed by order.* events and emptied by launches"},
	"plan_cancelled_orders": {Reason: "the plan's memory of the order.cancelled events it has handled, so that their items never return to the backlog"},

	// Sales' copy of what the plan's events say of each item: its state in
	// production, its ETA and production order, the units made and written
	// off. sales.production keeps it in step with prod_order.* events; the
	// order's own change (its state, its ETA) is journalled as
	// order.status_changed.
	"sales_order_items": {Reason: "an item's production state, ETA and production order, and the units made and written off, as the plan's prod_order.* events report them",
		Columns: []string{"status", "eta", "prod_order_id", "made_qty", "written_off_qty"}, BySubscriber: true},

	// The plan's copy of what the sales module's order.changed said of an
	// order whose items it makes: the customer and due date shown with them.
	"plan_prod_order_items": {Reason: "the customer and due date of a launched item's order, as sales' order.changed reports them",
		Columns: []string{"customer", "due_date"}, BySubscriber: true},

	// A running job's lease is its runner's heartbeat: renewed every third
	// of JOBS_LEASE while the job runs; every change of the job's state
	// and progress is journalled as job.*.
	"jobs_queue": {Reason: "a running job's lease, renewed by its runner while it runs (a heartbeat)",
		Columns: []string{"lease_until"}},

	// A done job's document is the job's work drawn from journalled data
	// (a labels job's PDF): it is written with job.done, and removed by the
	// maintenance job when its retention ends.
	"jobs_documents": {Reason: "a done job's document (the labels a labels job drew), written with job.done and removed after JOBS_DOCUMENT_RETENTION"},

	// A replay guard, not data: the response kept for a repeated request.
	"sales_idempotency_keys": {Reason: "the Idempotency-Key of POST /api/v1/orders and the response kept for its repeats; the order itself is journalled"},

	// When a token was last used is a trace of its requests, not a change
	// anyone made: a request would otherwise need an event for being read.
	"auth_tokens": {Reason: "a token's last_used_at is refreshed by the requests it authenticates",
		Columns: []string{"last_used_at"}},
}

// Exemption is why a table's changes, or those of some of its columns, need
// no event.
type Exemption struct {
	// Reason says why.
	Reason string
	// Columns, when set, are the only columns exempt: a change of any other
	// column of the table is owned data.
	Columns []string
	// BySubscriber limits the exemption of Columns to a local subscriber's
	// transaction (one that writes a Progress table): they are the module's
	// copy of what other modules' events said, kept in step by its
	// subscriber; a request that changes them still writes its event.
	BySubscriber bool
	// Progress marks a local subscriber's record of its progress, which
	// commits in one transaction with the subscriber's effect: a transaction
	// that writes it is the system's work, whose events name no actor.
	Progress bool
}
