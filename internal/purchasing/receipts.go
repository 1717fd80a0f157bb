package purchasing

import (
	"context"
	"fmt"
	"math"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/input"
	"github.com/tsekh/tsekh/internal/stock"
)

// epsilon is below any quantity stock tells apart.
const epsilon = 1e-6

// ReceiptLine is what a delivery brought of one of a purchase order's
// lines, named by its material's code.
type ReceiptLine struct {
	Code string
	Qty  float64
	// OverReason says why more than is still due of the line is taken; it
	// is required then.
	OverReason string
}

// receipt is a delivery's quantity booked on a purchase order's line.
type receipt struct {
	DocumentID int64
	LineID     int64
	Qty        float64
	OverReason string
}

func (receipt) TableName() string { return "purchasing_receipts" }

// Receive books a delivery against the purchase order: the lines go into
// stock (stock.received, naming the order), each is added to what its
// order line has received, the order becomes partially_received or, once
// every line has come, received, and purchase_order.received is written —
// all in one transaction, under the order's lock, so that deliveries racing
// on one line never take more than is due without a reason. Errors, with
// nothing written: EINVALID naming purchase_order_id for no such order,
// lines[i].code for a material not on it, lines[i].qty for more than the
// line still has due without lines[i].over_reason (and as stock.Receive
// says); ECONFLICT naming status for an order not sent (draft), received or
// cancelled.
func (s *Service) Receive(ctx context.Context, orderID int64, lines []ReceiptLine, note string) (stock.Receipt, error) {
	var out stock.Receipt
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		o, err := orderTx(ctx, tx, orderID, true)
		if apperr.Code(err) == apperr.ENOTFOUND {
			return apperr.Invalid("the receipt is not valid", apperr.Field("purchase_order_id", "no purchase order has the id %d", orderID))
		} else if err != nil {
			return err
		}
		if o.Status != StatusOrdered && o.Status != StatusPartiallyReceived {
			return stateConflict(o, "only an order sent and not received in full takes deliveries")
		}
		byCode := map[string]*OrderLine{}
		for i := range o.Lines {
			byCode[input.CodeKey(o.Lines[i].Code)] = &o.Lines[i]
		}
		var fields []apperr.FieldError
		booked := make([]*OrderLine, len(lines))
		stockLines := make([]stock.Line, len(lines))
		for i, l := range lines {
			at := func(f string) string { return fmt.Sprintf("lines[%d].%s", i, f) }
			stockLines[i] = stock.Line{Code: l.Code, Qty: l.Qty}
			l.OverReason = strings.TrimSpace(l.OverReason)
			lines[i].OverReason = l.OverReason
			fields = append(fields, input.Line(at("over_reason"), l.OverReason, input.MaxName)...)
			ol, ok := byCode[input.CodeKey(l.Code)]
			if !ok {
				if input.NormalCode(l.Code) != "" {
					fields = append(fields, apperr.Field(at("code"), "%q is not on purchase order %d", l.Code, o.ID))
				}
				continue
			}
			booked[i] = ol
			if due := ol.Due(); !math.IsNaN(l.Qty) && l.Qty > due+epsilon && l.OverReason == "" {
				fields = append(fields, apperr.Field(at("qty"), "%v is more than the %v still due of %s on purchase order %d: give over_reason to take it", l.Qty, due, ol.Code, o.ID))
			}
		}
		if len(fields) > 0 {
			return apperr.Invalid("the receipt is not valid", fields...)
		}
		if out, err = s.stock.ReceiveTx(ctx, tx, stockLines, note, o.ID); err != nil {
			return err
		}
		var got []contracts.PurchaseReceipt
		for i, l := range lines {
			ol := booked[i]
			qty := stockLines[i].Qty // on its step, as stock kept it
			over := ""
			if qty > ol.Due()+epsilon {
				over = l.OverReason
			}
			ol.Received = clean(ol.Received + qty)
			if err := tx.Model(&OrderLine{}).Where("id = ?", ol.ID).Update("received", ol.Received).Error; err != nil {
				return err
			}
			if err := tx.Create(&receipt{DocumentID: out.DocumentID, LineID: ol.ID, Qty: qty, OverReason: over}).Error; err != nil {
				return err
			}
			got = append(got, contracts.PurchaseReceipt{LineID: ol.ID, Code: ol.Code, Qty: qty, OverReason: over})
		}
		o.Status = StatusReceived
		for _, ol := range o.Lines {
			if ol.Due() > epsilon {
				o.Status = StatusPartiallyReceived
			}
		}
		if err := tx.Model(&Order{}).Where("id = ?", o.ID).Update("status", o.Status).Error; err != nil {
			return err
		}
		p := orderPayload(o)
		p.DocumentID, p.Received = &out.DocumentID, got
		return events.Add(ctx, tx, contracts.PurchaseOrderReceived.New(o.ID, p))
	})
	return out, err
}

// clean drops the dust of floating-point sums.
func clean(v float64) float64 {
	r := math.Round(v*1e6) / 1e6
	if r == 0 {
		return 0
	}
	return r
}
