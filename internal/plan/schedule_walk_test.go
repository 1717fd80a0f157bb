package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// walkSchedule is Schedule as it would be without skips: every task walks
// its centre's days one by one from its earliest moment. It is the
// reference the skips must not change.
func walkSchedule(p Problem) (Plan, error) {
	today := midnight(p.Today)
	levels := map[int64]map[time.Time]float64{}
	level := func(c int64) map[time.Time]float64 {
		if levels[c] == nil {
			levels[c] = map[time.Time]float64{}
			if cc, ok := p.Centers[c]; ok && p.Now > 0 && cc.gone(p.Now) > 0 {
				levels[c][today] = cc.gone(p.Now)
			}
		}
		return levels[c]
	}
	for _, b := range p.Load {
		l := level(b.Center)
		l[midnight(b.Day)] = max(l[midnight(b.Day)], b.Level)
	}
	out := Plan{Slots: make([]Slot, len(p.Tasks)), ETA: today}
	for i, t := range p.Tasks {
		c := p.Centers[t.Center]
		earliest := Moment{Day: today}
		if nb := midnight(t.NotBefore); !t.NotBefore.IsZero() && nb.After(today) {
			earliest = Moment{Day: nb}
		}
		for _, a := range t.After {
			if end := out.Slots[a].End; earliest.Before(end) {
				earliest = end
			}
		}
		l := level(t.Center)
		var s Slot
		day, from, started, remaining, works := earliest.Day, earliest.Min, false, t.Minutes, false
		for searched := 0; ; searched++ {
			if searched > maxSearchDays {
				return Plan{}, &NeverWorksError{Center: t.Center, From: earliest.Day, BookedUp: works}
			}
			if !c.Works(day) {
				day, from = day.AddDate(0, 0, 1), 0
				continue
			}
			works = true
			start := max(l[day], from)
			if start >= c.Capacity-epsilon {
				day, from = day.AddDate(0, 0, 1), 0
				continue
			}
			searched = 0
			take := min(remaining, c.Capacity-start)
			if !started {
				s.Start, started = Moment{Day: day, Min: start}, true
			}
			l[day] = start + take
			remaining -= take
			if remaining <= epsilon {
				s.End = Moment{Day: day, Min: start + take}
				break
			}
			day, from = day.AddDate(0, 0, 1), 0
		}
		out.Slots[i] = s
		if s.End.Day.After(out.ETA) {
			out.ETA = s.End.Day
		}
	}
	return out, nil
}

// The skips over days off and full days change no slot: on random
// problems (calendars with days off and holidays, load already booked,
// tasks of every length after others and held back by materials, now in
// the middle of a shift) Schedule gives what walking every day gives.
func TestSchedule_SkipsChangeNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	today := day("2026-11-16")
	for n := range 150 {
		p := Problem{Today: today, Now: float64(rng.IntN(1440)), Centers: map[int64]Center{}}
		for c := int64(1); c <= 4; c++ {
			cc := Center{Capacity: float64(60 * (1 + rng.IntN(16))), ShiftStart: 480, Weekdays: []int{1, 2, 3, 4, 5}}
			if rng.IntN(3) == 0 {
				cc.Weekdays = []int{2, 4, 6}
			}
			for range rng.IntN(6) {
				cc.Holidays = append(cc.Holidays, today.AddDate(0, 0, rng.IntN(60)).Format(time.DateOnly))
			}
			p.Centers[c] = cc
			for range rng.IntN(20) {
				p.Load = append(p.Load, Booking{Center: c, Day: today.AddDate(0, 0, rng.IntN(40)), Level: float64(rng.IntN(1000))})
			}
		}
		for i := range 60 + rng.IntN(200) {
			t := Task{Center: int64(1 + rng.IntN(4)), Minutes: float64(1 + rng.IntN(3*960))}
			for range rng.IntN(3) {
				if i > 0 {
					t.After = append(t.After, rng.IntN(i))
				}
			}
			if rng.IntN(8) == 0 {
				t.NotBefore = today.AddDate(0, 0, rng.IntN(30))
			}
			p.Tasks = append(p.Tasks, t)
		}
		want, werr := walkSchedule(p)
		got, err := Schedule(p)
		require.Equal(t, werr == nil, err == nil, fmt.Sprintf("problem %d: %v / %v", n, werr, err))
		require.Equal(t, want, got, "problem %d", n)
	}
}

// Near the horizon the skips step aside: a centre with no working day
// for three years still says so, and one booked full says it is booked up.
func TestSchedule_SkipsKeepTheHorizonErrors(t *testing.T) {
	t.Parallel()
	today := day("2026-11-16")
	never := Problem{Today: today, Centers: map[int64]Center{1: {Capacity: 480, Weekdays: []int{}}},
		Tasks: []Task{{Center: 1, Minutes: 10}, {Center: 1, Minutes: 10}}}
	_, err := Schedule(never)
	require.True(t, errors.Is(err, ErrNeverWorks), "%v", err)
	full := Problem{Today: today, Centers: map[int64]Center{1: {Capacity: 480, Weekdays: []int{1}}}}
	for d := range 3*366 + 10 {
		full.Load = append(full.Load, Booking{Center: 1, Day: today.AddDate(0, 0, d), Level: 480})
	}
	full.Tasks = []Task{{Center: 1, Minutes: 10}, {Center: 1, Minutes: 10}}
	_, err = Schedule(full)
	require.True(t, errors.Is(err, ErrBeyondHorizon), "%v", err)
}
