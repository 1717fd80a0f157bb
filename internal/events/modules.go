package events

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// AllTypes is a Subscriber's only type when it subscribes to every event
// type the registry declares, whenever it is declared: the NATS relay needs
// no list of types and no place at the end of the wiring.
const AllTypes = "*"

// Declaration is an event type to declare: a Contract made by Declare, or a
// Type written by hand (tests).
type Declaration interface {
	Describe() Type
}

// Module is a part of the service with events: it declares the event types
// it writes and the subscribers it runs, in one call.
type Module interface {
	RegisterEvents(r *Registrar)
}

// ModuleFunc makes a function a Module, e.g. for a subscriber that only some
// configurations run.
type ModuleFunc func(r *Registrar)

// RegisterEvents calls f.
func (f ModuleFunc) RegisterEvents(r *Registrar) { f(r) }

// Registrar collects a module's declarations and subscribers for Register,
// which declares the types of every module before it subscribes anyone, so
// that the order in which modules are registered does not matter.
type Registrar struct {
	module string
	types  []Type
	subs   []Subscriber
}

// Declare declares the event types the module writes.
func (r *Registrar) Declare(ds ...Declaration) {
	for _, d := range ds {
		r.types = append(r.types, d.Describe())
	}
}

// Subscribe adds the module's subscribers, to the module's own event types
// or any other module's.
func (r *Registrar) Subscribe(subs ...Subscriber) {
	r.subs = append(r.subs, subs...)
}

// Register wires the modules in two phases: first every module's event
// types, then every module's subscribers; then it seals the registry. It
// returns every error found, joined: a type declared twice or without a
// payload schema, a subscriber name taken twice, a subscriber to a type no
// module declares. Register may be called once.
func (r *Registry) Register(mods ...Module) error {
	if r.sealed {
		return errors.New("events: the registry is sealed; Register may be called once")
	}
	regs := make([]*Registrar, len(mods))
	for i, m := range mods {
		regs[i] = &Registrar{module: fmt.Sprintf("%T", m)}
		m.RegisterEvents(regs[i])
	}
	var errs []error
	for _, reg := range regs {
		for _, t := range reg.types {
			if t.Schema == nil {
				errs = append(errs, fmt.Errorf("events: %s declares %q without a payload schema: declare it with events.Declare", reg.module, t.Type))
				continue
			}
			if err := r.Declare(t); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, reg := range regs {
		for _, s := range reg.subs {
			if err := r.Subscribe(s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	r.sealed = true
	return errors.Join(errs...)
}

// Declare declares one event type. It returns an error when the registry is
// sealed, the name is malformed or declared already, or the owner or the
// aggregate type is missing. Subscribers to AllTypes receive the new type.
func (r *Registry) Declare(d Declaration) error {
	t := d.Describe()
	if r.sealed {
		return fmt.Errorf("events: event type %q: the registry is sealed", t.Type)
	}
	if !typeNamePattern.MatchString(t.Type) {
		return fmt.Errorf("events: event type %q: a name is lower-case words joined by dots, e.g. order.received", t.Type)
	}
	if t.Owner == "" || t.AggregateType == "" {
		return fmt.Errorf("events: event type %s needs an owner and an aggregate type", t.Type)
	}
	if prev, ok := r.types[t.Type]; ok {
		return fmt.Errorf("events: event type %s is declared twice (by %s and %s)", t.Type, prev.Owner, t.Owner)
	}
	r.types[t.Type] = t
	for _, s := range r.every {
		s.Types = append(s.Types, t.Type)
		r.byType[t.Type] = append(r.byType[t.Type], s)
	}
	return nil
}

// Sealed tells whether Register has run: nothing more can be declared or
// subscribed.
func (r *Registry) Sealed() bool { return r.sealed }

// everyType tells whether the subscriber subscribes to AllTypes.
func (s *Subscriber) everyType() bool { return len(s.Types) == 1 && s.Types[0] == AllTypes }

// checkTypes returns an error when a type the subscriber names is not
// declared, is named twice, or is AllTypes beside others.
func (r *Registry) checkTypes(s Subscriber) error {
	if s.everyType() {
		return nil
	}
	var errs []error
	for i, t := range s.Types {
		switch {
		case t == AllTypes:
			errs = append(errs, fmt.Errorf("events: subscriber %s: %q stands alone, for every type", s.Name, AllTypes))
		case slices.Contains(s.Types[:i], t):
			errs = append(errs, fmt.Errorf("events: subscriber %s names %s twice", s.Name, t))
		case !r.HasType(t):
			errs = append(errs, fmt.Errorf("events: subscriber %s: no module declares the event type %q", s.Name, t))
		}
	}
	return errors.Join(errs...)
}

// typeNames returns the declared types' names, sorted.
func (r *Registry) typeNames() []string {
	out := make([]string, 0, len(r.types))
	for t := range r.types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
