package plan

import (
	"context"
	"time"

	"github.com/tsekh/tsekh/internal/catalog"
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
	var rows []struct {
		ProdOrderID  int64
		Seq          int
		CutSeq       int
		BandSeq      int
		AssembleSeq  int
		WorkCenterID int64
		Day          database.Date
	}
	err := database.Scan(s.db.WithContext(ctx).Raw(`SELECT op.prod_order_id, op.seq, o.cut_seq, o.band_seq, o.assemble_seq, op.work_center_id,
			min(op.start_day) AS day
		FROM plan_operations op JOIN plan_prod_orders o ON o.id = op.prod_order_id
		WHERE o.status IN ? AND op.status <> ? AND op.seq IN (o.cut_seq, o.band_seq, o.assemble_seq)
		GROUP BY op.prod_order_id, op.seq, o.cut_seq, o.band_seq, o.assemble_seq, op.work_center_id`,
		[]string{StatusLaunched, StatusInProgress}, OpDone), &rows)
	if err != nil {
		return nil, err
	}
	wcs, err := catalog.AllWorkCenters(ctx, s.db)
	if err != nil {
		return nil, err
	}
	out := map[int64]map[string]MaterialStart{}
	for _, r := range rows {
		var kind string
		switch r.Seq {
		case r.CutSeq:
			kind = catalog.KindBoard
		case r.BandSeq:
			kind = catalog.KindBand
		default:
			kind = catalog.KindFitting
		}
		if out[r.ProdOrderID] == nil {
			out[r.ProdOrderID] = map[string]MaterialStart{}
		}
		if have, ok := out[r.ProdOrderID][kind]; ok && !r.Day.Before(have.Day) {
			continue
		}
		wc := wcs[r.WorkCenterID]
		out[r.ProdOrderID][kind] = MaterialStart{Day: r.Day.Time, Weekdays: wc.Calendar.Weekdays, Holidays: wc.Calendar.Holidays}
	}
	return out, nil
}
