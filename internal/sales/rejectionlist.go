package sales

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// DefaultRejectionBodyLimit is INTAKE_BODY_LIMIT's default: the most of a
// refused delivery's body kept, in bytes.
const DefaultRejectionBodyLimit = 64 << 10

// RejectionPageBytes bounds the bodies of one page of rejections: a page
// ends before the rejection whose body would take it past this (holding
// one rejection at least), and next_cursor goes on from there, so that a
// page costs the server a few megabytes however large the bodies kept.
const RejectionPageBytes = 4 << 20

// SetRejectionBodyLimit sets INTAKE_BODY_LIMIT: a refused delivery's body
// larger than limit bytes is kept cut to its first limit bytes (at a
// character's boundary) and marked so. limit <= 0 means the default.
func (s *Service) SetRejectionBodyLimit(limit int) { s.bodyLimit = limit }

func (s *Service) rejectionBodyLimit() int {
	if s.bodyLimit <= 0 {
		return DefaultRejectionBodyLimit
	}
	return s.bodyLimit
}

// cutBody is the body as kept: whole when it is at most limit bytes, else
// its beginning up to limit bytes, cut where a character begins; and
// whether it was cut.
func cutBody(body []byte, limit int) (string, bool) {
	if len(body) <= limit {
		return string(body), false
	}
	n := limit
	for n > 0 && !utf8.RuneStart(body[n]) {
		n--
	}
	return string(body[:n]), true
}

// Rejections returns a page of kept rejections, newest first: limit of
// them, or fewer when their bodies would take more than RejectionPageBytes
// (next_cursor then goes on from the last one given). It returns EINVALID
// when the filter is not valid.
func (s *Service) Rejections(ctx context.Context, f RejectionFilter, pr page.Request) ([]Rejection, string, error) {
	if err := f.Validate(); err != nil {
		return nil, "", err
	}
	// First the ids and the bodies' sizes, then the rows that fit.
	sizes, err := rejectionSizes(ctx, s.db, f, pr)
	if err != nil {
		return nil, "", fmt.Errorf("sales: list rejections: %w", err)
	}
	n, total := 0, int64(0)
	for n < len(sizes) && n < pr.Limit && (n == 0 || total+sizes[n].Size <= RejectionPageBytes) {
		total += sizes[n].Size
		n++
	}
	next := ""
	if n < len(sizes) {
		next = page.Cursor(sizes[n-1].ID)
	}
	if n == 0 {
		return []Rejection{}, "", nil
	}
	ids := make([]int64, n)
	for i := range n {
		ids[i] = sizes[i].ID
	}
	rows, err := rejectionsByID(ctx, s.db, ids)
	if err != nil {
		return nil, "", fmt.Errorf("sales: list rejections: %w", err)
	}
	out := make([]Rejection, len(rows))
	for i, r := range rows {
		out[i] = r.rejection()
	}
	return out, next, nil
}
