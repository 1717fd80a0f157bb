package stock

import (
	"context"
	"errors"
	"math"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// RegisterEvents declares the stock module's event types and subscribes it
// to the plan's: a launch reserves what the production order needs, the
// floor's reports use it up, items leaving it bring it down to what it
// still needs, a cancel, close or completion releases the rest; and to the
// cutting module's: a cutting plan sets the board reservations of its
// production orders to its sheets, a sheet reported cut uses up one sheet of
// its board.
func (s *Service) RegisterEvents(r *events.Registrar) {
	r.Declare(contracts.StockReceived, contracts.StockCounted, contracts.StockReserved, contracts.StockConsumed, contracts.StockReleased)
	r.Subscribe(events.Subscriber{
		Name: "stock.reservations",
		Types: events.Names(contracts.ProdOrderLaunched, contracts.ProdOrderProgressReported, contracts.OperationCompleted,
			contracts.ProdOrderItemsReleased, contracts.ProdOrderCancelled, contracts.ProdOrderClosed, contracts.ProdOrderCompleted,
			contracts.CuttingPlanCreated, contracts.CuttingSheetCut),
		Description: "Reserves what a launched production order needs of each material (even beyond what is available, saying so), uses it up as the floor reports its route steps (boards at cutting, bands at banding, fittings at assembly), lets go of what items that left it needed, and releases the rest when it is cancelled, closed or completed. A cutting plan sets its production orders' board reservations to the new sheets it cuts for them; a sheet reported cut uses up one sheet of its board (none for an offcut), and the parts cut on it use up no board by the area estimate.",
		HandleTx:    s.follow,
	})
}

func (s *Service) follow(ctx context.Context, tx *gorm.DB, ev events.Event) error {
	switch ev.Type {
	case contracts.ProdOrderLaunched.Name():
		p, err := contracts.ProdOrderLaunched.Decode(ev)
		if err != nil {
			return err
		}
		return reserve(ctx, tx, p)
	case contracts.ProdOrderProgressReported.Name():
		p, err := contracts.ProdOrderProgressReported.Decode(ev)
		if err != nil {
			return err
		}
		return consume(ctx, tx, p.ProdOrderID, p.Seq, p.SheetCut, func(int) int { return p.Done })
	case contracts.OperationCompleted.Name():
		p, err := contracts.OperationCompleted.Decode(ev)
		if err != nil {
			return err
		}
		return consume(ctx, tx, p.ProdOrderID, p.Seq, false, func(done int) int { return done + 1 })
	case contracts.ProdOrderCancelled.Name():
		p, err := contracts.ProdOrderCancelled.Decode(ev)
		if err != nil {
			return err
		}
		return release(ctx, tx, p.ProdOrderID)
	case contracts.ProdOrderCompleted.Name():
		p, err := contracts.ProdOrderCompleted.Decode(ev)
		if err != nil {
			return err
		}
		return release(ctx, tx, p.ProdOrderID)
	case contracts.ProdOrderItemsReleased.Name():
		p, err := contracts.ProdOrderItemsReleased.Decode(ev)
		if err != nil {
			return err
		}
		return shrink(ctx, tx, p)
	case contracts.ProdOrderClosed.Name():
		p, err := contracts.ProdOrderClosed.Decode(ev)
		if err != nil {
			return err
		}
		return release(ctx, tx, p.ProdOrderID)
	case contracts.CuttingPlanCreated.Name():
		p, err := contracts.CuttingPlanCreated.Decode(ev)
		if err != nil {
			return err
		}
		return followPlan(actorCtx(ctx, ev), tx, p)
	case contracts.CuttingSheetCut.Name():
		p, err := contracts.CuttingSheetCut.Decode(ev)
		if err != nil {
			return err
		}
		return consumeSheet(actorCtx(ctx, ev), tx, p)
	}
	return nil
}

// actorCtx returns ctx carrying the actor of ev, if it has one: the stock
// events that follow a user's cutting plan or sheet name that user.
func actorCtx(ctx context.Context, ev events.Event) context.Context {
	if ev.Actor != nil {
		return events.WithActor(ctx, *ev.Actor)
	}
	return ctx
}

// reservationDoc returns the production order's reservation document,
// creating it.
func reservationDoc(ctx context.Context, tx *gorm.DB, prodOrderID int64) (Document, error) {
	var doc Document
	err := tx.WithContext(ctx).Where("kind = ? AND prod_order_id = ?", DocReservation, prodOrderID).First(&doc).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		doc = Document{Kind: DocReservation, ProdOrderID: &prodOrderID}
		err = tx.WithContext(ctx).Omit("ID").Create(&doc).Error
	}
	return doc, err
}

// reserve books what the launched production order needs; a need beyond
// what is available is reserved all the same and named short.
func reserve(ctx context.Context, tx *gorm.DB, p contracts.ProdOrderLaunchedPayload) error {
	if len(p.Materials) == 0 {
		return nil
	}
	var n int64
	if err := tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ?", p.ProdOrderID).Count(&n).Error; err != nil || n > 0 {
		return err // reserved already: a delivery seen again
	}
	doc, err := reservationDoc(ctx, tx, p.ProdOrderID)
	if err != nil {
		return err
	}
	payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &p.ProdOrderID}
	for _, m := range p.Materials {
		r := reservation{ProdOrderID: p.ProdOrderID, Code: m.Code, Kind: m.Kind, Step: m.Step, Total: m.Total, Needed: m.Qty}
		if err := tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error; err != nil {
			return err
		}
		lv, err := lockLevel(ctx, tx, m.Code)
		if err != nil {
			return err
		}
		available := lv.OnHand - lv.Reserved
		if err := moveStock(ctx, tx, doc.ID, m.Code, MoveReserve, m.Qty, &lv); err != nil {
			return err
		}
		payload.Lines = append(payload.Lines, contracts.StockLine{Code: m.Code, Qty: m.Qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
		if missing := clean(m.Qty - math.Max(available, 0)); missing > 0 {
			payload.Short = append(payload.Short, contracts.StockShortage{Code: m.Code, Missing: missing})
		}
	}
	return events.Add(ctx, tx, contracts.StockReserved.New(doc.ID, payload))
}

// consume uses up the reservations of the production order's route step as
// far as the step is done (done returns how many of its parts or units are
// done, given how many were): boards and fittings in whole sheets and
// pieces, rounded up, bands in metres. With sheetCut (the parts were cut as
// a cutting plan's sheet, which uses up its board itself) no board is used
// up, only counted done.
func consume(ctx context.Context, tx *gorm.DB, prodOrderID int64, step int, sheetCut bool, done func(int) int) error {
	var rs []reservation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND step = ? AND NOT released", prodOrderID, step).Order("code").Find(&rs).Error
	if err != nil || len(rs) == 0 {
		return err
	}
	doc, err := reservationDoc(ctx, tx, prodOrderID)
	if err != nil {
		return err
	}
	payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &prodOrderID}
	for _, r := range rs {
		d := min(max(done(r.Done), 0), r.Total)
		target := r.Needed
		if r.Total > 0 {
			target = r.Needed * float64(d) / float64(r.Total)
		}
		if r.Kind != catalog.KindBand {
			target = math.Ceil(target - epsilon)
		}
		target = math.Min(target, r.Needed)
		qty := clean(target - r.Consumed)
		if sheetCut && r.Kind == catalog.KindBoard {
			qty = 0
		}
		r.Done = d
		if qty > 0 {
			r.Consumed = clean(r.Consumed + qty)
			lv, err := lockLevel(ctx, tx, r.Code)
			if err != nil {
				return err
			}
			if err := moveStock(ctx, tx, doc.ID, r.Code, MoveConsume, qty, &lv); err != nil {
				return err
			}
			payload.Lines = append(payload.Lines, contracts.StockLine{Code: r.Code, Qty: qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
		}
		set := map[string]any{"done": r.Done}
		if qty > 0 {
			set["consumed"] = r.Consumed
		}
		err := tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ? AND code = ?", r.ProdOrderID, r.Code).Updates(set).Error
		if err != nil {
			return err
		}
	}
	if len(payload.Lines) == 0 {
		return nil
	}
	return events.Add(ctx, tx, contracts.StockConsumed.New(doc.ID, payload))
}

// release lets go of what is still reserved for the production order.
func release(ctx context.Context, tx *gorm.DB, prodOrderID int64) error {
	var rs []reservation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND NOT released", prodOrderID).Order("code").Find(&rs).Error
	if err != nil || len(rs) == 0 {
		return err
	}
	doc, err := reservationDoc(ctx, tx, prodOrderID)
	if err != nil {
		return err
	}
	payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &prodOrderID}
	for _, r := range rs {
		qty := clean(r.Needed - r.Consumed)
		lv, err := lockLevel(ctx, tx, r.Code)
		if err != nil {
			return err
		}
		if err := moveStock(ctx, tx, doc.ID, r.Code, MoveRelease, qty, &lv); err != nil {
			return err
		}
		if qty > 0 {
			payload.Lines = append(payload.Lines, contracts.StockLine{Code: r.Code, Qty: qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
		}
	}
	err = tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ?", prodOrderID).Update("released", true).Error
	if err != nil {
		return err
	}
	if len(payload.Lines) == 0 {
		payload.Lines = []contracts.StockLine{}
	}
	return events.Add(ctx, tx, contracts.StockReleased.New(doc.ID, payload))
}

// shrink brings the production order's reservations down to what it still
// needs after items left it (p.Materials, as the plan counts them): the
// difference is released; a need never grows here, nor below what was used
// up. An event written before it said what the order still needs changes
// nothing.
func shrink(ctx context.Context, tx *gorm.DB, p contracts.ProdOrderItemsReleasedPayload) error {
	if p.Materials == nil {
		return nil
	}
	var rs []reservation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND NOT released", p.ProdOrderID).Order("code").Find(&rs).Error
	if err != nil || len(rs) == 0 {
		return err
	}
	still := map[string]contracts.MaterialNeed{}
	for _, m := range *p.Materials {
		still[strings.ToLower(m.Code)] = m
	}
	var doc Document
	payload := contracts.StockPayload{ProdOrderID: &p.ProdOrderID}
	for _, r := range rs {
		m, ok := still[strings.ToLower(r.Code)]
		needed, total := 0.0, 0
		if ok {
			needed, total = m.Qty, m.Total
		}
		needed = clean(math.Max(math.Min(needed, r.Needed), r.Consumed))
		qty := clean(r.Needed - needed)
		if qty <= 0 && total == r.Total {
			continue
		}
		err = tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ? AND code = ?", r.ProdOrderID, r.Code).
			Updates(map[string]any{"needed": needed, "total": total, "done": min(r.Done, total)}).Error
		if err != nil {
			return err
		}
		if qty <= 0 {
			continue
		}
		if doc.ID == 0 {
			if doc, err = reservationDoc(ctx, tx, p.ProdOrderID); err != nil {
				return err
			}
			payload.DocumentID = doc.ID
		}
		lv, err := lockLevel(ctx, tx, r.Code)
		if err != nil {
			return err
		}
		if err := moveStock(ctx, tx, doc.ID, r.Code, MoveRelease, qty, &lv); err != nil {
			return err
		}
		payload.Lines = append(payload.Lines, contracts.StockLine{Code: r.Code, Qty: qty, OnHand: lv.OnHand, Reserve: lv.Reserved})
	}
	if len(payload.Lines) == 0 {
		return nil
	}
	return events.Add(ctx, tx, contracts.StockReleased.New(doc.ID, payload))
}

// ReservedFor returns what is still reserved for each live production
// order, per material code (lower case), from the reservations themselves:
// for tests of the levels' invariants.
func (s *Service) ReservedFor(ctx context.Context) (map[string]float64, error) {
	var rs []reservation
	if err := s.db.WithContext(ctx).Where("NOT released").Find(&rs).Error; err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, r := range rs {
		out[strings.ToLower(r.Code)] += r.Needed - r.Consumed
	}
	return out, nil
}
