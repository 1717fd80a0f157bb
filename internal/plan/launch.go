package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/stock"
)

// Limits of one launch.
const (
	MaxLaunchItems = 100
	MaxLaunchParts = 5000  // physical parts
	MaxLaunchOps   = 20000 // operations
)

// insertBatch is the rows per INSERT of parts and operations: larger
// statements cost more to bind than they save on SQLite.
const insertBatch = 100

// launchLock is the PostgreSQL advisory lock that serialises launches, so
// that each one plans on the load of every launch before it.
const launchLock = 0x7473656b // "tsek"

// Launch is the input of LaunchProdOrder.
type Launch struct {
	Items   []int64       // sales-order item ids, waiting in the backlog
	RouteID int64         // 0: the products' default route
	ETA     database.Date // zero: the computed ETA
	// Priority places the order in the plan: after the live orders of equal
	// or higher priority, ahead of those of lower priority (which are
	// re-planned after it). MinPriority to MaxPriority, 0 by default.
	Priority int
}

// Priorities of production orders: higher first.
const (
	MinPriority = -100
	MaxPriority = 100
)

// LaunchProdOrder launches a production order for the items: in one
// transaction it takes them out of the backlog, writes the order, its
// physical parts and operations with their planned slots, and the
// prod_order.launched event.
//
// It returns EINVALID when the input is bad, an item is not in the backlog
// (unknown, not yet received by the plan, or its order was cancelled), the
// items' routes differ, the route given does not exist or is for another
// kind of product, the launch is too large, or a work centre it or the
// lower-priority work it moves needs has no working day within three years;
// ECONFLICT when an item is in a
// live production order already (also to the loser of two launches racing
// for an item).
func (s *Service) LaunchProdOrder(ctx context.Context, in Launch) (ProdOrderDetail, error) {
	if err := in.validate(); err != nil {
		return ProdOrderDetail{}, err
	}
	var out ProdOrderDetail
	err := database.Transaction(ctx, s.db, func(tx *gorm.DB) error {
		id, err := s.launch(ctx, tx, in)
		if err != nil {
			return err
		}
		// The answer is read in the launch's own transaction: what it is
		// short of is what a read just after it says.
		out, err = s.prodOrderDetail(ctx, tx, id)
		return err
	})
	if err != nil {
		if database.IsUniqueViolation(err) {
			return ProdOrderDetail{}, apperr.Conflict("an item was launched by another production order at the same time")
		}
		return ProdOrderDetail{}, err
	}
	return out, nil
}

func (in *Launch) validate() error {
	var fields []apperr.FieldError
	switch {
	case len(in.Items) == 0:
		fields = append(fields, apperr.Field("items", "must list at least one sales-order item id"))
	case len(in.Items) > MaxLaunchItems:
		fields = append(fields, apperr.Field("items", "must list at most %d items", MaxLaunchItems))
	}
	for i, id := range in.Items {
		switch {
		case id <= 0:
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "must be a positive item id"))
		case slices.Contains(in.Items[:i], id):
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "repeats item %d", id))
		}
	}
	if in.RouteID < 0 {
		fields = append(fields, apperr.Field("route_id", "must be a positive route id"))
	}
	if in.Priority < MinPriority || in.Priority > MaxPriority {
		fields = append(fields, apperr.Field("priority", "must be from %d to %d (higher first)", MinPriority, MaxPriority))
	}
	if len(fields) > 0 {
		return apperr.Invalid("the launch is not valid", fields...)
	}
	return nil
}

// launch does LaunchProdOrder's work inside tx and returns the new order's
// id: under the plan lock, it reads the items and what they are made of,
// builds their parts and operations, plans them, stores the production
// order, takes its items out of the backlog, writes prod_order.launched,
// and plans the lower-priority work again after it.
func (s *Service) launch(ctx context.Context, tx *gorm.DB, in Launch) (int64, error) {
	if err := lockPlan(tx); err != nil {
		return 0, err
	}
	now, err := s.clockIn(ctx, tx)
	if err != nil {
		return 0, err
	}
	today := now.Today
	if !in.ETA.IsZero() && in.ETA.Before(today) {
		return 0, apperr.Invalid("the launch is not valid", apperr.Field("eta", "must not be before today, %s", today.Format(time.DateOnly)))
	}
	l := &launching{in: in, now: now}
	if err := s.readLaunch(ctx, tx, l); err != nil {
		return 0, err
	}
	if err := l.build(ctx, tx); err != nil {
		return 0, err
	}
	l.overhang, l.steps = s.stock.EdgeOverhang(), MaterialStepsOf(l.route)
	if l.needs, err = s.launchNeeds(ctx, tx, &l.x, l.backlog, l.products, l.steps, l.overhang); err != nil {
		return 0, err
	}
	if err := s.scheduleLaunch(ctx, tx, l); err != nil {
		return 0, err
	}
	if err := l.store(ctx, tx); err != nil {
		return 0, err
	}
	if err := l.takeFromBacklog(tx); err != nil {
		return 0, err
	}
	if err := s.announceLaunch(ctx, tx, l); err != nil {
		return 0, err
	}
	// Live work of lower priority moves after the new order.
	extra := &orderNeeds{id: l.order.ID, priority: in.Priority, needs: l.needs}
	if _, err = s.replan(ctx, tx, now, l.centers, extra, "plan_prod_orders.priority < ? AND plan_prod_orders.id <> ?", in.Priority, l.order.ID); err != nil {
		return 0, err
	}
	// Stock last: its levels are locked after the orders' rows, as the
	// shop floor's reports lock them, so that neither waits for the other.
	return l.order.ID, s.stock.BookTx(ctx, tx, stock.Booking{ProdOrderID: l.order.ID, Source: stock.Source{What: stock.ForLaunch}, Needs: l.needs})
}

// launching is a launch in hand: what launch's steps read, build and plan,
// each for the steps after it.
type launching struct {
	in       Launch
	now      clock
	backlog  []BacklogItem // the items, in the order asked
	products map[string]catalog.Product
	route    catalog.Route
	x        exploded            // the parts and operations to make
	carry    map[int64][]carried // units carried over from earlier orders
	centers  map[int64]catalog.WorkCenter
	plan     Plan // the work planned before the new order, then its own
	lead     int  // the tasks of plan before the new order's
	eta      database.Date
	order    ProdOrder
	overhang int           // EDGE_OVERHANG_MM, kept with the order
	steps    MaterialSteps // its route's steps that use materials up
	needs    []stock.Move  // what it needs of each material
	held     HeldList      // the materials its steps wait for
}

// readLaunch reads the items' backlog rows, their products and the route
// they take, and refuses a launch too large from its counts.
func (s *Service) readLaunch(ctx context.Context, tx *gorm.DB, l *launching) error {
	backlog, err := s.takeable(ctx, tx, l.in.Items)
	if err != nil {
		return err
	}
	skus := make([]string, 0, len(backlog))
	for _, b := range backlog {
		skus = append(skus, b.SKU)
	}
	products, err := catalog.ProductSpecs(ctx, tx, skus)
	if err != nil {
		return err
	}
	route, err := chooseRoute(ctx, tx, l.in, backlog, products)
	if err != nil {
		return err
	}
	// Refuse a launch that is too large from its counts, before a part is
	// built: what the catalog and the sales limits allow reaches billions of
	// parts, and memory must be bounded by the launch limits, not the input.
	size := sizeOf(backlog, products, route)
	if size.parts > MaxLaunchParts || size.ops > MaxLaunchOps {
		return apperr.Invalid("the launch is too large", apperr.Field("items",
			"make %s parts and %s operations; one launch may make at most %d parts and %d operations: launch fewer items",
			countText(size.parts), countText(size.ops), MaxLaunchParts, MaxLaunchOps))
	}
	l.backlog, l.products, l.route = backlog, products, route
	return nil
}

// build explodes the items into parts and operations, cuts the parts from
// boards, and carries over the units earlier orders left for them.
func (l *launching) build(ctx context.Context, tx *gorm.DB) error {
	l.x = explode(l.backlog, l.products, l.route)
	if err := cutFromBoards(ctx, tx, l.x.parts, l.backlog, l.products); err != nil {
		return err
	}
	carry, err := carriedUnits(ctx, tx, l.backlog)
	if err != nil {
		return err
	}
	l.carry = carry
	l.x.carryOver(carry)
	return nil
}

// scheduleLaunch plans the new order's operations after the live work of
// equal or higher priority (the lower-priority work is re-planned after it
// by launch), and takes its ETA from the last of them.
func (s *Service) scheduleLaunch(ctx context.Context, tx *gorm.DB, l *launching) error {
	centers, err := catalog.AllWorkCenters(ctx, tx)
	if err != nil {
		return err
	}
	l.centers = centers
	problem, err := s.problem(ctx, tx, l.now, centers, "plan_prod_orders.priority >= ?", l.in.Priority)
	if err != nil {
		return err
	}
	lead := len(problem.Tasks) // overdue work goes first; its slots are not stored
	// The new order comes after every live one of its priority or higher.
	holds, err := s.materialHolds(ctx, tx, l.now.Today, &orderNeeds{id: math.MaxInt64, priority: l.in.Priority, needs: l.needs})
	if err != nil {
		return err
	}
	hold := holds[math.MaxInt64]
	hold.applyTo(l.x.tasks, l.x.seqs(), l.steps)
	l.held = hold.held
	for _, t := range l.x.tasks {
		for i := range t.After {
			t.After[i] += lead
		}
		problem.Tasks = append(problem.Tasks, t)
	}
	plan, err := Schedule(problem)
	if err != nil {
		return scheduleError(err, centers)
	}
	eta := database.DateOf(plan.ETA)
	if len(l.x.tasks) > 0 {
		eta = database.DateOf(slices.MaxFunc(plan.Slots[lead:], func(a, b Slot) int { return a.End.Day.Compare(b.End.Day) }).End.Day)
	}
	l.plan, l.lead, l.eta = plan, lead, eta
	return nil
}

// store writes the production order, its items, fittings, parts, units and
// operations in their planned slots, and marks the units carried over.
func (l *launching) store(ctx context.Context, tx *gorm.DB) error {
	in, x, backlog, products := l.in, &l.x, l.backlog, l.products
	o := ProdOrder{Status: StatusLaunched, Route: RouteRef{ID: l.route.ID, Name: l.route.Name},
		PartsCount: x.partsCount, OpsCount: len(x.ops), ETA: l.eta, PlannedETA: l.eta, Priority: in.Priority, EdgeOverhangMM: l.overhang,
		CutSeq: l.steps.Cut, BandSeq: l.steps.Band, AssembleSeq: l.steps.Assemble, HeldBy: l.held}
	if !in.ETA.IsZero() {
		o.ETA, o.ETAGiven = in.ETA, true
	}
	if err := tx.Omit("Items", "CreatedAt", "StartedAt", "CompletedAt", "CancelledAt").Create(&o).Error; err != nil {
		return err
	}
	l.order = o
	items := make([]ProdItem, len(backlog))
	for i, b := range backlog {
		items[i] = ProdItem{ProdOrderID: o.ID, ItemID: b.ItemID, OrderID: b.OrderID, ProductID: products[b.SKU].ID,
			SKU: b.SKU, Qty: b.Qty, DueDate: b.DueDate, ReceivedAt: b.ReceivedAt, EventID: b.EventID, Customer: b.Customer, Note: b.Note,
			Options: b.Options}
	}
	if err := tx.Create(&items).Error; err != nil {
		return err
	}
	if err := saveFittings(ctx, tx, o.ID, backlog, products); err != nil {
		return err
	}
	for i := range x.parts {
		x.parts[i].ProdOrderID = o.ID
		x.parts[i].Code, x.parts[i].Status = partCode(o.ID, i+1), PartLive
	}
	if err := createUnits(tx, o.ID, x.parts, x.ops); err != nil {
		return err
	}
	if err := x.storeParts(tx, o.ID); err != nil {
		return err
	}
	if err := markCarried(tx, o.ID, l.carry); err != nil {
		return err
	}
	for i := range x.ops {
		op := &x.ops[i]
		op.ProdOrderID = o.ID
		if p := x.opPart[i]; p >= 0 {
			op.PartID = &x.parts[p].ID
		}
		setSlot(op, l.plan.Slots[l.lead+i])
	}
	if len(x.ops) == 0 {
		return nil
	}
	if err := tx.Omit("ID", "StartedAt", "CompletedAt").CreateInBatches(&x.ops, insertBatch).Error; err != nil {
		return err
	}
	return StoreSchedules(ctx, tx, x.ops)
}

// takeFromBacklog deletes the items' backlog rows: ECONFLICT when one left
// the backlog meanwhile.
func (l *launching) takeFromBacklog(tx *gorm.DB) error {
	res := tx.Where("item_id IN ?", l.in.Items).Delete(&BacklogItem{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(l.in.Items)) {
		return apperr.Conflict("an item left the backlog while it was being launched; try again")
	}
	return nil
}

// announceLaunch writes prod_order.launched (stock reserves what the order
// needs at the end of the launch: stock.reserved, saying what is short).
func (s *Service) announceLaunch(ctx context.Context, tx *gorm.DB, l *launching) error {
	o, x := l.order, &l.x
	return events.Add(ctx, tx, contracts.ProdOrderLaunched.New(o.ID, contracts.ProdOrderLaunchedPayload{ProdOrderID: o.ID, Items: l.in.Items,
		Route: l.route.Name, PartsCount: o.PartsCount, OpsCount: o.OpsCount, ETA: o.ETA.String(),
		CarriedUnits: len(l.carry), CarriedParts: x.carriedParts()}))
}

// takeable returns the items' backlog rows in the order asked, or the error
// that says why an item cannot be launched.
func (s *Service) takeable(ctx context.Context, tx *gorm.DB, ids []int64) ([]BacklogItem, error) {
	var rows []BacklogItem
	if err := tx.WithContext(ctx).Where("item_id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	byID := make(map[int64]BacklogItem, len(rows))
	for _, r := range rows {
		byID[r.ItemID] = r
	}
	var missing []int64
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		var live []ProdItem
		if err := tx.WithContext(ctx).Where("item_id IN ? AND NOT released", missing).Find(&live).Error; err != nil {
			return nil, err
		}
		if len(live) > 0 {
			return nil, apperr.Conflict("item %d is already in production order %d", live[0].ItemID, live[0].ProdOrderID)
		}
		var fields []apperr.FieldError
		for i, id := range ids {
			if slices.Contains(missing, id) {
				fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i),
					"item %d is not in the planning backlog: unknown, not received by planning yet, or its order was cancelled", id))
			}
		}
		return nil, apperr.Invalid("items are not waiting for production", fields...)
	}
	out := make([]BacklogItem, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out, nil
}

// chooseRoute returns the route the items are launched along: the one
// given, or their products' shared default route.
func chooseRoute(ctx context.Context, tx *gorm.DB, in Launch, backlog []BacklogItem, products map[string]catalog.Product) (catalog.Route, error) {
	var fields []apperr.FieldError
	for i, b := range backlog {
		if _, ok := products[b.SKU]; !ok {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "no product has the SKU %q", b.SKU))
		}
	}
	if len(fields) > 0 {
		return catalog.Route{}, apperr.Invalid("items name unknown products", fields...)
	}
	routeID := in.RouteID
	if routeID == 0 {
		routeID = products[backlog[0].SKU].RouteID
		for i, b := range backlog {
			if r := products[b.SKU].RouteID; r != routeID {
				fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "%s follows route %d, not route %d as items[0] does", b.SKU, r, routeID))
			}
		}
		if len(fields) > 0 {
			return catalog.Route{}, apperr.Invalid("the items have different routes: launch them separately, or give route_id", fields...)
		}
	}
	route, err := catalog.RouteByID(ctx, tx, routeID)
	if apperr.Code(err) == apperr.ENOTFOUND {
		return route, apperr.Invalid("the launch is not valid", apperr.Field("route_id", "no route has the id %d", routeID))
	}
	if err != nil {
		return route, err
	}
	for i, b := range backlog {
		if k := products[b.SKU].Kind; k != route.Kind {
			fields = append(fields, apperr.Field(fmt.Sprintf("items[%d]", i), "%s is a %s product; route %q is for %s products", b.SKU, k, route.Name, route.Kind))
		}
	}
	if len(route.Operations) == 0 {
		fields = append(fields, apperr.Field("route_id", "route %q has no operations", route.Name))
	}
	if len(fields) > 0 {
		return route, apperr.Invalid("the items cannot follow the route", fields...)
	}
	return route, nil
}

// launchSize is how many physical parts and operations a launch makes,
// counted from the quantities (docs/planning.md): parts = Σ item qty × the product's
// parts per unit; operations = parts × the route's part-scope operations +
// units × its item-scope operations. The counts stop at math.MaxInt64
// instead of overflowing.
type launchSize struct {
	parts, units, ops int64
}

// sizeOf counts the launch of the items along the route without building it.
func sizeOf(backlog []BacklogItem, products map[string]catalog.Product, route catalog.Route) launchSize {
	var s launchSize
	for _, b := range backlog {
		qty := int64(max(b.Qty, 0))
		var perUnit int64
		for _, line := range products[b.SKU].Parts {
			perUnit = addCount(perUnit, int64(max(line.Qty, 0)))
		}
		s.units = addCount(s.units, qty)
		s.parts = addCount(s.parts, mulCount(qty, perUnit))
	}
	var partOps, itemOps int64
	for _, op := range route.Operations {
		if op.Scope == catalog.ScopePart {
			partOps++
		} else {
			itemOps++
		}
	}
	s.ops = addCount(mulCount(s.parts, partOps), mulCount(s.units, itemOps))
	return s
}

// countText writes a count, saying so when it stopped at its ceiling.
func countText(n int64) string {
	if n == math.MaxInt64 {
		return fmt.Sprintf("more than %d", int64(math.MaxInt64-1))
	}
	return strconv.FormatInt(n, 10)
}

// mulCount and addCount are a×b and a+b of non-negative counts, held at
// math.MaxInt64 instead of overflowing.
func mulCount(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func addCount(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// exploded is a launch broken down into physical parts and operations.
type exploded struct {
	parts      []Part
	ops        []Operation
	opPart     []int  // index into parts of each operation's part; -1 for item scope
	tasks      []Task // one per operation, for Schedule
	partsCount int
	// reuse maps a part's index to the part of a unit closed short that it
	// is (carryOver): that part is moved to the new order, not created.
	reuse map[int]Part
}

// explode breaks the items down: a physical part for every unit of every
// item and every piece of every line of its product's parts; a part-scope
// operation of the route for every physical part; an item-scope one for
// every unit. Operations come in route order; each follows the operation
// before it in the route on the same part (or, after an item-scope
// operation, on the same unit), and an item-scope operation follows every
// operation of its unit before it in the route.
//
// It builds every part and operation in memory: the caller checks the
// launch's size (sizeOf) against the limits first.
func explode(backlog []BacklogItem, products map[string]catalog.Product, route catalog.Route) exploded {
	type unit struct {
		item       int64
		n          int
		firstPart  int // its physical parts are parts[firstPart:endPart]
		endPart    int
		lastOps    []int // the unit's tasks of the previous route operation
		lastOfPart map[int]int
	}
	size := sizeOf(backlog, products, route)
	x := exploded{parts: make([]Part, 0, size.parts), ops: make([]Operation, 0, size.ops),
		opPart: make([]int, 0, size.ops), tasks: make([]Task, 0, size.ops)}
	units := make([]*unit, 0, size.units)
	for _, b := range backlog {
		p := products[b.SKU]
		for n := 1; n <= b.Qty; n++ {
			u := &unit{item: b.ItemID, n: n, firstPart: len(x.parts), lastOfPart: map[int]int{}}
			for _, line := range p.Parts {
				for range line.Qty {
					x.parts = append(x.parts, Part{ItemID: b.ItemID, Unit: n, Seq: line.Seq, Name: line.Name, Material: line.Material,
						LengthMM: line.LengthMM, WidthMM: line.WidthMM, ThicknessMM: line.ThicknessMM, Edging: line.Edging})
				}
			}
			u.endPart = len(x.parts)
			units = append(units, u)
		}
	}
	x.partsCount = len(x.parts)
	add := func(u *unit, op catalog.Operation, part int, after []int) int {
		x.ops = append(x.ops, Operation{ItemID: u.item, Unit: u.n, Seq: op.Seq, Name: op.Name, WorkCenterID: op.WorkCenterID,
			Scope: op.Scope, Minutes: op.Minutes, Status: OpPending})
		x.opPart = append(x.opPart, part)
		x.tasks = append(x.tasks, Task{Center: op.WorkCenterID, Minutes: op.Minutes, After: after})
		return len(x.ops) - 1
	}
	prevScope := ""
	for _, op := range route.Operations {
		for _, u := range units {
			var last []int
			if op.Scope == catalog.ScopePart {
				for p := u.firstPart; p < u.endPart; p++ {
					var after []int
					if prev, ok := u.lastOfPart[p]; ok && prevScope == catalog.ScopePart {
						after = []int{prev}
					} else {
						after = slices.Clone(u.lastOps)
					}
					i := add(u, op, p, after)
					u.lastOfPart[p] = i
					last = append(last, i)
				}
			} else {
				last = []int{add(u, op, -1, slices.Clone(u.lastOps))}
			}
			u.lastOps = last
		}
		prevScope = op.Scope
	}
	return x
}

// problem gathers what Schedule needs besides the new tasks: the centres, now,
// and the work already launched that stays where it is (the live production
// orders that the condition on plan_prod_orders, with its args, selects),
// summed up from their schedules. Every operation not done of those orders is
// load: on the day it ends, up to its end minute; on the days before, when it
// spans days, the whole day. Operations planned to end before today
// (overdue) are placed again from now, ahead of the new work, as one task
// per centre.
func (s *Service) problem(ctx context.Context, tx *gorm.DB, now clock, wcs map[int64]catalog.WorkCenter, fixed string, args ...any) (Problem, error) {
	today := now.Today
	p := Problem{Today: today, Now: now.Minute, Centers: centersOf(wcs)}
	// One pass over the schedules (a launch in a big factory reads 100,000
	// operations under the plan lock), grouped by centre and days.
	scheds, done, err := liveSchedules(ctx, tx, fixed, args...)
	if err != nil {
		return p, err
	}
	type span struct {
		center     int64
		start, end int64 // days from 1970-01-01 (schedblob.NoDay: none)
	}
	type group struct {
		startDay, endDay time.Time
		level, minutes   float64
	}
	groups := map[span]*group{}
	for _, ops := range scheds {
		for _, op := range ops {
			if done[op.ID] {
				continue
			}
			k := span{center: op.WorkCenterID, start: op.Slot.StartDay, end: op.Slot.EndDay}
			g := groups[k]
			if g == nil {
				sl := slotOfBlob(op.Slot)
				g = &group{startDay: sl.Start.Day, endDay: sl.End.Day, level: op.Slot.EndMin}
				groups[k] = g
			}
			g.level = max(g.level, op.Slot.EndMin)
			g.minutes += op.Minutes
		}
	}
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b span) int {
		return cmp.Or(cmp.Compare(a.center, b.center), cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end))
	})
	overdue := map[int64]float64{}
	for _, k := range keys {
		g := groups[k]
		c, ok := p.Centers[k.center]
		if g.endDay.Before(today) {
			if ok {
				overdue[k.center] += g.minutes
			}
			continue
		}
		p.Load = append(p.Load, Booking{Center: k.center, Day: g.endDay, Level: g.level})
		if !ok || g.startDay.IsZero() {
			continue
		}
		for d := g.startDay; d.Before(g.endDay); d = d.AddDate(0, 0, 1) {
			if !d.Before(today) && c.Works(d) {
				p.Load = append(p.Load, Booking{Center: k.center, Day: d, Level: c.Capacity})
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(overdue)) {
		p.Tasks = append(p.Tasks, Task{Center: id, Minutes: overdue[id]})
	}
	return p, nil
}

// scheduleError is the error of a schedule that failed: a 422 naming the
// work centre when one has no working day within the horizon (its calendar
// must be fixed before anything can be planned on it), else err itself.
func scheduleError(err error, wcs map[int64]catalog.WorkCenter) error {
	var never *NeverWorksError
	if !errors.As(err, &never) {
		return fmt.Errorf("plan: schedule: %w", err)
	}
	wc := wcs[never.Center]
	if never.BookedUp {
		// Its calendar is fine: the work ahead of this fills it.
		return apperr.Errorf(apperr.EINVALID,
			"work centre %q (%s, id %d) is booked full on every working day of the three years from %s, the planning horizon: this work would end beyond it; re-plan, close, cancel or lower the priority of the work already launched there, or raise its capacity",
			wc.Name, wc.Code, never.Center, never.From.Format(time.DateOnly))
	}
	return apperr.Errorf(apperr.EINVALID,
		"work centre %q (%s, id %d) has no working day within three years of %s: nothing can be planned on it until its calendar (weekdays, holidays) is fixed",
		wc.Name, wc.Code, never.Center, never.From.Format(time.DateOnly))
}

func slotOf(op Operation) Slot {
	return Slot{Start: Moment{Day: op.StartDay.Time, Min: op.StartMin}, End: Moment{Day: op.EndDay.Time, Min: op.EndMin}}
}

func centersOf(wcs map[int64]catalog.WorkCenter) map[int64]Center {
	out := make(map[int64]Center, len(wcs))
	for id, w := range wcs {
		shift, _ := catalog.ShiftMinute(w.ShiftStart)
		out[id] = Center{Capacity: float64(w.CapacityMinPerDay), ShiftStart: float64(shift), Weekdays: w.Calendar.Weekdays, Holidays: w.Calendar.Holidays}
	}
	return out
}

// describe is a short human name of a production order, for messages.
func describe(o ProdOrder) string {
	ids := make([]string, len(o.Items))
	for i, it := range o.Items {
		ids[i] = fmt.Sprint(it.ItemID)
	}
	return fmt.Sprintf("production order %d (items %s)", o.ID, strings.Join(ids, ", "))
}
