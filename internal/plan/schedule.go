package plan

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// This file is the ETA computation: a forward, finite-capacity schedule. It
// is a pure function of its input (no database, no clock), so that it can be
// tested as a table.
//
// The model: every work centre has a capacity in minutes per working day
// (a day is working when its ISO weekday is in the centre's weekdays and it
// is not one of its holidays). A day's capacity is used from minute 0 up, and
// the centre's "level" on a day is the minute up to which it is taken. Minute
// 0 of a day's capacity is the centre's shift start, in the factory's time
// zone: at Now minutes after today's midnight, the first Now − ShiftStart
// minutes of today's capacity are gone (all of it once the shift, shift
// start + capacity, is over), so nothing is planned in the past. An
// operation starts at the latest of: the end of its predecessors, the
// centre's level on that day, and now; it takes the free
// minutes of that day and, when they are not enough, continues on the
// centre's next working days. A predecessor that ends at or past the
// centre's capacity of the day pushes the operation to the centre's next
// working day. Operations are placed in the order given, each on the
// centre's level as the ones before left it; minutes skipped by a late
// predecessor are not filled later.

// Center is what the scheduler knows of a work centre.
type Center struct {
	Capacity   float64  // minutes per working day, > 0
	ShiftStart float64  // minute of the day its capacity starts (08:00 is 480)
	Weekdays   []int    // ISO weekdays it works, 1 = Monday … 7 = Sunday
	Holidays   []string // days off, "YYYY-MM-DD"
}

// gone returns how many minutes of its capacity today the centre has lost
// at minute now of the day: from 0 before its shift to all of them after it.
func (c Center) gone(now float64) float64 {
	return min(max(now-c.ShiftStart, 0), c.Capacity)
}

// Works tells whether the centre works on day d.
func (c Center) Works(d time.Time) bool {
	wd := int(d.Weekday())
	if wd == 0 {
		wd = 7
	}
	if !slices.Contains(c.Weekdays, wd) {
		return false
	}
	if len(c.Holidays) == 0 {
		return true
	}
	// The schedule asks this of every day it passes for every task: the
	// day's text is made on the stack, not allocated.
	var buf [len(time.DateOnly)]byte
	day := d.AppendFormat(buf[:0], time.DateOnly)
	for _, h := range c.Holidays {
		if h == string(day) {
			return false
		}
	}
	return true
}

// Moment is a point on a work centre's timeline: minute Min of day Day's
// capacity.
type Moment struct {
	Day time.Time // midnight UTC
	Min float64
}

// Before tells whether m is earlier than o.
func (m Moment) Before(o Moment) bool {
	return m.Day.Before(o.Day) || (m.Day.Equal(o.Day) && m.Min < o.Min)
}

// Slot is where an operation was placed: from Start to End.
type Slot struct {
	Start, End Moment
}

// Task is one operation to place: Minutes on work centre Center, after the
// tasks whose indices are listed in After (all lower than its own).
type Task struct {
	Center  int64
	Minutes float64
	After   []int
	// NotBefore holds the task back until that day (midnight UTC): the
	// day the materials it uses up are available; zero: no such wait.
	NotBefore time.Time
}

// Booking is load already on a centre: its capacity on Day is used up to Level minutes.
type Booking struct {
	Center int64
	Day    time.Time
	Level  float64
}

// Problem is the input of Schedule.
type Problem struct {
	Today   time.Time        // nothing starts before this day
	Now     float64          // the minute of Today it is now, in the factory's zone: nothing starts before it
	Centers map[int64]Center // every centre the tasks and bookings name
	Load    []Booking        // the work already launched
	Tasks   []Task           // in an order where predecessors come first
}

// Plan is the output of Schedule.
type Plan struct {
	Slots []Slot    // one per task, in the same order
	ETA   time.Time // the day the last task ends (Today when there are none)
}

// maxSearchDays bounds the search for a centre's next working day.
const maxSearchDays = 3 * 366

const epsilon = 1e-9

// ErrNeverWorks is what a NeverWorksError is: a centre has no working day
// within three years of the day an operation is to start.
var ErrNeverWorks = errors.New("plan: a work centre has no working day within three years")

// ErrBeyondHorizon is what a NeverWorksError with BookedUp is: the centre
// works, but every working day of the three years from the day an operation
// is to start is booked full, so the operation would end beyond the planning
// horizon.
var ErrBeyondHorizon = errors.New("plan: a work centre is booked up for three years")

// NeverWorksError names the centre that has no free working day within
// three years of From, the day an operation was to start on it: BookedUp is
// false when its calendar has no working day there at all, true when it has
// some but all of them are booked full (the planning horizon is reached).
type NeverWorksError struct {
	Center   int64
	From     time.Time
	BookedUp bool
}

func (e *NeverWorksError) Error() string {
	if e.BookedUp {
		return fmt.Sprintf("plan: work centre %d is booked up for three years from %s", e.Center, e.From.Format(time.DateOnly))
	}
	return fmt.Sprintf("plan: work centre %d has no working day within three years of %s", e.Center, e.From.Format(time.DateOnly))
}

// Is makes errors.Is(err, ErrNeverWorks) true, or errors.Is(err,
// ErrBeyondHorizon) when the centre is booked up.
func (e *NeverWorksError) Is(target error) bool {
	if e.BookedUp {
		return target == ErrBeyondHorizon
	}
	return target == ErrNeverWorks
}

// Schedule places every task forward on its centre's free capacity and
// returns the slots and the ETA. It returns an error when a task names an
// unknown centre or a predecessor that does not come before it, and
// a *NeverWorksError (errors.Is ErrNeverWorks) when a centre never works.
func Schedule(p Problem) (Plan, error) {
	sc := newScheduler(p)
	if err := sc.add(p.Tasks); err != nil {
		return Plan{}, err
	}
	return sc.plan, nil
}

// scheduler is Schedule a batch of tasks at a time: each batch is placed
// after the ones before it (its tasks numbered on from theirs, which its
// predecessors may name), as if all had been given at once.
type scheduler struct {
	p      Problem // its Tasks are not read
	today  time.Time
	levels map[int64]*centreDays
	plan   Plan
}

// newScheduler is a scheduler of p's centres and load, no task placed.
func newScheduler(p Problem) *scheduler {
	sc := &scheduler{p: p, today: midnight(p.Today), levels: map[int64]*centreDays{}}
	sc.plan.ETA = sc.today
	for _, b := range p.Load {
		l := sc.level(b.Center)
		d := midnight(b.Day)
		l.level[d] = max(l.level[d], b.Level)
	}
	return sc
}

func (sc *scheduler) level(c int64) *centreDays {
	l := sc.levels[c]
	if l == nil {
		l = &centreDays{level: map[time.Time]float64{}, skip: map[time.Time]skip{}}
		if cc, ok := sc.p.Centers[c]; ok && sc.p.Now > 0 {
			if g := cc.gone(sc.p.Now); g > 0 {
				l.level[sc.today] = g
			}
		}
		sc.levels[c] = l
	}
	return l
}

// add places tasks after those placed before; their slots are appended to
// sc.plan's.
func (sc *scheduler) add(tasks []Task) error {
	base := len(sc.plan.Slots)
	sc.plan.Slots = append(sc.plan.Slots, make([]Slot, len(tasks))...)
	for k, t := range tasks {
		i := base + k
		c, ok := sc.p.Centers[t.Center]
		if !ok || c.Capacity <= 0 {
			return fmt.Errorf("plan: task %d: work centre %d is unknown or has no capacity", i, t.Center)
		}
		earliest := Moment{Day: sc.today}
		if nb := midnight(t.NotBefore); !t.NotBefore.IsZero() && nb.After(sc.today) {
			earliest = Moment{Day: nb}
		}
		for _, a := range t.After {
			if a < 0 || a >= i {
				return fmt.Errorf("plan: task %d: predecessor %d does not come before it", i, a)
			}
			if end := sc.plan.Slots[a].End; earliest.Before(end) {
				earliest = end
			}
		}
		s, err := place(c, sc.level(t.Center), earliest, t.Minutes)
		if err != nil {
			return &NeverWorksError{Center: t.Center, From: earliest.Day, BookedUp: errors.Is(err, ErrBeyondHorizon)}
		}
		sc.plan.Slots[i] = s
		if s.End.Day.After(sc.plan.ETA) {
			sc.plan.ETA = s.End.Day
		}
	}
	return nil
}

// centreDays is a centre's days as Schedule fills them: the level each is
// used up to, and skips over the days no task can use any more (days off,
// and days full), so that a task placed behind weeks of full days does not
// walk through them one by one.
type centreDays struct {
	level map[time.Time]float64
	skip  map[time.Time]skip
}

// skip leads from a day no task can use to the next day that may have
// room: days is how many days it passes, works whether one of them was a
// working day.
type skip struct {
	to    time.Time
	days  int
	works bool
}

// next is the skip from day d over every day no task can use that follows
// it, each skip on the way shortened to lead to the end at once; false
// when day d may have room.
func (cd *centreDays) next(d time.Time) (skip, bool) {
	first, ok := cd.skip[d]
	if !ok {
		return skip{}, false
	}
	if _, more := cd.skip[first.to]; !more {
		return first, true
	}
	from, steps := []time.Time{d}, []skip{first}
	for {
		last := steps[len(steps)-1]
		nx, ok := cd.skip[last.to]
		if !ok {
			break
		}
		from, steps = append(from, last.to), append(steps, nx)
	}
	acc := skip{to: steps[len(steps)-1].to}
	for i := len(steps) - 1; i >= 0; i-- {
		acc.days += steps[i].days
		acc.works = acc.works || steps[i].works
		cd.skip[from[i]] = acc
	}
	return acc, true
}

// place puts minutes of work on the centre from the moment earliest on,
// raising the centre's levels.
func place(c Center, cd *centreDays, earliest Moment, minutes float64) (Slot, error) {
	var s Slot
	level := cd.level
	day, from := earliest.Day, earliest.Min
	started := false
	remaining := minutes
	works := false // a working day met since the last progress
	// searched counts the days passed since the last progress; near the
	// horizon the days are walked one by one, so that the error says what
	// it says without skips.
	searched := 0
	for {
		if searched > maxSearchDays {
			if works {
				return Slot{}, ErrBeyondHorizon
			}
			return Slot{}, ErrNeverWorks
		}
		if sk, ok := cd.next(day); ok && searched+sk.days <= maxSearchDays {
			searched += sk.days
			works = works || sk.works
			day, from = sk.to, 0
			continue
		}
		searched++
		next := day.AddDate(0, 0, 1)
		if !c.Works(day) {
			cd.skip[day] = skip{to: next, days: 1}
			day, from = next, 0
			continue
		}
		works = true
		if level[day] >= c.Capacity-epsilon {
			cd.skip[day] = skip{to: next, days: 1, works: true}
			day, from = next, 0
			continue
		}
		start := max(level[day], from)
		if start >= c.Capacity-epsilon {
			day, from = next, 0
			continue
		}
		searched = 1
		take := min(remaining, c.Capacity-start)
		if !started {
			s.Start, started = Moment{Day: day, Min: start}, true
		}
		level[day] = start + take
		remaining -= take
		if remaining <= epsilon {
			s.End = Moment{Day: day, Min: start + take}
			return s, nil
		}
		day, from = next, 0
	}
}

// Portions splits a slot planned on a centre into the minutes it takes on
// each of the centre's working days, as the schedule view shows the load.
func Portions(c Center, s Slot) map[time.Time]float64 {
	out := map[time.Time]float64{}
	if c.Capacity <= 0 {
		return out
	}
	start, end := midnight(s.Start.Day), midnight(s.End.Day)
	if start.Equal(end) {
		out[start] = max(s.End.Min-s.Start.Min, 0)
		return out
	}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		switch {
		case d.Equal(start):
			out[d] = max(c.Capacity-s.Start.Min, 0)
		case d.Equal(end):
			out[d] = s.End.Min
		case c.Works(d):
			out[d] = c.Capacity
		}
	}
	return out
}

// Bookings turns a slot planned on a centre into the levels it holds on
// each day: the schedule of work already launched, as Schedule takes it.
func Bookings(center int64, c Center, s Slot) []Booking {
	start, end := midnight(s.Start.Day), midnight(s.End.Day)
	var out []Booking
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		switch {
		case d.Equal(end):
			out = append(out, Booking{Center: center, Day: d, Level: s.End.Min})
		case c.Works(d):
			out = append(out, Booking{Center: center, Day: d, Level: c.Capacity})
		}
	}
	return out
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
