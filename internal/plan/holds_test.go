package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/purchasing"
)

// A task held by its materials starts on their day at the earliest; one
// held to a day already past starts as it would.
func TestSchedule_NotBefore(t *testing.T) {
	t.Parallel()
	centers := map[int64]Center{1: {Capacity: 480, Weekdays: []int{1, 2, 3, 4, 5}}}
	p, err := Schedule(Problem{Today: day("2026-12-07"), Centers: centers, Tasks: []Task{
		{Center: 1, Minutes: 60, NotBefore: day("2026-12-09")},
		{Center: 1, Minutes: 60, After: []int{0}},
		{Center: 1, Minutes: 60, NotBefore: day("2026-12-01")},
	}})
	require.NoError(t, err)
	require.Equal(t, Moment{Day: day("2026-12-09")}, p.Slots[0].Start)
	require.Equal(t, Moment{Day: day("2026-12-09"), Min: 60}, p.Slots[1].Start, "after its held predecessor")
	require.Equal(t, Moment{Day: day("2026-12-07")}, p.Slots[2].Start)
	require.Equal(t, day("2026-12-09"), p.ETA)
}

// Stock goes to the live orders in plan order: each is covered on the day
// what is on hand and what arrives by then covers its need and the needs
// of the orders before it; an overdue delivery counts as today's.
func TestAvailableOn(t *testing.T) {
	t.Parallel()
	today := day("2026-12-07")
	in := []purchasing.Incoming{{Day: day("2026-12-04"), Qty: 1}, {Day: day("2026-12-09"), Qty: 5}, {Day: day("2026-12-11"), Qty: 5}}
	for _, c := range []struct {
		need  float64
		want  string
		known bool
	}{
		{need: 2, want: "2026-12-07", known: true},   // on hand
		{need: 3, want: "2026-12-07", known: true},   // the overdue delivery
		{need: 3.5, want: "2026-12-09", known: true}, // Wednesday's
		{need: 8, want: "2026-12-09", known: true},
		{need: 8.5, want: "2026-12-11", known: true},
		{need: 13.5, known: false},
	} {
		got, ok := availableOn(today, 2, in, c.need)
		require.Equal(t, c.known, ok, "need %v", c.need)
		if ok {
			require.Equal(t, c.want, got.Format(time.DateOnly), "need %v", c.need)
		}
	}
}
