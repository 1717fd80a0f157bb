package plan

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"time"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// Schedule view limits.
const (
	DefaultScheduleDays = 14
	MaxScheduleDays     = 92
)

// ScheduleView is every work centre's planned operations and daily load
// over a range of days.
type ScheduleView struct {
	From database.Date `json:"from" swaggertype:"string" format:"date"`
	To   database.Date `json:"to" swaggertype:"string" format:"date"`
	// Today is the day planning starts from, as the chart's today line shows.
	Today       database.Date    `json:"today" swaggertype:"string" format:"date"`
	WorkCenters []CenterSchedule `json:"work_centers"`
}

// CenterSchedule is one work centre's lane: its days and the production
// orders planned on it.
type CenterSchedule struct {
	ID                int64      `json:"id"`
	Code              string     `json:"code"`
	Name              string     `json:"name"`
	CapacityMinPerDay int        `json:"capacity_min_per_day"`
	Days              []DayLoad  `json:"days"`
	Orders            []OrderBar `json:"orders"`
}

// DayLoad is a work centre's load on one day.
type DayLoad struct {
	Date        database.Date `json:"date" swaggertype:"string" format:"date"`
	Working     bool          `json:"working"`
	CapacityMin float64       `json:"capacity_min"` // 0 on a day off
	LoadMin     float64       `json:"load_min"`     // minutes of the operations not done of launched and in-progress orders, where they are planned
	Overload    bool          `json:"overload"`     // more load than capacity
}

// OrderBar is the operations of one production order planned on one work
// centre: from minute StartMin of StartDay to minute EndMin of EndDay.
type OrderBar struct {
	ProdOrderID int64         `json:"prod_order_id"`
	Status      string        `json:"status" enums:"launched,in_progress,done,closed"`
	StartDay    database.Date `json:"start_day" swaggertype:"string" format:"date"`
	StartMin    float64       `json:"start_min"`
	EndDay      database.Date `json:"end_day" swaggertype:"string" format:"date"`
	EndMin      float64       `json:"end_min"`
	Operations  int           `json:"operations"`
	OpsDone     int           `json:"ops_done"`
	Minutes     float64       `json:"minutes"`
	// SalesOrderIDs are the sales orders of the production order's items.
	SalesOrderIDs []int64 `json:"sales_order_ids"`
	// SKUs are its items' SKUs.
	SKUs []string `json:"skus"`
	// DueDate is the earliest due date of its items.
	DueDate database.Date `json:"due_date" swaggertype:"string" format:"date" extensions:"x-nullable"`
	// ETA is the production order's ETA.
	ETA database.Date `json:"eta" swaggertype:"string" format:"date"`
	// Late: the ETA is after the due date.
	Late bool `json:"late"`
	// OvertimeOps are its operations done outside the centre's working
	// hours: before or after its shift, or on a day off (drawn on the day
	// they were done, marked as overtime).
	OvertimeOps int `json:"overtime_ops"`
}

// Schedule returns the schedule of the days from..to (inclusive) of every
// work centre, for the production orders that are not cancelled. A zero
// from is today, a zero to is from plus two weeks. It returns EINVALID when
// to is before from or the range is longer than MaxScheduleDays.
func (s *Service) Schedule(ctx context.Context, from, to database.Date) (ScheduleView, error) {
	today, err := s.Today(ctx)
	if err != nil {
		return ScheduleView{}, err
	}
	from, to, err = scheduleRange(today, from, to)
	if err != nil {
		return ScheduleView{}, err
	}
	wcs, err := catalog.AllWorkCenters(ctx, s.db)
	if err != nil {
		return ScheduleView{}, err
	}
	zone := s.zone
	if zone == nil {
		zone = time.UTC
	}
	ops, err := s.scheduledOps(ctx, from, to, zone)
	if err != nil {
		return ScheduleView{}, err
	}
	centers := centersOf(wcs)
	view, index := emptyView(from, to, today, wcs, centers)
	bars := loadView(&view, index, ops, centers, zone)
	if err := s.describeBars(ctx, bars); err != nil {
		return ScheduleView{}, err
	}
	finishView(&view, index, bars)
	return view, nil
}

// scheduleRange fills in a zero from (today) and a zero to (from plus two
// weeks), and checks the range.
func scheduleRange(today time.Time, from, to database.Date) (database.Date, database.Date, error) {
	if from.IsZero() {
		from = database.DateOf(today)
	}
	if to.IsZero() {
		to = database.DateOf(from.AddDate(0, 0, DefaultScheduleDays-1))
	}
	days := int(to.Sub(from.Time).Hours()/24) + 1
	switch {
	case days < 1:
		return from, to, apperr.Invalid("invalid query", apperr.Field("to", "must not be before from"))
	case days > MaxScheduleDays:
		return from, to, apperr.Invalid("invalid query", apperr.Field("to", "must be at most %d days after from", MaxScheduleDays-1))
	}
	return from, to, nil
}

// scheduledOp is an operation with its production order's state.
type scheduledOp struct {
	Operation
	OrderStatus string
}

// scheduledOps reads the operations of the production orders not cancelled
// that may fall in the days from..to, in id order: done operations are drawn
// when they were done, the others where they are planned. The orders are
// those whose schedule reaches into the days and those with an operation
// done since the day before from.
func (s *Service) scheduledOps(ctx context.Context, from, to database.Date, zone *time.Location) ([]scheduledOp, error) {
	fromInstant := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, zone).Add(-24 * time.Hour)
	db := s.db.WithContext(ctx)
	var ids []int64
	err := db.Model(&ProdOrder{}).Where("status <> ?", StatusCancelled).
		Where("id IN (SELECT prod_order_id FROM plan_schedules WHERE first_day <= ? AND last_day >= ?) OR "+
			"id IN (SELECT prod_order_id FROM plan_operations WHERE status = ? AND completed_at >= ?)",
			to, from, OpDone, database.TimeArg(s.db, fromInstant)).Order("id").Pluck("id", &ids).Error
	if err != nil {
		return nil, err
	}
	var ops []scheduledOp
	for batch := range slices.Chunk(ids, scheduleBatch) {
		var some []scheduledOp
		err := database.Scan(db.Model(&Operation{}).Select("plan_operations.*, plan_prod_orders.status AS order_status").
			Joins("JOIN plan_prod_orders ON plan_prod_orders.id = plan_operations.prod_order_id").
			Where("plan_operations.prod_order_id IN ?", batch), &some)
		if err != nil {
			return nil, err
		}
		slots, err := slotsOf(ctx, s.db, batch)
		if err != nil {
			return nil, err
		}
		for _, op := range some {
			sl := slots[op.ID]
			setSlot(&op.Operation, sl)
			planned := !sl.Start.Day.After(to.Time) && !sl.End.Day.Before(from.Time) && !sl.End.Day.IsZero()
			done := op.Status == OpDone && op.CompletedAt != nil && !op.CompletedAt.Before(fromInstant)
			if planned || done {
				ops = append(ops, op)
			}
		}
	}
	slices.SortFunc(ops, func(a, b scheduledOp) int { return cmp.Compare(a.ID, b.ID) })
	return ops, nil
}

// emptyView is the view of the days from..to with a lane per work centre,
// in id order, its days' capacities and no load yet; index gives a work
// centre's lane.
func emptyView(from, to database.Date, today time.Time, wcs map[int64]catalog.WorkCenter, centers map[int64]Center) (view ScheduleView, index map[int64]int) {
	view = ScheduleView{From: from, To: to, Today: database.DateOf(today), WorkCenters: []CenterSchedule{}}
	index = map[int64]int{}
	ids := make([]int64, 0, len(wcs))
	for id := range wcs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		w, c := wcs[id], centers[id]
		cs := CenterSchedule{ID: w.ID, Code: w.Code, Name: w.Name, CapacityMinPerDay: w.CapacityMinPerDay, Orders: []OrderBar{}}
		for d := from.Time; !d.After(to.Time); d = d.AddDate(0, 0, 1) {
			dl := DayLoad{Date: database.DateOf(d), Working: c.Works(d)}
			if dl.Working {
				dl.CapacityMin = c.Capacity
			}
			cs.Days = append(cs.Days, dl)
		}
		index[id] = len(view.WorkCenters)
		view.WorkCenters = append(view.WorkCenters, cs)
	}
	return view, index
}

// loadView adds the operations in the view's days to their lanes: the work
// left to each day's load, and each to the bar of its production order on
// its work centre, which it returns by work centre and production order.
func loadView(view *ScheduleView, index map[int64]int, ops []scheduledOp, centers map[int64]Center, zone *time.Location) map[[2]int64]*OrderBar {
	from, to := view.From, view.To
	bars := map[[2]int64]*OrderBar{}
	for _, op := range ops {
		i, ok := index[op.WorkCenterID]
		if !ok {
			continue
		}
		cs := &view.WorkCenters[i]
		s := slotOf(op.Operation)
		if op.Status == OpDone {
			s = doneSlot(op.Operation, centers[op.WorkCenterID], zone)
		}
		if s.End.Day.Before(from.Time) || s.Start.Day.After(to.Time) {
			continue
		}
		// The load is the work left: operations not done of orders still
		// to be made, at the minutes they are planned for.
		if op.Status != OpDone && (op.OrderStatus == StatusLaunched || op.OrderStatus == StatusInProgress) {
			for d, m := range Portions(centers[op.WorkCenterID], s) {
				if k := int(d.Sub(from.Time).Hours() / 24); k >= 0 && k < len(cs.Days) {
					cs.Days[k].LoadMin += m
				}
			}
		}
		key := [2]int64{op.WorkCenterID, op.ProdOrderID}
		b := bars[key]
		if b == nil {
			b = &OrderBar{ProdOrderID: op.ProdOrderID, Status: op.OrderStatus, StartDay: database.DateOf(s.Start.Day), StartMin: s.Start.Min,
				EndDay: database.DateOf(s.End.Day), EndMin: s.End.Min}
			bars[key] = b
		}
		if s.Start.Before(Moment{Day: b.StartDay.Time, Min: b.StartMin}) {
			b.StartDay, b.StartMin = database.DateOf(s.Start.Day), s.Start.Min
		}
		if (Moment{Day: b.EndDay.Time, Min: b.EndMin}).Before(s.End) {
			b.EndDay, b.EndMin = database.DateOf(s.End.Day), s.End.Min
		}
		b.Operations++
		b.Minutes += op.Minutes
		if op.Status == OpDone {
			b.OpsDone++
			if doneOvertime(op.Operation, centers[op.WorkCenterID], zone) {
				b.OvertimeOps++
			}
		}
	}
	return bars
}

// finishView puts the bars on their lanes, in production order id order,
// and rounds each day's load and tells whether it is over the capacity.
func finishView(view *ScheduleView, index map[int64]int, bars map[[2]int64]*OrderBar) {
	for key, b := range bars {
		cs := &view.WorkCenters[index[key[0]]]
		cs.Orders = append(cs.Orders, *b)
	}
	for i := range view.WorkCenters {
		cs := &view.WorkCenters[i]
		sort.Slice(cs.Orders, func(a, b int) bool { return cs.Orders[a].ProdOrderID < cs.Orders[b].ProdOrderID })
		for k := range cs.Days {
			d := &cs.Days[k]
			d.LoadMin = roundMin(d.LoadMin)
			d.Overload = d.LoadMin > d.CapacityMin+epsilon
		}
	}
}

// describeBars fills in what each bar's production order makes, from its
// own items and ETA.
func (s *Service) describeBars(ctx context.Context, bars map[[2]int64]*OrderBar) error {
	byOrder := map[int64][]*OrderBar{}
	var ids []int64
	for _, b := range bars {
		if byOrder[b.ProdOrderID] == nil {
			ids = append(ids, b.ProdOrderID)
		}
		byOrder[b.ProdOrderID] = append(byOrder[b.ProdOrderID], b)
	}
	if len(ids) == 0 {
		return nil
	}
	var orders []ProdOrder
	if err := withItems(s.db.WithContext(ctx)).Where("id IN ?", ids).Find(&orders).Error; err != nil {
		return err
	}
	for _, o := range orders {
		var d OrderBar
		d.ETA, d.SalesOrderIDs, d.SKUs = o.ETA, []int64{}, []string{}
		for _, it := range o.Items {
			if it.Released {
				continue
			}
			if !slices.Contains(d.SalesOrderIDs, it.OrderID) {
				d.SalesOrderIDs = append(d.SalesOrderIDs, it.OrderID)
			}
			if !slices.Contains(d.SKUs, it.SKU) {
				d.SKUs = append(d.SKUs, it.SKU)
			}
			if !it.DueDate.IsZero() && (d.DueDate.IsZero() || it.DueDate.Before(d.DueDate.Time)) {
				d.DueDate = it.DueDate
			}
		}
		d.Late = !d.DueDate.IsZero() && d.ETA.After(d.DueDate.Time)
		for _, b := range byOrder[o.ID] {
			b.SalesOrderIDs, b.SKUs, b.DueDate, b.ETA, b.Late = d.SalesOrderIDs, d.SKUs, d.DueDate, d.ETA, d.Late
		}
	}
	return nil
}

func roundMin(m float64) float64 { return float64(int64(m*100+0.5)) / 100 }

// Days returns the days of the view, from From to To.
func (v ScheduleView) Days() []time.Time {
	var out []time.Time
	for d := v.From.Time; !d.After(v.To.Time); d = d.AddDate(0, 0, 1) {
		out = append(out, d)
	}
	return out
}

// doneSlot is when a done operation was done, as a slot of its centre's
// days and capacity minutes (from the shift's start, within the day's
// capacity): from its start (its completion when it was never started) to
// its completion. Without a completion time, its planned slot.
func doneSlot(op Operation, c Center, zone *time.Location) Slot {
	if op.CompletedAt == nil {
		return slotOf(op)
	}
	end := momentAt(*op.CompletedAt, c, zone)
	start := end
	if op.StartedAt != nil && op.StartedAt.Before(*op.CompletedAt) {
		start = momentAt(*op.StartedAt, c, zone)
	}
	return Slot{Start: start, End: end}
}

// doneOvertime tells whether a done operation was worked outside its
// centre's hours: started or completed before or after the shift of its
// day, or on a day the centre does not work.
func doneOvertime(op Operation, c Center, zone *time.Location) bool {
	outside := func(t time.Time) bool {
		local := t.In(zone)
		y, m, d := local.Date()
		if !c.Works(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)) {
			return true
		}
		minute := float64(local.Hour()*60+local.Minute()) + float64(local.Second())/60 - c.ShiftStart
		return minute < 0 || minute > c.Capacity
	}
	if op.CompletedAt == nil {
		return false
	}
	return outside(*op.CompletedAt) || (op.StartedAt != nil && outside(*op.StartedAt))
}

// momentAt is the instant t as a day of the factory's time zone and a
// minute of the centre's capacity on it.
func momentAt(t time.Time, c Center, zone *time.Location) Moment {
	local := t.In(zone)
	y, m, d := local.Date()
	minute := float64(local.Hour()*60+local.Minute()) + float64(local.Second())/60 - c.ShiftStart
	return Moment{Day: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), Min: min(max(minute, 0), max(c.Capacity, 0))}
}
