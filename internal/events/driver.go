package events

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// driver holds every statement of the outbox: writing an event, the
// dispatcher's passes (survey, claim, the batch's read, the lane's move and
// its fence, release, renewal: statements, store.go), the announcements of
// commits and their listener (listener.go), the journal, the subscribers
// and their registration, compaction, the live stream and the leases of
// gone owners. One driver a dialect (pgDriver, sqliteDriver) is chosen by
// driverFor, the one place that asks which database it talks to; the logic
// files above it hold no SQL and no dialect branches. The statements both
// dialects share are sqlBase's (driver_shared.go); driver_test.go and
// driver_lanes_test.go run the same tests against both drivers.
type driver interface {
	writeStatements
	statements
	listenerStatements
	deliveryStatements
	journalStatements
	subscriberStatements
	registrationStatements
	compactionStatements
	streamStatements
}

// journalStatements read the journal and its deliveries.
type journalStatements interface {
	// listIDs lists the ids of the events the query selects, in its order,
	// at most q.limit of them.
	listIDs(ctx context.Context, db *gorm.DB, q listQuery) ([]int64, error)
	// historyIDs lists the ids of the events about the objects after the
	// id after, oldest first, at most limit of them.
	historyIDs(ctx context.Context, db *gorm.DB, objs []Objects, after int64, limit int) ([]int64, error)
	// eventExists tells whether an event has the id.
	eventExists(ctx context.Context, db *gorm.DB, id int64) (bool, error)
	// eventsWithPartition reads the events with the ids, in no order, and
	// the partition of each.
	eventsWithPartition(ctx context.Context, db *gorm.DB, ids []int64) ([]Event, map[int64]int, error)
	// waitedSubscribers reads the subscribers registered and not retired,
	// in the order they were first registered.
	waitedSubscribers(ctx context.Context, db *gorm.DB) ([]waitedSubscriber, error)
	// laneStates reads every lane's position and start.
	laneStates(ctx context.Context, db *gorm.DB) (map[laneKey]laneState, error)
	// deliveries reads the recorded deliveries of the events ids (without
	// their failures), by event and subscriber.
	deliveries(ctx context.Context, db *gorm.DB, ids []int64) (map[int64]map[string]Delivery, error)
	// failures reads the failed attempts of the events ids, oldest first
	// for each delivery.
	failures(ctx context.Context, db *gorm.DB, ids []int64) ([]deliveryFailure, error)
	// processedAt fills the time of each delivery: see its doc comment in
	// driver_shared.go and docs/outbox.md, "Where processed_at comes from".
	processedAt(ctx context.Context, db *gorm.DB, ds []deliveryAt) error
	// retryFailed re-queues the event's failed deliveries for an immediate
	// attempt and returns how many.
	retryFailed(ctx context.Context, tx *gorm.DB, id int64) (int64, error)
	// backlog counts the events past the slowest waited-for lane of their
	// partition and the open deliveries of waited-for subscribers.
	backlog(ctx context.Context, db *gorm.DB) (Summary, error)
}

// subscriberStatements read the subscribers for operators and carry out
// their replay and retirement.
type subscriberStatements interface {
	// clock reads the database clock.
	clock(ctx context.Context, db *gorm.DB) (time.Time, error)
	// registeredSubscribers reads the subscribers a replica has registered,
	// the retired ones included, by name; name "" reads them all.
	registeredSubscribers(ctx context.Context, db *gorm.DB, name string) ([]subscriberRow, error)
	// laneBacklogs reads the subscriber's lanes, each with the count and
	// the oldest creation of its events of the types past its position.
	laneBacklogs(ctx context.Context, db *gorm.DB, name string, types []string) ([]laneBacklog, error)
	// openDeliveries counts the subscriber's deliveries by status, those
	// processed left out, with the oldest creation of their events.
	openDeliveries(ctx context.Context, db *gorm.DB, name string) ([]statusCount, error)
	// replicasOf reads the replicas that ran the subscriber, last seen first.
	replicasOf(ctx context.Context, db *gorm.DB, name string) ([]replicaRow, error)
	// activeReplicas names the replicas that ran the subscriber within the
	// window, by name.
	activeReplicas(ctx context.Context, tx *gorm.DB, name string, window time.Duration) ([]string, error)
	// rewind moves the subscriber's lanes back to before (a lane behind it
	// stays) without their leases and forgets its deliveries, failures and
	// batches after before.
	rewind(ctx context.Context, tx *gorm.DB, name string, before int64) error
	// retire marks the subscriber retired and drops its lanes and replicas.
	retire(ctx context.Context, tx *gorm.DB, name string) error
}

// registrationStatements record this process's subscribers and replicas.
type registrationStatements interface {
	// subscribersKnown counts the subscribers ever recorded.
	subscribersKnown(ctx context.Context, tx *gorm.DB) (int64, error)
	// subscriberRecord reads a subscriber's record; false when there is none.
	subscriberRecord(ctx context.Context, tx *gorm.DB, name string) (subscriberRecord, bool, error)
	// insertSubscriber records a new subscriber as registered now; false
	// when another replica recorded it first.
	insertSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) (bool, error)
	// updateSubscriber writes the subscriber's declaration, brings it back
	// from retirement and registers it if it was not.
	updateSubscriber(ctx context.Context, tx *gorm.DB, s subscriberSpec) error
	// dropLanes removes the subscriber's lanes.
	dropLanes(ctx context.Context, tx *gorm.DB, name string) error
	// addLanes gives the subscriber a lane at start in every partition
	// (a lane that is there stays).
	addLanes(ctx context.Context, tx *gorm.DB, name string, start int64) error
	// seen records that the replica runs the subscribers now.
	seen(ctx context.Context, tx *gorm.DB, replica string, subs []string) error
	// forgetReplicas removes the replicas not seen within keep.
	forgetReplicas(ctx context.Context, tx *gorm.DB, keep time.Duration) error
	// leaseOwners names the owners other than self holding a live lease.
	leaseOwners(ctx context.Context, db *gorm.DB, self string) ([]string, error)
	// dropLeases gives back every lease of the owner and returns how many.
	dropLeases(ctx context.Context, db *gorm.DB, owner string) (int64, error)
}

// compactionStatements fold the batches of the events every lane has
// passed into the events (settled_at).
type compactionStatements interface {
	// compactedUpTo reads up to which event the partition is compacted.
	compactedUpTo(ctx context.Context, tx *gorm.DB, part int) (int64, error)
	// eventTypesIn reads the ids and types of the partition's events in
	// (low, high], in order, at most limit of them.
	eventTypesIn(ctx context.Context, tx *gorm.DB, part int, low, high int64, limit int) ([]eventType, error)
	// subscriberBatches reads the subscribers' batches of the partition
	// that reach into (low, high], by subscriber and first id.
	subscriberBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) ([]batchSpan, error)
	// recordedIn names the recorded deliveries of the partition's events in
	// (low, high].
	recordedIn(ctx context.Context, tx *gorm.DB, part int, low, high int64) (map[deliveryKey]bool, error)
	// settle writes at as settled_at on the partition's events in [first, last].
	settle(ctx context.Context, tx *gorm.DB, part int, first, last int64, at time.Time) error
	// dropBatches removes the subscribers' batches of the partition that lie
	// within (low, high] and returns how many.
	dropBatches(ctx context.Context, tx *gorm.DB, part int, low, high int64) (int64, error)
	// markCompacted records that the partition is compacted up to upto.
	markCompacted(ctx context.Context, tx *gorm.DB, part int, upto int64) error
}

// streamStatements serve the live journal.
type streamStatements interface {
	// streamSurvey reads the highest event id visible and, where commits
	// may come out of order, the transactions writing events and which of
	// pending still run, in one snapshot; where they may not (one writer
	// at a time), it says that what is visible is final.
	streamSurvey(ctx context.Context, db *gorm.DB, pending []string) (surveyed, error)
	// newestID reads the highest event id visible, 0 for an empty journal.
	newestID(ctx context.Context, db *gorm.DB) (int64, error)
}

// writeStatements write events.
type writeStatements interface {
	// insertEvent writes one event in its owner's transaction tx.
	insertEvent(ctx context.Context, tx *gorm.DB, row newEventRow) error
}

// newEventRow is an event as Add writes it: its id and creation time come from
// the database.
type newEventRow struct {
	typ, aggType            string
	aggID                   int64
	part                    int
	payload                 string
	actorID                 *int64
	actorName               *string
	causedBy                *int64
	correlation             *string
	traceparent, tracestate *string
}

// drivers are the two drivers: a driver depends on nothing but its
// dialect, so each is one value, and events.Add, on the owner's write path,
// takes it as it is.
var drivers = struct{ pg, sqlite driver }{
	pg:     pgDriver{sqlBase{database.Postgres}, pgStatements{}},
	sqlite: sqliteDriver{sqlBase{database.SQLite}, sqliteStatements{}},
}

// driverFor chooses the driver of db's dialect; it is the one place that
// asks which database db talks to.
func driverFor(db *gorm.DB) driver {
	if database.DialectOf(db) == database.Postgres {
		return drivers.pg
	}
	return drivers.sqlite
}

// listQuery is a journal listing: the filter, the subscribers a status
// filter weighs, and the page.
type listQuery struct {
	Filter
	subs  []waitedSubscriber // for a status filter: those the journal waits for
	after int64              // the page's cursor: ids below it (above it, Oldest)
	limit int
}

// deliveryFailure is one failed attempt of a subscriber's delivery of an event.
type deliveryFailure struct {
	eventID int64
	sub     string
	Failure
}

// laneBacklog is one of a subscriber's lanes with its events past the position.
type laneBacklog struct {
	Partition  int
	Position   int64
	Owner      *string
	LeaseUntil nullTime
	N          int64
	Oldest     nullTime
}

// statusCount counts a subscriber's deliveries of one status.
type statusCount struct {
	Status string
	N      int64
	Oldest nullTime
}

// replicaRow is a replica that ran a subscriber, and when last.
type replicaRow struct {
	Replica string
	SeenAt  nullTime
}

// subscriberRecord is what registration reads of a subscriber's record.
type subscriberRecord struct {
	ID           int64
	RegisteredAt nullTime
	RetiredAt    nullTime
}

// subscriberSpec is a subscriber's declaration as recorded.
type subscriberSpec struct {
	name, types, description string // types: the JSON list
	local, replayable        bool
}

// eventType is an event's id and type.
type eventType struct {
	ID   int64
	Type string
}

// batchSpan is a subscriber's batch: events first to last of a partition,
// dispatched at.
type batchSpan struct {
	Subscriber   string
	FirstID      int64
	LastID       int64
	DispatchedAt nullTime
}
