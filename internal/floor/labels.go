package floor

import (
	"context"

	"github.com/tsekh/tsekh/internal/plan"
)

// MaxLabelParts bounds the labels of one document.
const MaxLabelParts = plan.MaxLaunchParts * 2

// LabelParts returns the production order's live parts, in id order, with
// what their labels say of them (package render draws the labels). It
// returns ENOTFOUND for an unknown order.
func (s *Service) LabelParts(ctx context.Context, orderID int64) ([]Part, error) {
	db := s.db.WithContext(ctx)
	o, err := plan.LoadOrder(ctx, db, orderID, false)
	if err != nil {
		return nil, err
	}
	parts, err := orderLiveParts(ctx, db, orderID, MaxLabelParts)
	if err != nil {
		return nil, err
	}
	fps, err := floorParts(ctx, db, o, parts)
	if err != nil {
		return nil, err
	}
	return fps, nil
}
