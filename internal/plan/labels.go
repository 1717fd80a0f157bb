package plan

import (
	"context"
)

// MaxLabelParts bounds the labels of one document.
const MaxLabelParts = MaxLaunchParts * 2

// LabelParts returns the production order's live parts, in id order, with
// what their labels say of them (package render draws the labels). It
// returns ENOTFOUND for an unknown order.
func (s *Service) LabelParts(ctx context.Context, orderID int64) ([]FloorPart, error) {
	db := s.db.WithContext(ctx)
	o, err := prodOrder(ctx, db, orderID, false)
	if err != nil {
		return nil, err
	}
	var parts []Part
	if err := db.Where("prod_order_id = ? AND status = ?", orderID, PartLive).Order("id").Limit(MaxLabelParts).Find(&parts).Error; err != nil {
		return nil, err
	}
	fps, err := floorParts(ctx, db, o, parts)
	if err != nil {
		return nil, err
	}
	return fps, nil
}
