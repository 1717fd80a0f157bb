package stock

import (
	"context"
	"math"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// This file is stock below nothing. The floor's consumption is booked
// whatever is on hand (the saw does not stop for the books); the part of a
// consumption that takes a material below nothing is an overdraw, recorded
// with the production order that took it, flagged on stock.consumed
// (overdrawn), listed among the shortages (Shortages: taken_by) and
// counted in tsekh_stock_overdraws_total, until a receipt or a count
// brings the material's on hand back to nothing or more.

// overdraw is the part of a consumption that took stock below nothing.
type overdraw struct {
	ID          int64 `gorm:"primaryKey"`
	DocumentID  int64
	Code        string
	ProdOrderID int64
	Qty         float64
	Settled     bool
}

func (overdraw) TableName() string { return "stock_overdraws" }

// overdrawn records what of the consumption qty of the material, booked
// for the order, went below nothing (on hand was before it and is now lv's)
// and returns it for the event; nil when on hand stayed at nothing or more.
func overdrawn(ctx context.Context, tx *gorm.DB, doc, order int64, code string, qty, before float64, lv *level) (*contracts.StockShortage, error) {
	if lv.OnHand >= -epsilon {
		return nil, nil
	}
	over := clean(math.Min(qty, -lv.OnHand))
	if before < 0 {
		over = clean(qty)
	}
	if over <= epsilon {
		return nil, nil
	}
	if err := tx.WithContext(ctx).Omit("ID").Create(&overdraw{DocumentID: doc, Code: code, ProdOrderID: order, Qty: over}).Error; err != nil {
		return nil, err
	}
	return &contracts.StockShortage{Code: code, Missing: over}, nil
}

// settleOverdraws marks the material's overdraws settled once on hand is
// back to nothing or more.
func settleOverdraws(ctx context.Context, tx *gorm.DB, code string, lv *level) error {
	if lv.OnHand < -epsilon {
		return nil
	}
	return tx.WithContext(ctx).Model(&overdraw{}).Where("code = ? AND NOT settled", code).Update("settled", true).Error
}

// TakenBy is a production order that took a material below nothing, and
// how much of it.
type TakenBy struct {
	ProdOrderID int64   `json:"prod_order_id" example:"12"`
	Qty         float64 `json:"qty" example:"0.5"`
}

// openOverdraws returns, per material, the production orders whose
// consumption took it below nothing since it last was at nothing or more,
// in production order id order.
func openOverdraws(ctx context.Context, db *gorm.DB) (map[string][]TakenBy, error) {
	var rows []struct {
		Code        string
		ProdOrderID int64
		Qty         float64
	}
	err := database.Scan(db.WithContext(ctx).Raw(`SELECT code, prod_order_id, sum(qty) AS qty FROM stock_overdraws WHERE NOT settled
		GROUP BY code, prod_order_id ORDER BY code, prod_order_id`), &rows)
	if err != nil {
		return nil, err
	}
	out := map[string][]TakenBy{}
	for _, r := range rows {
		out[r.Code] = append(out[r.Code], TakenBy{ProdOrderID: r.ProdOrderID, Qty: clean(r.Qty)})
	}
	return out, nil
}

var (
	overdrawsDesc = prometheus.NewDesc("tsekh_stock_overdraws_total",
		"Consumptions booked beyond what was on hand (each took a material below nothing), since the start.", nil, nil)
	negativeDesc = prometheus.NewDesc("tsekh_stock_negative_materials",
		"Materials whose on hand is below nothing now.", nil, nil)
)

// RegisterMetrics registers stock's metrics with reg, read from the
// database at scrape time so that every replica reports the same: the
// overdraws ever booked and the materials below nothing now.
func (s *Service) RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(&stockMetrics{db: s.db})
}

type stockMetrics struct{ db *gorm.DB }

func (c *stockMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- overdrawsDesc; ch <- negativeDesc }

func (c *stockMetrics) Collect(ch chan<- prometheus.Metric) {
	var n struct{ Overdraws, Negative int64 }
	err := database.Scan(c.db.WithContext(context.Background()).Raw(`SELECT (SELECT count(*) FROM stock_overdraws) AS overdraws,
		(SELECT count(*) FROM stock_levels WHERE on_hand < ?) AS negative`, -epsilon), &n)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(overdrawsDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(overdrawsDesc, prometheus.CounterValue, float64(n.Overdraws))
	ch <- prometheus.MustNewConstMetric(negativeDesc, prometheus.GaugeValue, float64(n.Negative))
}

// Round6 rounds a quantity to the millionth, as stock keeps it.
func Round6(v float64) float64 { return clean(v) }
