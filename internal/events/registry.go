package events

import (
	"context"
	"fmt"
	"sort"

	"gorm.io/gorm"
)

// Subscriber receives the committed events of the types it names, in the
// order they were written for each object. Exactly one of HandleTx and Handle
// is set.
type Subscriber struct {
	// Name identifies the subscriber in the journal; it must never change, as
	// delivery records refer to it.
	Name string
	// Types are the event types it receives.
	Types []string
	// Description says what the subscriber does, for GET /api/v1/subscribers.
	Description string
	// HandleTx is for subscribers whose effect lives in this database: it runs
	// inside the transaction that records the delivery, so its effect is
	// applied exactly once. It must use tx, never another connection.
	HandleTx func(ctx context.Context, tx *gorm.DB, ev Event) error
	// Handle is for subscribers with an effect outside the database (an HTTP
	// callback, a message broker): it is called at least once per event and
	// must tolerate a repeat.
	Handle func(ctx context.Context, ev Event) error
	// Retry is the subscriber's retry policy; zero fields take the
	// dispatcher's defaults. A handler may also return Permanent(err) (failed
	// at once) or RetryAfter(d, err).
	Retry RetryPolicy
	// Concurrency is how many calls of an outside subscriber may be in flight
	// at once (default 1); never two for the same object, whose events keep
	// their order. A local subscriber runs one event at a time in each lane.
	Concurrency int
	// Replayable lets an admin replay the journal to a local subscriber (a
	// projection that can rebuild itself from the events). Outside
	// subscribers can always be replayed: they receive at least once anyway.
	Replayable bool
}

// validName tells whether a subscriber's name is one the dispatcher can
// carry in lists and URLs as it is.
func validName(n string) bool {
	if n == "" || len(n) > 100 {
		return false
	}
	for _, r := range n {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}

// Local tells whether the subscriber's effect lives in this database.
func (s *Subscriber) Local() bool { return s.HandleTx != nil }

// Registry holds the event types of every module and the subscribers to
// them. It is filled at start-up and read-only afterwards.
type Registry struct {
	types  map[string]Type
	subs   []*Subscriber
	byType map[string][]*Subscriber
	every  []*Subscriber // subscribers to AllTypes (modules.go)
	sealed bool          // by Register: nothing more can be declared or subscribed
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{types: map[string]Type{}, byType: map[string][]*Subscriber{}}
}

// AddTypes declares event types, for tests and tools that wire a registry by
// hand; it panics on an error of Declare. The service's modules declare
// theirs through Register.
func (r *Registry) AddTypes(ts ...Type) {
	for _, t := range ts {
		if err := r.Declare(t); err != nil {
			panic(err)
		}
	}
}

// Subscribe registers a subscriber. It returns an error when the name is
// taken, a type is unknown, or not exactly one handler is set. Types
// []string{AllTypes} subscribes to every declared type (modules.go).
func (r *Registry) Subscribe(s Subscriber) error {
	if r.sealed {
		return fmt.Errorf("events: subscriber %s: the registry is sealed", s.Name)
	}
	if !validName(s.Name) || len(s.Types) == 0 {
		return fmt.Errorf("events: subscriber %q needs a name of lowercase letters, digits, '.', '_' and '-' (at most 100) and types", s.Name)
	}
	if (s.HandleTx == nil) == (s.Handle == nil) {
		return fmt.Errorf("events: subscriber %s must set exactly one of HandleTx and Handle", s.Name)
	}
	for _, existing := range r.subs {
		if existing.Name == s.Name {
			return fmt.Errorf("events: subscriber %s registered twice", s.Name)
		}
	}
	if err := r.checkTypes(s); err != nil {
		return err
	}
	sub := s
	if sub.everyType() {
		sub.Types = r.typeNames()
		r.every = append(r.every, &sub)
	}
	r.subs = append(r.subs, &sub)
	for _, t := range sub.Types {
		r.byType[t] = append(r.byType[t], &sub)
	}
	return nil
}

// MustSubscribe is Subscribe for start-up wiring, where an error is a bug.
func (r *Registry) MustSubscribe(s Subscriber) {
	if err := r.Subscribe(s); err != nil {
		panic(err)
	}
}

// Types returns the catalogue of event types, sorted by name.
func (r *Registry) Types() []Type {
	out := make([]Type, 0, len(r.types))
	for _, t := range r.types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// HasType tells whether the type is declared.
func (r *Registry) HasType(t string) bool { _, ok := r.types[t]; return ok }

// Subscribers returns the subscribers in registration order.
func (r *Registry) Subscribers() []*Subscriber { return r.subs }

// SubscribersOf returns the subscribers to an event type.
func (r *Registry) SubscribersOf(eventType string) []*Subscriber { return r.byType[eventType] }

// Subscriber returns the subscriber with the name, or nil.
func (r *Registry) Subscriber(name string) *Subscriber {
	for _, s := range r.subs {
		if s.Name == name {
			return s
		}
	}
	return nil
}
