package stock

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/apperr"
	"github.com/tsekh/tsekh/internal/platform/page"
)

// Levels returns a page of every material's stock in the catalogue's
// order (materials never moved show zeros), of one kind when kind is set:
// EINVALID naming kind when it is none of the kinds.
func (s *Service) Levels(ctx context.Context, kind string, pr page.Request) ([]Level, string, error) {
	if kind != "" && !slices.Contains(catalog.MaterialKinds, kind) {
		return nil, "", apperr.Invalid("invalid query", apperr.Field("kind", "must be %s", strings.Join(catalog.MaterialKinds, ", ")))
	}
	var ms []catalog.Material
	q := s.db.WithContext(ctx).Where("id > ?", pr.After)
	if kind != "" {
		q = q.Where("kind = ?", kind)
	}
	if err := q.Order("id").Limit(pr.Limit + 1).Find(&ms).Error; err != nil {
		return nil, "", err
	}
	levels, err := levelsOf(ctx, s.db, ms)
	if err != nil {
		return nil, "", err
	}
	out, next := page.Next(levels, pr.Limit, func(l Level) int64 { return l.id })
	return out, next, nil
}

func levelsOf(ctx context.Context, db *gorm.DB, ms []catalog.Material) ([]Level, error) {
	codes := make([]string, len(ms))
	for i, m := range ms {
		codes[i] = m.Code
	}
	var lvs []level
	if len(codes) > 0 {
		if err := db.WithContext(ctx).Where("code IN ?", codes).Find(&lvs).Error; err != nil {
			return nil, err
		}
	}
	by := map[string]level{}
	for _, l := range lvs {
		by[l.Code] = l
	}
	out := make([]Level, len(ms))
	for i, m := range ms {
		out[i] = levelOf(m, by[m.Code])
	}
	return out, nil
}

// OnHandTx returns what is on hand of every material stock has moved, by
// code, read through tx.
func OnHandTx(ctx context.Context, tx *gorm.DB) (map[string]float64, error) {
	var lvs []level
	if err := tx.WithContext(ctx).Find(&lvs).Error; err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(lvs))
	for _, l := range lvs {
		out[l.Code] = l.OnHand
	}
	return out, nil
}
