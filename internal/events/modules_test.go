package events_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/events"
)

var (
	widgetSold = events.Declare[widgetPayload]("test_widget.sold", "test", "widgets", "A widget was sold.")
	gadgetMade = events.Declare[widgetPayload]("test_gadget.made", "test", "gadgets", "A gadget was made.")
)

func noop(context.Context, *gorm.DB, events.Event) error { return nil }

// module is a module with events: the types it declares and its subscribers.
type module struct {
	types []events.Declaration
	subs  []events.Subscriber
}

func (m module) RegisterEvents(r *events.Registrar) {
	r.Declare(m.types...)
	r.Subscribe(m.subs...)
}

func TestRegistry_RegisterDeclaresEveryTypeFirst(t *testing.T) {
	t.Parallel()
	reg := events.NewRegistry()
	// The shop follows the factory's widgets and is registered before the
	// factory; the relay, first of all, receives every type.
	relay := events.ModuleFunc(func(r *events.Registrar) {
		r.Subscribe(events.Subscriber{Name: "relay", Types: []string{events.AllTypes}, Handle: func(context.Context, events.Event) error { return nil }})
	})
	shop := module{types: []events.Declaration{widgetSold}, subs: []events.Subscriber{{Name: "shop.stock", Types: events.Names(widgetMade, gadgetMade), HandleTx: noop}}}
	factory := module{types: []events.Declaration{widgetMade, gadgetMade}, subs: []events.Subscriber{{Name: "factory.sales", Types: events.Names(widgetSold), HandleTx: noop}}}
	require.NoError(t, reg.Register(relay, shop, factory))

	require.True(t, reg.Sealed())
	require.Equal(t, []string{"test_gadget.made", "test_widget.made", "test_widget.sold"}, reg.Subscriber("relay").Types, "AllTypes: every declared type")
	require.Len(t, reg.SubscribersOf("test_widget.made"), 2)
	require.Len(t, reg.SubscribersOf("test_widget.sold"), 2)
	require.Len(t, reg.Types(), 3)
	require.Len(t, reg.Subscribers(), 3)

	require.Error(t, reg.Register(module{}), "Register runs once")
	require.Error(t, reg.Subscribe(events.Subscriber{Name: "late", Types: events.Names(widgetMade), HandleTx: noop}), "sealed")
	require.Error(t, reg.Declare(events.Type{Type: "test_late.type", Owner: "test", AggregateType: "late"}), "sealed")
}

func TestRegistry_RegisterFailsLoudly(t *testing.T) {
	t.Parallel()
	handwritten := events.Type{Type: "test_widget.lost", Owner: "test", AggregateType: "widgets"} // no schema
	reg := events.NewRegistry()
	err := reg.Register(
		module{types: []events.Declaration{widgetMade, handwritten}, subs: []events.Subscriber{
			{Name: "a", Types: events.Names(widgetMade), HandleTx: noop},
			{Name: "b", Types: []string{"test_widget.unknown"}, HandleTx: noop},
		}},
		module{types: []events.Declaration{widgetMade}, subs: []events.Subscriber{
			{Name: "a", Types: events.Names(widgetMade), HandleTx: noop},
			{Name: "c", Types: []string{events.AllTypes, "test_widget.made"}, HandleTx: noop},
			{Name: "d", Types: events.Names(widgetMade, widgetMade), HandleTx: noop},
			{Name: "e", Types: events.Names(widgetMade)},
		}},
	)
	require.Error(t, err)
	for _, want := range []string{
		`declares "test_widget.lost" without a payload schema`,
		"event type test_widget.made is declared twice",
		`subscriber b: no module declares the event type "test_widget.unknown"`,
		"subscriber a registered twice",
		`subscriber c: "*" stands alone`,
		"subscriber d names test_widget.made twice",
		"subscriber e must set exactly one of HandleTx and Handle",
	} {
		require.ErrorContains(t, err, want)
	}
	require.Len(t, reg.Subscribers(), 1, "only the sound subscriber is registered")
}

func TestRegistry_AllTypesFollowsLaterDeclarations(t *testing.T) {
	t.Parallel()
	// Wiring by hand (tests, tools): a subscriber to every type receives the
	// types declared after it too.
	reg := events.NewRegistry()
	reg.AddTypes(widgetMade.Describe())
	reg.MustSubscribe(events.Subscriber{Name: "all", Types: []string{events.AllTypes}, HandleTx: noop})
	reg.AddTypes(gadgetMade.Describe())
	require.Equal(t, []string{"test_widget.made", "test_gadget.made"}, reg.Subscriber("all").Types)
	require.Len(t, reg.SubscribersOf("test_gadget.made"), 1)
	require.Panics(t, func() { reg.AddTypes(gadgetMade.Describe()) }, "declared twice")
}
