package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/cutting"
)

func cutFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func runCut(t *testing.T, args ...string) (cutting.Plan, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"cut"}, args...), env(nil), &stdout, &stderr)
	var plan cutting.Plan
	if err == nil {
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &plan))
	}
	return plan, stderr.String(), err
}

func TestRun_Cut(t *testing.T) {
	t.Parallel()
	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		file := cutFile(t, "list.json", `{
		  "formats": [{"name": "остаток", "length_mm": 800, "width_mm": 700, "offcut": true},
		              {"name": "ЛДСП 2800×2070", "length_mm": 2800, "width_mm": 2070}],
		  "kerf_mm": 4.4, "trims_mm": {"left": 10, "right": 10, "bottom": 10, "top": 10}, "stages": 3,
		  "parts": [{"name": "Боковина", "length_mm": 2200, "width_mm": 600, "qty": 2, "grain": "length"},
		            {"name": "Полка", "length_mm": 768, "width_mm": 560, "qty": 4},
		            {"name": "Фасад", "length_mm": 396, "width_mm": 716, "qty": 2, "grain": "width"}]}`)
		plan, summary, err := runCut(t, file)
		require.NoError(t, err)
		require.Equal(t, 8, plan.Totals.Parts)
		require.Equal(t, 2, plan.Totals.Sheets)
		require.True(t, plan.Sheets[0].Offcut, "the offcut first")
		require.LessOrEqual(t, plan.Totals.Stages, 3)
		require.Contains(t, summary, "8 parts on 2 sheets")
		for _, s := range plan.Sheets {
			for _, pl := range s.Parts {
				if pl.Name == "Фасад" {
					require.True(t, pl.Turned)
					require.Equal(t, 716.0, pl.DX)
				}
			}
		}
	})
	t.Run("CSV", func(t *testing.T) {
		t.Parallel()
		// the layout the cutting list exports, semicolon-separated, two boards
		file := cutFile(t, "list.csv", "material;thickness_mm;name;length_mm;width_mm;qty;edging;origins\n"+
			"ЛДСП 16 мм;16;Боковина;2200;600;2;ПВХ 2 мм;ПЗ 1\n"+
			"ЛДСП 16 мм;16;Полка;768,5;560;3;;ПЗ 1\n"+
			"ХДФ 3 мм;3;Задняя стенка;2190;1590;1;;ПЗ 1\n")
		_, _, err := runCut(t, file)
		require.ErrorContains(t, err, "--material")
		plan, _, err := runCut(t, "--material", "ЛДСП 16 мм/16", "--kerf", "0", "--trim", "0", "--stages", "0", "--sheets", "2800x2070:1", file)
		require.NoError(t, err)
		require.Equal(t, 5, plan.Totals.Parts)
		require.Equal(t, 1, plan.Totals.Sheets)
		for _, pl := range plan.Sheets[0].Parts {
			if pl.Name == "Полка" { // 768,5 read with its decimal comma
				require.ElementsMatch(t, []float64{768.5, 560}, []float64{pl.DX, pl.DY})
			}
		}
		require.Equal(t, cutting.Rect{X: 0, Y: 0, DX: 2800, DY: 2070}, plan.Sheets[0].Usable)

		comma := cutFile(t, "simple.csv", "name,length,width,qty,grain\nДверь,1996,396,2,length\n")
		plan, _, err = runCut(t, comma)
		require.NoError(t, err)
		require.Equal(t, 2, plan.Totals.Parts)
		require.False(t, plan.Sheets[0].Parts[0].Turned)
	})
	t.Run("OptimiserLayout", func(t *testing.T) {
		t.Parallel()
		// the cutting list's ?layout=optimiser, boards told apart by code and thickness
		file := cutFile(t, "optimiser.csv", "\uFEFFid;board;decor;thickness_mm;name;length_mm;width_mm;qty;grain;edge_l1;edge_l2;edge_w1;edge_w2;where\n"+
			"LDSP16-SONOMA-1;LDSP16-SONOMA;Дуб сонома;16;Боковина;2200;600;2;length;PVC2-SONOMA;;;;№5 ×2\n"+
			"LDSP16-SONOMA-2;LDSP16-SONOMA;Дуб сонома;16;Полка;780;560;4;length;PVC04-SONOMA;;;;№5 ×4\n"+
			"HDF3-WHITE-1;HDF3-WHITE;Белый;3;Задняя стенка;2090;1190;1;none;;;;;№5 ×1\n")
		_, _, err := runCut(t, file)
		require.ErrorContains(t, err, "LDSP16-SONOMA/16")
		plan, _, err := runCut(t, "--material", "LDSP16-SONOMA/16", file)
		require.NoError(t, err)
		require.Equal(t, 6, plan.Totals.Parts)
		for _, s := range plan.Sheets {
			for _, pl := range s.Parts {
				require.False(t, pl.Turned, "the grain runs along the sheet")
			}
		}
	})
	t.Run("ErrPartTooLarge", func(t *testing.T) {
		t.Parallel()
		file := cutFile(t, "big.csv", "name;length;width;qty\nСтолешница;3000;600;1\n")
		_, _, err := runCut(t, file)
		require.ErrorContains(t, err, `parts[0]: part "Столешница" (3000 × 600 mm) fits on no sheet format`)
		_, _, err = runCut(t, "--trim", "1100", file)
		require.ErrorContains(t, err, "formats[0]: the trims leave no usable area")
	})
	t.Run("ErrUsage", func(t *testing.T) {
		t.Parallel()
		require.ErrorIs(t, run(context.Background(), []string{"cut"}, env(nil), io.Discard, io.Discard), errUsage)
		var help bytes.Buffer
		_ = run(context.Background(), []string{"cut", "--help"}, env(nil), io.Discard, &help)
		require.Contains(t, help.String(), "Needs no database")
	})
}

func TestRun_BenchCutting(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"bench", "cutting", "--sizes", "20", "--instances", "1", "--classes", "I,VII", "--furniture", "0"},
		env(nil), &stdout, &stderr))
	var res cutting.BenchResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res))
	require.Len(t, res.Sets, 2)
	for i, name := range []string{cutting.SetStandard, cutting.SetGenerated} {
		set := res.Sets[i]
		require.Equal(t, name, set.Name)
		require.Len(t, set.Classes, 2)
		require.Equal(t, "VII", set.Classes[1].Class)
		require.Equal(t, 1, set.Classes[1].Instances)
		require.GreaterOrEqual(t, set.Classes[1].Sheets, set.Classes[1].LowerBound)
		require.Zero(t, set.Published, "GDRR's figures are for whole classes")
	}
	require.Contains(t, stderr.String(), "standard class VII")
	require.Contains(t, stderr.String(), "generated class VII")
	require.ErrorContains(t, run(context.Background(), []string{"bench", "cutting", "--classes", "XI"}, env(nil), io.Discard, io.Discard), `no class "XI"`)
	require.ErrorContains(t, run(context.Background(), []string{"bench", "cutting", "--set", "other"}, env(nil), io.Discard, io.Discard), `no set "other"`)
}
