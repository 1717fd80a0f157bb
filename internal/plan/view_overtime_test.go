package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Work done is on the day it was done in the factory's time zone, whether
// the centre works that day or not, and is overtime when it was done
// outside the centre's shift or on its day off.
func TestDoneSlot_DayAndOvertime(t *testing.T) {
	t.Parallel()
	moscow, err := time.LoadLocation("Europe/Moscow")
	require.NoError(t, err)
	c := Center{Capacity: 480, ShiftStart: 480, Weekdays: []int{1, 2, 3, 4, 5}} // 08:00–16:00, Monday to Friday
	at := func(s string) *time.Time {
		tt, err := time.ParseInLocation("2006-01-02 15:04", s, moscow)
		require.NoError(t, err)
		return &tt
	}
	for _, tc := range []struct {
		name             string
		started, done    string
		day              string
		startMin, endMin float64
		overtime         bool
	}{
		{"in the shift", "2026-11-20 09:00", "2026-11-20 10:30", "2026-11-20", 60, 150, false},
		{"Friday evening, after the shift", "2026-11-20 18:00", "2026-11-20 21:30", "2026-11-20", 480, 480, true},
		{"Friday, half an hour past the shift", "2026-11-20 15:00", "2026-11-20 16:30", "2026-11-20", 420, 480, true},
		{"Saturday, a day off", "2026-11-21 10:00", "2026-11-21 11:00", "2026-11-21", 120, 180, true},
		{"late Friday in Moscow, Friday in UTC too", "2026-11-20 23:30", "2026-11-20 23:50", "2026-11-20", 480, 480, true},
		{"early Monday, before the shift", "2026-11-23 06:00", "2026-11-23 07:00", "2026-11-23", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := Operation{Status: OpDone, StartedAt: at(tc.started), CompletedAt: at(tc.done)}
			s := doneSlot(op, c, moscow)
			require.Equal(t, tc.day, s.Start.Day.Format(time.DateOnly))
			require.Equal(t, tc.day, s.End.Day.Format(time.DateOnly), "never on the next day")
			require.InDelta(t, tc.startMin, s.Start.Min, 0.01)
			require.InDelta(t, tc.endMin, s.End.Min, 0.01)
			require.Equal(t, tc.overtime, doneOvertime(op, c, moscow))
		})
	}
}
