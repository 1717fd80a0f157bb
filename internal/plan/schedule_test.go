package plan

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	week := []int{1, 2, 3, 4, 5}
	const cut, edge, asm, shift = 1, 2, 3, 5
	centers := map[int64]Center{
		cut:  {Capacity: 960, Weekdays: week},
		edge: {Capacity: 480, Weekdays: week},
		asm:  {Capacity: 960, Weekdays: week, Holidays: []string{"2026-12-31", "2027-01-01"}},
	}
	many := func(n int, center int64, minutes float64) []Task {
		out := make([]Task, n)
		for i := range out {
			out[i] = Task{Center: center, Minutes: minutes}
		}
		return out
	}
	// 2026-11-16 is a Monday.
	tests := []struct {
		name   string
		today  string
		now    float64 // minute of today
		load   []Booking
		tasks  []Task
		eta    string
		slots  []Slot // checked when given
		errIs  error
		errAny bool
	}{
		{name: "nothing to do: today", today: "2026-11-16", eta: "2026-11-16"},
		{name: "fits today", today: "2026-11-16", tasks: []Task{{Center: cut, Minutes: 52}}, eta: "2026-11-16",
			slots: []Slot{{Moment{day("2026-11-16"), 0}, Moment{day("2026-11-16"), 52}}}},
		{name: "weekend: starts on Monday", today: "2026-11-14", tasks: []Task{{Center: cut, Minutes: 10}}, eta: "2026-11-16"},
		{name: "capacity full today: tomorrow", today: "2026-11-16",
			load:  []Booking{{Center: cut, Day: day("2026-11-16"), Level: 960}},
			tasks: []Task{{Center: cut, Minutes: 10}}, eta: "2026-11-17",
			slots: []Slot{{Moment{day("2026-11-17"), 0}, Moment{day("2026-11-17"), 10}}}},
		{name: "capacity full on Friday: Monday", today: "2026-11-20",
			load:  []Booking{{Center: cut, Day: day("2026-11-20"), Level: 960}},
			tasks: []Task{{Center: cut, Minutes: 10}}, eta: "2026-11-23"},
		{name: "the rest of today and then tomorrow", today: "2026-11-16",
			load:  []Booking{{Center: cut, Day: day("2026-11-16"), Level: 900}},
			tasks: []Task{{Center: cut, Minutes: 100}}, eta: "2026-11-17",
			slots: []Slot{{Moment{day("2026-11-16"), 900}, Moment{day("2026-11-17"), 40}}}},
		{name: "load on another centre does not matter", today: "2026-11-16",
			load:  []Booking{{Center: edge, Day: day("2026-11-16"), Level: 480}},
			tasks: []Task{{Center: cut, Minutes: 100}}, eta: "2026-11-16"},
		{name: "load of past days does not matter", today: "2026-11-16",
			load:  []Booking{{Center: cut, Day: day("2026-11-13"), Level: 960}},
			tasks: []Task{{Center: cut, Minutes: 100}}, eta: "2026-11-16"},
		{name: "after its predecessor", today: "2026-11-16",
			tasks: []Task{{Center: cut, Minutes: 300}, {Center: edge, Minutes: 30, After: []int{0}}}, eta: "2026-11-16",
			slots: []Slot{
				{Moment{day("2026-11-16"), 0}, Moment{day("2026-11-16"), 300}},
				{Moment{day("2026-11-16"), 300}, Moment{day("2026-11-16"), 330}}}},
		{name: "predecessor ends past the next centre's shift: next working day", today: "2026-11-20",
			tasks: []Task{{Center: cut, Minutes: 500}, {Center: edge, Minutes: 30, After: []int{0}}}, eta: "2026-11-23",
			slots: []Slot{
				{Moment{day("2026-11-20"), 0}, Moment{day("2026-11-20"), 500}},
				{Moment{day("2026-11-23"), 0}, Moment{day("2026-11-23"), 30}}}},
		{name: "after the latest of several predecessors", today: "2026-11-16",
			tasks: []Task{{Center: cut, Minutes: 100}, {Center: edge, Minutes: 200}, {Center: asm, Minutes: 10, After: []int{0, 1}}}, eta: "2026-11-16",
			slots: []Slot{{}, {}, {Moment{day("2026-11-16"), 200}, Moment{day("2026-11-16"), 210}}}},
		{name: "holidays are skipped", today: "2026-12-30",
			load:  []Booking{{Center: asm, Day: day("2026-12-30"), Level: 960}},
			tasks: []Task{{Center: asm, Minutes: 60}}, eta: "2027-01-04"},
		{name: "a holiday of one centre is a working day of another", today: "2026-12-31",
			tasks: []Task{{Center: cut, Minutes: 60}, {Center: asm, Minutes: 60, After: []int{0}}}, eta: "2027-01-04",
			slots: []Slot{
				{Moment{day("2026-12-31"), 0}, Moment{day("2026-12-31"), 60}},
				{Moment{day("2027-01-04"), 0}, Moment{day("2027-01-04"), 60}}}},
		{name: "one operation longer than a day spans days", today: "2026-11-16",
			tasks: []Task{{Center: edge, Minutes: 1000}}, eta: "2026-11-18",
			slots: []Slot{{Moment{day("2026-11-16"), 0}, Moment{day("2026-11-18"), 40}}}},
		{name: "long order spanning weeks", today: "2026-11-16",
			// 100 × 96 minutes = 9,600 minutes = ten days of 960: two working weeks.
			tasks: many(100, cut, 96), eta: "2026-11-27"},
		{name: "long order after a full week of launched work", today: "2026-11-16",
			load: []Booking{
				{Center: cut, Day: day("2026-11-16"), Level: 960}, {Center: cut, Day: day("2026-11-17"), Level: 960},
				{Center: cut, Day: day("2026-11-18"), Level: 960}, {Center: cut, Day: day("2026-11-19"), Level: 960},
				{Center: cut, Day: day("2026-11-20"), Level: 960}},
			tasks: many(100, cut, 96), eta: "2026-12-04"},
		// Centre 5 works one 8-hour shift from 08:00 (minute 480).
		{name: "now, before the shift: all of today", today: "2026-11-16", now: 7 * 60, tasks: []Task{{Center: shift, Minutes: 100}}, eta: "2026-11-16",
			slots: []Slot{{Moment{day("2026-11-16"), 0}, Moment{day("2026-11-16"), 100}}}},
		{name: "now, at 10:00: what is left of the shift", today: "2026-11-16", now: 10 * 60, tasks: []Task{{Center: shift, Minutes: 100}}, eta: "2026-11-16",
			slots: []Slot{{Moment{day("2026-11-16"), 120}, Moment{day("2026-11-16"), 220}}}},
		{name: "now, at 15:00: the rest of today and then tomorrow", today: "2026-11-16", now: 15 * 60, tasks: []Task{{Center: shift, Minutes: 100}}, eta: "2026-11-17",
			slots: []Slot{{Moment{day("2026-11-16"), 420}, Moment{day("2026-11-17"), 40}}}},
		{name: "now, after the shift: tomorrow", today: "2026-11-16", now: 16*60 + 30, tasks: []Task{{Center: shift, Minutes: 100}}, eta: "2026-11-17",
			slots: []Slot{{Moment{day("2026-11-17"), 0}, Moment{day("2026-11-17"), 100}}}},
		{name: "now, launched work past now comes first", today: "2026-11-16", now: 10 * 60,
			load:  []Booking{{Center: shift, Day: day("2026-11-16"), Level: 300}},
			tasks: []Task{{Center: shift, Minutes: 100}}, eta: "2026-11-16",
			slots: []Slot{{Moment{day("2026-11-16"), 300}, Moment{day("2026-11-16"), 400}}}},
		{name: "now, each centre its own shift", today: "2026-11-16", now: 10 * 60,
			tasks: []Task{{Center: cut, Minutes: 10}, {Center: shift, Minutes: 10}}, eta: "2026-11-16",
			slots: []Slot{
				{Moment{day("2026-11-16"), 600}, Moment{day("2026-11-16"), 610}},
				{Moment{day("2026-11-16"), 120}, Moment{day("2026-11-16"), 130}}}},
		{name: "now, on a day off: the next working day from its start", today: "2026-11-14", now: 12 * 60, tasks: []Task{{Center: shift, Minutes: 10}}, eta: "2026-11-16",
			slots: []Slot{{Moment{day("2026-11-16"), 0}, Moment{day("2026-11-16"), 10}}}},
		{name: "unknown centre", today: "2026-11-16", tasks: []Task{{Center: 99, Minutes: 1}}, errAny: true},
		{name: "predecessor after the task", today: "2026-11-16", tasks: []Task{{Center: cut, Minutes: 1, After: []int{1}}, {Center: cut, Minutes: 1}}, errAny: true},
		{name: "a centre that never works", today: "2026-11-16", tasks: []Task{{Center: 4, Minutes: 1}}, errIs: ErrNeverWorks},
		{name: "a centre booked up beyond the horizon", today: "2026-11-16", load: bookedFull(shift, "2026-11-16", 4*366),
			tasks: []Task{{Center: shift, Minutes: 1}}, errIs: ErrBeyondHorizon},
	}
	centers[4] = Center{Capacity: 480, Weekdays: nil}
	centers[shift] = Center{Capacity: 480, ShiftStart: 480, Weekdays: week}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Schedule(Problem{Today: day(tc.today), Now: tc.now, Centers: centers, Load: tc.load, Tasks: tc.tasks})
			switch {
			case tc.errIs != nil:
				require.True(t, errors.Is(err, tc.errIs), "%v", err)
				return
			case tc.errAny:
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.eta, p.ETA.Format(time.DateOnly))
			require.Len(t, p.Slots, len(tc.tasks))
			for i, want := range tc.slots {
				if want == (Slot{}) {
					continue
				}
				require.Equal(t, want, p.Slots[i], "slot %d", i)
			}
			for i, s := range p.Slots {
				require.False(t, s.End.Before(s.Start), "slot %d ends before it starts", i)
				require.False(t, s.Start.Day.Before(day(tc.today)), "slot %d starts before today", i)
				for _, a := range tc.tasks[i].After {
					require.False(t, s.Start.Before(p.Slots[a].End), "slot %d starts before its predecessor %d ends", i, a)
				}
			}
		})
	}
}

// The load a slot leaves is what a later schedule sees: bookings rebuilt from
// the slots put new work exactly where one schedule of everything would.
func TestSchedule_BookingsReproduceTheLoad(t *testing.T) {
	t.Parallel()
	centers := map[int64]Center{1: {Capacity: 480, Weekdays: []int{1, 2, 3, 4, 5}}}
	first := []Task{{Center: 1, Minutes: 700}, {Center: 1, Minutes: 100}}
	second := []Task{{Center: 1, Minutes: 300}}
	all, err := Schedule(Problem{Today: day("2026-11-19"), Centers: centers, Tasks: append(append([]Task{}, first...), second...)})
	require.NoError(t, err)
	p1, err := Schedule(Problem{Today: day("2026-11-19"), Centers: centers, Tasks: first})
	require.NoError(t, err)
	var load []Booking
	for _, s := range p1.Slots {
		load = append(load, Bookings(1, centers[1], s)...)
	}
	p2, err := Schedule(Problem{Today: day("2026-11-19"), Centers: centers, Load: load, Tasks: second})
	require.NoError(t, err)
	require.Equal(t, all.Slots[2], p2.Slots[0])
	require.Equal(t, all.ETA, p2.ETA)
	require.Equal(t, "2026-11-23", p2.ETA.Format(time.DateOnly)) // the first: Thu 480 + Fri 220; the second: Fri 100; the third: Fri 160 + Mon 140

	// Portions: the minutes of each day, weekend excluded.
	got := Portions(centers[1], p1.Slots[0])
	require.Equal(t, map[time.Time]float64{day("2026-11-19"): 480, day("2026-11-20"): 220}, got)
}

// bookedFull is load that fills the centre on each of the days from the day.
func bookedFull(center int64, from string, days int) []Booking {
	start, _ := time.Parse(time.DateOnly, from)
	out := make([]Booking, days)
	for i := range out {
		out[i] = Booking{Center: center, Day: start.AddDate(0, 0, i), Level: 480}
	}
	return out
}
