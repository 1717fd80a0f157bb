package purchasing

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/platform/database"
)

// Incoming is what an open purchase order's line still brings, and when.
type Incoming struct {
	Day time.Time // expected_on, midnight UTC
	Qty float64
}

// IncomingTx returns, per material, what purchase orders sent to their
// suppliers and not received in full (ordered, partially received) still
// bring, by expected date, earliest first; read through tx. Drafts and
// cancelled orders bring nothing.
func IncomingTx(ctx context.Context, tx *gorm.DB) (map[string][]Incoming, error) {
	var rows []struct {
		Code       string
		ExpectedOn database.Date
		Due        float64
	}
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT l.code, l.expected_on, sum(l.qty - l.received) AS due
		FROM purchasing_order_lines l JOIN purchasing_orders o ON o.id = l.order_id
		WHERE o.status IN ? AND l.qty > l.received
		GROUP BY l.code, l.expected_on ORDER BY l.code, l.expected_on`, []string{StatusOrdered, StatusPartiallyReceived}), &rows)
	if err != nil {
		return nil, err
	}
	out := map[string][]Incoming{}
	for _, r := range rows {
		out[r.Code] = append(out[r.Code], Incoming{Day: r.ExpectedOn.Time, Qty: r.Due})
	}
	return out, nil
}

// LeadDaysTx returns, per material some supplier sells, the shortest lead
// time in working days; read through tx.
func LeadDaysTx(ctx context.Context, tx *gorm.DB) (map[string]int, error) {
	var rows []struct {
		Code string
		Lead int
	}
	err := database.Scan(tx.WithContext(ctx).Raw(`SELECT code, min(lead_days) AS lead FROM purchasing_supplier_materials GROUP BY code`), &rows)
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Code] = r.Lead
	}
	return out, err
}
