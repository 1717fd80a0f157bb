package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/platform/apperr"
)

const cutSummary = `Lays a cutting list out on sheets and prints the plan as JSON: each sheet with
its parts (position, size, turned), the cuts in the saw's order, the waste and
the offcuts kept, and the totals. Needs no database.

FILE (or - for standard input) is JSON or CSV; see "Cutting optimiser" in
docs/planning.md. JSON: {"formats":[{"length_mm":2800,"width_mm":2070,"count":0}],
"kerf_mm":4.4,"trims_mm":{"left":10,"right":10,"bottom":10,"top":10},
"stages":3,"min_offcut":{"length_mm":300,"width_mm":300},"offcut_weight":1,
"parts":[{"name":"Боковина","length_mm":2200,"width_mm":600,"qty":2,"grain":"length"}]}.
CSV: a header row and one row per part, ";" or "," separated, with the columns
name, length_mm (or length), width_mm (or width), qty and optionally id, grain
(length, width, none) and board (or material), thickness_mm (as the cutting
list's optimiser layout exports them); the sheets and the saw come from the flags. Flags given override a JSON
file's settings.`

func cutCmd(args []string, stdout, stderr io.Writer) error {
	fs := flags("cut [flags] FILE", cutSummary, stderr)
	def := cutting.Defaults()
	sheets := fs.String("sheets", "2800x2070", "sheet formats, LENGTHxWIDTH[:COUNT] comma-separated (mm; no count: as many as needed)")
	kerf := fs.Float64("kerf", def.Kerf, "the blade's kerf, mm (0 allowed)")
	trim := fs.Float64("trim", 10, "trim at each edge of a new sheet, mm (0 allowed)")
	stages := fs.Int("stages", def.Stages, "stages the saw makes (0: any number)")
	minOffcut := fs.String("min-offcut", "300x300", "the smallest offcut kept, LENGTHxWIDTH mm")
	offcutWeight := fs.Float64("offcut-weight", def.OffcutWeight, "how much a larger offcut is worth against smaller ones of the same area (0–10; 0: no preference)")
	material := fs.String("material", "", "CSV: plan only the parts of this material (the list's material column, with thickness_mm when there is one: \"ЛДСП 16 мм/16\")")
	effort := fs.Int64("effort", 0, "the search's effort in placements tried (0: proportional to the parts)")
	limit := fs.Duration("time-limit", 0, "stop the search after this long (0: a minute); only a search cut short depends on the machine")
	baseline := fs.Bool("baseline", false, "lay out with the plain best-area-fit heuristic instead, for comparison")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	data, err := readInput(fs.Arg(0))
	if err != nil {
		return err
	}
	p := def
	p.Trims = cutting.Trims{Left: *trim, Right: *trim, Bottom: *trim, Top: *trim}
	isJSON := len(bytes.TrimSpace(data)) > 0 && bytes.TrimSpace(data)[0] == '{'
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
	} else {
		parts, err := readCSVParts(data, *material)
		if err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		p.Parts = parts
	}
	if !isJSON || set["sheets"] {
		if p.Formats, err = parseFormats(*sheets); err != nil {
			return err
		}
	}
	if set["kerf"] {
		p.Kerf = *kerf
	}
	if set["stages"] {
		p.Stages = *stages
	}
	if !isJSON || set["min-offcut"] {
		l, w, err := parseSize(*minOffcut)
		if err != nil {
			return fmt.Errorf("--min-offcut: %w", err)
		}
		p.MinOffcut = cutting.Size{Length: l, Width: w}
	}
	if set["trim"] && isJSON {
		p.Trims = cutting.Trims{Left: *trim, Right: *trim, Bottom: *trim, Top: *trim}
	}
	if set["offcut-weight"] {
		p.OffcutWeight = *offcutWeight
	}
	if set["effort"] {
		p.Effort = *effort
	}
	p.TimeLimit = *limit
	start := time.Now()
	optimise := cutting.Optimise
	if *baseline {
		optimise = cutting.Baseline
	}
	plan, err := optimise(p)
	if err != nil {
		return describe(err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(plan); err != nil {
		return err
	}
	t := plan.Totals
	_, _ = fmt.Fprintf(stderr, "%d parts on %d sheets (%.2f m²), yield %.1f %%, waste %.2f m², %d offcuts kept, %d stages, in %s\n",
		t.Parts, t.Sheets, t.SheetsM2, 100*t.Yield, t.WasteM2, t.Offcuts, t.Stages, time.Since(start).Round(time.Millisecond))
	return nil
}

// describe spells an invalid problem's fields out on the command line.
func describe(err error) error {
	ae := apperr.As(err)
	if ae == nil || len(ae.Fields) == 0 {
		return err
	}
	msgs := []string{ae.Message}
	for _, f := range ae.Fields {
		msgs = append(msgs, "  "+f.Field+": "+f.Message)
	}
	return errors.New(strings.Join(msgs, "\n"))
}

func readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func parseSize(s string) (float64, float64, error) {
	a, b, ok := strings.Cut(strings.ReplaceAll(strings.ToLower(s), "×", "x"), "x")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not LENGTHxWIDTH", s)
	}
	l, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	w, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not LENGTHxWIDTH in mm", s)
	}
	return l, w, nil
}

func parseFormats(s string) ([]cutting.Format, error) {
	var fs []cutting.Format
	for _, item := range strings.Split(s, ",") {
		size, count, hasCount := strings.Cut(strings.TrimSpace(item), ":")
		l, w, err := parseSize(size)
		if err != nil {
			return nil, fmt.Errorf("--sheets: %w", err)
		}
		f := cutting.Format{Name: strings.TrimSpace(size), Length: l, Width: w}
		if hasCount {
			if f.Count, err = strconv.Atoi(count); err != nil || f.Count < 0 {
				return nil, fmt.Errorf("--sheets: %q: the count must be a whole number", item)
			}
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// readCSVParts reads a cutting list as CSV: its header names the columns.
func readCSVParts(data []byte, material string) ([]cutting.Part, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	header, _, _ := bytes.Cut(data, []byte("\n"))
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = ','
	semicolon := bytes.Count(header, []byte(";")) > bytes.Count(header, []byte(","))
	if semicolon {
		r.Comma = ';'
	}
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, errors.New("a header row and at least one part are needed")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.ToLower(strings.TrimSpace(h))] = i
	}
	find := func(names ...string) int {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return i
			}
		}
		return -1
	}
	cName, cLen, cWid, cQty := find("name"), find("length_mm", "length"), find("width_mm", "width"), find("qty")
	cID, cGrain, cMat, cThick := find("id"), find("grain"), find("board", "material"), find("thickness_mm")
	for i, c := range []int{cName, cLen, cWid, cQty} {
		if c < 0 {
			return nil, fmt.Errorf("the header has no %s column (it has %s)", []string{"name", "length_mm", "width_mm", "qty"}[i], strings.Join(rows[0], ", "))
		}
	}
	cell := func(row []string, c int) string {
		if c < 0 || c >= len(row) {
			return ""
		}
		return strings.TrimSpace(row[c])
	}
	number := func(row []string, c, line int, what string) (float64, error) {
		s := cell(row, c)
		if semicolon {
			s = strings.ReplaceAll(s, ",", ".") // a decimal comma
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("line %d: %s %q is not a number", line, what, cell(row, c))
		}
		return v, nil
	}
	var parts []cutting.Part
	var boards []string
	for i, row := range rows[1:] {
		line := i + 2
		if len(row) == 1 && strings.TrimSpace(row[0]) == "" {
			continue
		}
		board := cell(row, cMat)
		if cThick >= 0 {
			board += "/" + cell(row, cThick)
		}
		if cMat >= 0 && !slices.Contains(boards, board) {
			boards = append(boards, board)
		}
		if material != "" && board != material {
			continue
		}
		l, err := number(row, cLen, line, "length")
		if err != nil {
			return nil, err
		}
		w, err := number(row, cWid, line, "width")
		if err != nil {
			return nil, err
		}
		q, err := number(row, cQty, line, "qty")
		if err != nil || q != float64(int(q)) {
			return nil, fmt.Errorf("line %d: qty %q is not a whole number", line, cell(row, cQty))
		}
		parts = append(parts, cutting.Part{ID: cell(row, cID), Name: cell(row, cName), Length: l, Width: w, Qty: int(q),
			Grain: cutting.Grain(strings.ToLower(cell(row, cGrain)))})
	}
	if material == "" && len(boards) > 1 {
		return nil, fmt.Errorf("the list has parts of %d boards (%s): choose one with --material", len(boards), strings.Join(boards, "; "))
	}
	if material != "" && len(parts) == 0 {
		return nil, fmt.Errorf("no part of material %q (the list has %s)", material, strings.Join(boards, "; "))
	}
	return parts, nil
}
