package plan

import (
	"context"
	"time"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/plan/schedblob"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// MaterialStart is when a live production order's first pending operation
// that uses materials of a kind up is planned to start, and the calendar of
// the work centre it is planned on.
type MaterialStart struct {
	Day      time.Time // midnight UTC of the day
	Weekdays []int
	Holidays []string
}

// ConsumingStarts returns, per live production order, per material kind
// (catalog.KindBoard: its cutting step; KindBand: its edge banding;
// KindFitting: its assembly), the planned start of its first operation of
// that step not done yet. A kind whose step is all done (or which the
// route has not) is left out.
func (s *Service) ConsumingStarts(ctx context.Context) (map[int64]map[string]MaterialStart, error) {
	var orders []struct {
		ID          int64
		CutSeq      int
		BandSeq     int
		AssembleSeq int
	}
	err := database.Scan(s.db.WithContext(ctx).Model(&ProdOrder{}).Select("id, cut_seq, band_seq, assemble_seq").
		Where("status IN ?", liveStatuses), &orders)
	if err != nil {
		return nil, err
	}
	scheds, done, err := liveSchedules(ctx, s.db, "1 = 1")
	if err != nil {
		return nil, err
	}
	wcs, err := catalog.AllWorkCenters(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]MaterialStart{}
	for _, o := range orders {
		for _, op := range scheds[o.ID] {
			if done[op.ID] || op.Slot.StartDay == schedblob.NoDay {
				continue
			}
			var kind string
			switch op.Seq {
			case o.CutSeq:
				kind = catalog.KindBoard
			case o.BandSeq:
				kind = catalog.KindBand
			case o.AssembleSeq:
				kind = catalog.KindFitting
			default:
				continue
			}
			if out[o.ID] == nil {
				out[o.ID] = map[string]MaterialStart{}
			}
			day := slotOfBlob(op.Slot).Start.Day
			if have, ok := out[o.ID][kind]; ok && !day.Before(have.Day) {
				continue
			}
			wc := wcs[op.WorkCenterID]
			out[o.ID][kind] = MaterialStart{Day: day, Weekdays: wc.Calendar.Weekdays, Holidays: wc.Calendar.Holidays}
		}
	}
	return out, nil
}
