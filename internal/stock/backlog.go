package stock

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/catalog"
	"github.com/tsekh/tsekh/internal/platform/input"
)

// ItemSource hands the items waiting in the backlog to fn a batch at a
// time, in item order, so that what they need is counted without holding
// them all at once (the backlog may hold tens of thousands of items).
type ItemSource func(ctx context.Context, fn func([]Item) error) error

// Items is an ItemSource of the items given, in one batch.
func Items(items []Item) ItemSource {
	return func(_ context.Context, fn func([]Item) error) error {
		if len(items) == 0 {
			return nil
		}
		return fn(items)
	}
}

// itemsNeed is what backlog items need: per material, and per board the
// parts' area.
type itemsNeed struct {
	needs []Move
	area  map[string]float64
}

// itemCounter counts what backlog items need, a batch at a time. An item
// is exploded as a launch would explode it, without storing anything (its
// parts cut from the boards its options choose): each item's parts' board
// shares (BoardShares, one item at a time: an item is launched whole), its
// parts' bands, its units' fittings. The moves of an item of a product,
// quantity and options met before are replayed rather than worked out
// again, in the order they were first added, so that the sums are the
// same to the last bit whatever the batches.
type itemCounter struct {
	s        *Service
	db       *gorm.DB
	all      map[string]catalog.Material
	products map[string]*catalog.Product // by SKU; nil: not in the catalogue
	memo     map[string]*itemMoves
	memoLen  int // the moves the memo holds
	// The sums so far, per material (needs) and per board (area): each
	// code's at its index in the codes' order of first use.
	needs, area sums
}

// sums adds up quantities per code; an item's moves name their codes by
// index, looked up once per item met, not once per item counted.
type sums struct {
	at    map[string]int
	codes []string
	qty   []float64
}

// index is code's index, a new one for a code not met before.
func (s *sums) index(code string) int {
	i, ok := s.at[code]
	if !ok {
		if s.at == nil {
			s.at = map[string]int{}
		}
		i = len(s.codes)
		s.at[code] = i
		s.codes, s.qty = append(s.codes, code), append(s.qty, 0)
	}
	return i
}

// itemMoves is one item's moves, in the order they are added up: what it
// needs (indices into the counter's needs, quantities) and, per board,
// the area of each part (m²).
type itemMoves struct {
	needAt, areaAt   []int
	needQty, areaQty []float64
}

// counted is what the items counted need: per material, in code order
// (as addMove keeps them), and per board the parts' area.
func (c *itemCounter) counted() itemsNeed {
	out := itemsNeed{area: make(map[string]float64, len(c.area.codes))}
	for i, code := range c.needs.codes {
		out.needs = append(out.needs, Move{Code: code, Qty: c.needs.qty[i]})
	}
	slices.SortFunc(out.needs, func(a, b Move) int { return cmp.Compare(a.Code, b.Code) })
	for i, code := range c.area.codes {
		out.area[code] = c.area.qty[i]
	}
	return out
}

// maxItemMemo bounds the moves kept while counting (about 8 MB); past it
// the memo starts again, so that memory stays bounded by it, not by the
// backlog.
const maxItemMemo = 200_000

func (s *Service) newItemCounter(db *gorm.DB, all map[string]catalog.Material) *itemCounter {
	return &itemCounter{s: s, db: db, all: all, products: map[string]*catalog.Product{}, memo: map[string]*itemMoves{}}
}

// add counts the items of one batch.
func (c *itemCounter) add(ctx context.Context, items []Item) error {
	var skus []string
	for _, it := range items {
		if _, seen := c.products[it.SKU]; !seen {
			c.products[it.SKU] = nil
			skus = append(skus, it.SKU)
		}
	}
	if len(skus) > 0 {
		found, err := catalog.ProductSpecs(ctx, c.db, skus)
		if err != nil {
			return err
		}
		for sku, p := range found {
			c.products[sku] = &p
		}
	}
	for _, it := range items {
		p := c.products[it.SKU]
		if p == nil || it.Qty <= 0 {
			continue
		}
		key := memoKey(it)
		m, ok := c.memo[key]
		if !ok {
			var err error
			if m, err = c.movesOf(ctx, *p, it); err != nil {
				return err
			}
			if c.memoLen += len(m.needAt) + len(m.areaAt); c.memoLen > maxItemMemo {
				c.memo, c.memoLen = map[string]*itemMoves{}, len(m.needAt)+len(m.areaAt)
			}
			c.memo[key] = m
		}
		for k, i := range m.needAt {
			c.needs.qty[i] += m.needQty[k]
		}
		for k, i := range m.areaAt {
			c.area.qty[i] += m.areaQty[k]
		}
	}
	return nil
}

func memoKey(it Item) string {
	if it.OptionsKey != "" {
		return it.SKU + "\x00" + strconv.Itoa(it.Qty) + "\x01" + it.OptionsKey
	}
	opts, _ := json.Marshal(map[string]string(it.Options)) // sorted keys
	return it.SKU + "\x00" + strconv.Itoa(it.Qty) + "\x00" + string(opts)
}

// movesOf explodes one item into what it needs, in the order it is added.
func (c *itemCounter) movesOf(ctx context.Context, p catalog.Product, it Item) (*itemMoves, error) {
	var parts []PartShape
	for _, line := range p.Parts {
		code := line.Board
		if line.Slot != "" {
			code = p.BoardFor(line.Slot, it.Options)
		}
		shape := PartShape{Board: code, LengthMM: line.LengthMM, WidthMM: line.WidthMM, Grain: line.Grain}
		if board, known := c.all[input.CodeKey(code)]; known {
			shape.Board = board.Code
			sides := []*string{&shape.Edges.L1, &shape.Edges.L2, &shape.Edges.W1, &shape.Edges.W2}
			for k, side := range line.Edges.Sides() {
				if side.Band == "" {
					continue
				}
				if band, err := catalog.EdgeBand(side.Band, board, c.all); err == nil {
					*sides[k] = band.Code
				}
			}
		}
		for range line.Qty * it.Qty {
			parts = append(parts, shape)
		}
	}
	shares, err := c.s.BoardShares(ctx, c.db, parts)
	if err != nil {
		return nil, err
	}
	out := &itemMoves{}
	need := func(m Move) {
		if m.Code == "" || math.Abs(m.Qty) < epsilon/10 { // as addMove
			return
		}
		out.needAt, out.needQty = append(out.needAt, c.needs.index(m.Code)), append(out.needQty, m.Qty)
	}
	for i, sh := range parts {
		need(Move{Code: sh.Board, Qty: shares[i]})
		out.areaAt = append(out.areaAt, c.area.index(sh.Board))
		out.areaQty = append(out.areaQty, float64(sh.LengthMM)*float64(sh.WidthMM)/1e6)
		for _, m := range BandMetres(sh, c.s.set.EdgeOverhangMM) {
			need(m)
		}
	}
	for _, f := range p.Fittings {
		need(Move{Code: f.Code, Qty: float64(f.Qty * it.Qty)})
	}
	return out, nil
}
