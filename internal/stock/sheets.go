package stock

import (
	"context"
	"errors"
	"math"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
)

// followPlan sets the board reservations of a cutting plan's production
// orders to the plan's sheets: what each order still needs of a board the
// plan cuts is the new sheets charged to it (each sheet to the first
// production order with a part on it; offcuts cost no sheet), on top of
// what it used up already. The difference is reserved or released
// (stock.reserved, stock.released, per production order). A later plan of
// the same orders sets them again; reservations released already are left
// alone. An order the plan charges no sheet of a board it cuts (its parts
// share other orders' sheets or offcuts) needs no more of it: its
// reservation is released down to what it used up.
func followPlan(ctx context.Context, tx *gorm.DB, p contracts.CuttingPlanPayload) error {
	if len(p.Boards) == 0 || p.NewSheets == nil {
		return nil // nothing to cut, or a plan made before plans carried their sheets
	}
	type key struct {
		order int64
		board string
	}
	sheets := map[key]int{}
	for _, s := range p.NewSheets {
		sheets[key{s.ProdOrderID, s.Board}] += s.Sheets
	}
	boards := make([]string, len(p.Boards))
	for i, b := range p.Boards {
		boards[i] = b.Board
	}
	for _, order := range p.ProdOrders {
		var rs []reservation
		err := tx.WithContext(ctx).Where("prod_order_id = ? AND code IN ? AND NOT released", order, boards).Order("code").Find(&rs).Error
		if err != nil {
			return err
		}
		if len(rs) == 0 {
			continue
		}
		doc, err := reservationDoc(ctx, tx, order)
		if err != nil {
			return err
		}
		reserved := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &order}
		released := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &order}
		for _, r := range rs {
			want := clean(r.Consumed + float64(sheets[key{order, r.Code}]))
			diff := clean(want - r.Needed)
			if diff == 0 {
				continue
			}
			lv, err := lockLevel(ctx, tx, r.Code)
			if err != nil {
				return err
			}
			if diff > 0 {
				available := lv.OnHand - lv.Reserved
				if err := moveStock(ctx, tx, doc.ID, r.Code, MoveReserve, diff, &lv); err != nil {
					return err
				}
				reserved.Lines = append(reserved.Lines, contracts.StockLine{Code: r.Code, Qty: diff, OnHand: lv.OnHand, Reserve: lv.Reserved})
				if missing := clean(diff - math.Max(available, 0)); missing > 0 {
					reserved.Short = append(reserved.Short, contracts.StockShortage{Code: r.Code, Missing: missing})
				}
			} else {
				if err := moveStock(ctx, tx, doc.ID, r.Code, MoveRelease, -diff, &lv); err != nil {
					return err
				}
				released.Lines = append(released.Lines, contracts.StockLine{Code: r.Code, Qty: -diff, OnHand: lv.OnHand, Reserve: lv.Reserved})
			}
			err = tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ? AND code = ?", order, r.Code).Update("needed", want).Error
			if err != nil {
				return err
			}
		}
		if len(reserved.Lines) > 0 {
			if err := events.Add(ctx, tx, contracts.StockReserved.New(doc.ID, reserved)); err != nil {
				return err
			}
		}
		if len(released.Lines) > 0 {
			if err := events.Add(ctx, tx, contracts.StockReleased.New(doc.ID, released)); err != nil {
				return err
			}
		}
	}
	return nil
}

// consumeSheet uses up the new sheet a cutting plan's sheet was cut from
// (nothing for an offcut): one sheet of its board, from the reservation of
// the first production order with a part on it. When that reservation has
// less than a sheet left, it is reserved up to one first (stock.reserved);
// when the order has no live reservation of the board (released already:
// it was completed by this very cut, say), the sheet is reserved and used
// up at once, so that only what is on hand drops.
func consumeSheet(ctx context.Context, tx *gorm.DB, p contracts.CuttingSheetCutPayload) error {
	if !p.NewSheet || p.OffcutID != nil || len(p.ProdOrders) == 0 || p.Board == "" {
		return nil
	}
	order := p.ProdOrders[0]
	var r reservation
	err := tx.WithContext(ctx).Where("prod_order_id = ? AND code = ?", order, p.Board).First(&r).Error
	live := err == nil && !r.Released
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return err
	}
	doc, err := reservationDoc(ctx, tx, order)
	if err != nil {
		return err
	}
	lv, err := lockLevel(ctx, tx, p.Board)
	if err != nil {
		return err
	}
	extra := 1.0
	if live {
		extra = math.Max(clean(1-(r.Needed-r.Consumed)), 0)
	}
	if extra > 0 {
		available := lv.OnHand - lv.Reserved
		if err := moveStock(ctx, tx, doc.ID, p.Board, MoveReserve, extra, &lv); err != nil {
			return err
		}
		payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &order,
			Lines: []contracts.StockLine{{Code: p.Board, Qty: extra, OnHand: lv.OnHand, Reserve: lv.Reserved}}}
		if missing := clean(extra - math.Max(available, 0)); missing > 0 {
			payload.Short = []contracts.StockShortage{{Code: p.Board, Missing: missing}}
		}
		if err := events.Add(ctx, tx, contracts.StockReserved.New(doc.ID, payload)); err != nil {
			return err
		}
	}
	if err := moveStock(ctx, tx, doc.ID, p.Board, MoveConsume, 1, &lv); err != nil {
		return err
	}
	if live {
		set := map[string]any{"needed": clean(r.Needed + extra), "consumed": clean(r.Consumed + 1)}
		if err := tx.WithContext(ctx).Model(&reservation{}).Where("prod_order_id = ? AND code = ?", order, p.Board).Updates(set).Error; err != nil {
			return err
		}
	}
	payload := contracts.StockPayload{DocumentID: doc.ID, ProdOrderID: &order,
		Lines: []contracts.StockLine{{Code: p.Board, Qty: 1, OnHand: lv.OnHand, Reserve: lv.Reserved}}}
	return events.Add(ctx, tx, contracts.StockConsumed.New(doc.ID, payload))
}
