package events

import (
	"context"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// historyBatch is how many events HistoryOf reads at a time while it
// fills a page with those it keeps.
const historyBatch = 500

// HistoryOf is History keeping only the events keep says belong to the
// story (keep sees each event whole, its payload included): a page holds
// limit kept events, however many were passed over, and its cursor names
// the last one kept.
func (j *Journal) HistoryOf(ctx context.Context, objs []Objects, keep func(Entry) bool, pr page.Request) ([]Entry, string, error) {
	var out []Entry
	after := pr.After
	for len(out) <= pr.Limit {
		ids, err := j.drv.historyIDs(ctx, j.db, objs, after, historyBatch)
		if err != nil {
			return nil, "", err
		}
		if len(ids) == 0 {
			break
		}
		entries, err := j.entries(ctx, ids)
		if err != nil {
			return nil, "", err
		}
		for _, e := range entries {
			if keep(e) {
				out = append(out, e)
				if len(out) > pr.Limit {
					break
				}
			}
		}
		if len(ids) < historyBatch {
			break
		}
		after = ids[len(ids)-1]
	}
	out, next := page.Next(out, pr.Limit, func(e Entry) int64 { return e.ID })
	if out == nil {
		out = []Entry{}
	}
	return out, next, nil
}
