package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// physicalStockUp (00034) fills what 00033's tables and columns know of the
// work already launched, so that stock reserves what it needs:
//   - every sheet of every cutting plan is registered with stock (the board
//     it is a new sheet of, or its offcut; the offcuts it leaves, coded
//     O<plan>-<sheet>-<k> as 00033 coded the ones kept already); a sheet
//     reported cut is marked as gone to the saw (document 0: before stock
//     kept documents of it);
//   - a live part not yet cut that the newest plan laying it out lays on an
//     uncut sheet lies on that sheet, and needs its share of it by area
//     (nothing on an offcut); any other live part not yet cut needs its
//     area of its board's largest usable format;
//   - what each live order needs of a board is then its parts' needs, and
//     each level's reserved what every order needs.
//
// In Go, because the sheets' layouts are JSON.
func physicalStockUp(ctx context.Context, tx *sql.Tx) error {
	usable, err := boardAreas(ctx, tx)
	if err != nil {
		return err
	}
	type part struct {
		order         int64
		board         string
		length, width float64
	}
	parts := map[int64]*part{}
	rows, err := tx.QueryContext(ctx, `SELECT p.id, p.prod_order_id, p.board, p.length_mm, p.width_mm FROM plan_parts p
JOIN plan_prod_orders o ON o.id = p.prod_order_id
WHERE o.status IN ('launched', 'in_progress') AND p.status = 'live'
  AND NOT EXISTS (SELECT 1 FROM plan_operations op WHERE op.part_id = p.id AND op.status = 'done')`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var p part
		if err := rows.Scan(&id, &p.order, &p.board, &p.length, &p.width); err != nil {
			_ = rows.Close()
			return err
		}
		parts[id] = &p
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	type layout struct {
		Grain bool `json:"grain"`
		Parts []struct {
			PartID int64   `json:"part_id"`
			DX     float64 `json:"dx_mm"`
			DY     float64 `json:"dy_mm"`
		} `json:"parts"`
		Offcuts []struct {
			DX float64 `json:"dx_mm"`
			DY float64 `json:"dy_mm"`
		} `json:"offcuts"`
	}
	type sheet struct {
		plan, replacedBy int64
		n                int
		board, raw       string
		offcut           sql.NullInt64
		cut              bool
	}
	var sheets []sheet
	rows, err = tx.QueryContext(ctx, `SELECT s.plan_id, s.n, s.board, s.offcut_id, s.layout, s.cut_at IS NOT NULL, COALESCE(p.replaced_by, 0)
FROM cutting_sheets s JOIN cutting_plans p ON p.id = s.plan_id ORDER BY s.plan_id, s.n`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var sh sheet
		if err := rows.Scan(&sh.plan, &sh.n, &sh.board, &sh.offcut, &sh.raw, &sh.cut, &sh.replacedBy); err != nil {
			_ = rows.Close()
			return err
		}
		sheets = append(sheets, sh)
	}
	if err := closeRows(rows); err != nil {
		return err
	}
	type onSheet struct {
		plan  int64
		n     int
		share float64
	}
	laid := map[int64]onSheet{}
	for _, sh := range sheets {
		var l layout
		if err := json.Unmarshal([]byte(sh.raw), &l); err != nil {
			return fmt.Errorf("cutting plan %d sheet %d: %w", sh.plan, sh.n, err)
		}
		type kept struct {
			Code     string  `json:"code"`
			LengthMM float64 `json:"length_mm"`
			WidthMM  float64 `json:"width_mm"`
		}
		keep := []kept{}
		for k, o := range l.Offcuts {
			length, width := o.DX, o.DY
			if width > length && !l.Grain {
				length, width = width, length
			}
			keep = append(keep, kept{Code: fmt.Sprintf("O%d-%d-%d", sh.plan, sh.n, k+1), LengthMM: length, WidthMM: width})
		}
		b, err := json.Marshal(keep)
		if err != nil {
			return err
		}
		var doc any
		if sh.cut {
			doc = 0
		}
		var offcut any
		if sh.offcut.Valid {
			offcut = sh.offcut.Int64
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO stock_plan_sheets (plan_id, n, board, offcut_id, keep, document_id) VALUES ($1, $2, $3, $4, $5, $6)`,
			sh.plan, sh.n, sh.board, offcut, string(b), doc); err != nil {
			return err
		}
		if sh.cut || sh.replacedBy != 0 {
			continue
		}
		total := 0.0
		for _, p := range l.Parts {
			total += p.DX * p.DY
		}
		for _, p := range l.Parts {
			if _, ok := parts[p.PartID]; !ok {
				continue
			}
			on := onSheet{plan: sh.plan, n: sh.n}
			if !sh.offcut.Valid && total > 0 {
				on.share = p.DX * p.DY / total
			}
			laid[p.PartID] = on // a newer plan comes later and lays it out again
		}
	}
	type key struct {
		order int64
		board string
	}
	needs := map[key]float64{}
	for id, p := range parts {
		need := 0.0
		if on, ok := laid[id]; ok {
			need = on.share
			if _, err := tx.ExecContext(ctx, `UPDATE plan_parts SET sheet_plan_id = $1, sheet_n = $2 WHERE id = $3`, on.plan, on.n, id); err != nil {
				return err
			}
		} else if u := usable[strings.ToLower(p.board)]; u > 0 {
			need = p.length * p.width / 1e6 / u
		}
		if _, err := tx.ExecContext(ctx, `UPDATE plan_parts SET board_need = $1 WHERE id = $2`, need, id); err != nil {
			return err
		}
		if _, board := usable[strings.ToLower(p.board)]; board {
			needs[key{p.order, p.board}] += need
		}
	}
	// What live orders need of boards is their parts' needs now.
	if _, err := tx.ExecContext(ctx, `UPDATE stock_needs SET needed = 0 WHERE code IN (SELECT code FROM catalog_materials WHERE kind = 'board')`); err != nil {
		return err
	}
	for k, v := range needs {
		v = math.Round(v*1e6) / 1e6
		res, err := tx.ExecContext(ctx, `UPDATE stock_needs SET needed = $1 WHERE prod_order_id = $2 AND code = $3`, v, k.order, k.board)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO stock_needs (prod_order_id, code, needed, consumed) VALUES ($1, $2, $3, 0)`, k.order, k.board, v); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stock_levels (code, on_hand, reserved)
SELECT DISTINCT code, 0, 0 FROM stock_needs WHERE code NOT IN (SELECT code FROM stock_levels)`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE stock_levels SET reserved = COALESCE((SELECT sum(n.needed) FROM stock_needs n WHERE n.code = stock_levels.code), 0)`)
	return err
}

// boardAreas returns, per board code in lower case, the area in m² of its
// largest format once its trims are cut off (0 without formats).
func boardAreas(ctx context.Context, tx *sql.Tx) (map[string]float64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT code, formats, trim_l1_mm, trim_l2_mm, trim_w1_mm, trim_w2_mm FROM catalog_materials WHERE kind = 'board'`)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for rows.Next() {
		var code, formats string
		var l1, l2, w1, w2 float64
		if err := rows.Scan(&code, &formats, &l1, &l2, &w1, &w2); err != nil {
			_ = rows.Close()
			return nil, err
		}
		var fs []struct {
			LengthMM float64 `json:"length_mm"`
			WidthMM  float64 `json:"width_mm"`
		}
		if err := json.Unmarshal([]byte(formats), &fs); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("board %s formats: %w", code, err)
		}
		best := 0.0
		for _, f := range fs {
			best = math.Max(best, math.Max(f.LengthMM-w1-w2, 0)*math.Max(f.WidthMM-l1-l2, 0)/1e6)
		}
		out[strings.ToLower(code)] = best
	}
	return out, closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

// noDown is the Down of a migration that only fills data its SQL twin's
// Down drops with the tables and columns.
func noDown(context.Context, *sql.Tx) error { return nil }
