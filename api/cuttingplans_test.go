package api_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/render/scantest"
	"github.com/tsekh/tsekh/internal/render/svgtest"
)

type cutRect struct {
	X  float64 `json:"x_mm"`
	Y  float64 `json:"y_mm"`
	DX float64 `json:"dx_mm"`
	DY float64 `json:"dy_mm"`
}

type cutSheetPart struct {
	PartID      int64  `json:"part_id"`
	Code        string `json:"code"`
	Name        string `json:"name"`
	ProdOrderID int64  `json:"prod_order_id"`
	LengthMM    int    `json:"length_mm"`
	WidthMM     int    `json:"width_mm"`
	cutRect
	Turned   bool `json:"turned"`
	CutOrder int  `json:"cut_order"`
}

type cutSheet struct {
	N        int
	Board    string
	Grain    bool
	Format   string
	OffcutID *int64  `json:"offcut_id"`
	LengthMM float64 `json:"length_mm"`
	WidthMM  float64 `json:"width_mm"`
	Usable   cutRect
	Stages   int
	Parts    []cutSheetPart
	Cuts     []struct {
		Stage     int
		Direction string
		Pos       float64 `json:"pos_mm"`
		Piece     cutRect
	}
	Offcuts []cutRect
	CutAt   *string `json:"cut_at"`
}

type cutPlan struct {
	ID         int64
	ProdOrders []int64 `json:"prod_orders"`
	KerfMM     float64 `json:"kerf_mm"`
	Stages     int
	Sheets     int
	Parts      int
	Cut        int
	Stale      bool
	Why        []string
	Boards     []struct {
		Board       string
		Sheets      int
		OffcutsUsed int `json:"offcuts_used"`
		Parts       int
		Yield       float64
		WasteM2     float64 `json:"waste_m2"`
		OffcutsM2   float64 `json:"offcuts_m2"`
		Largest     struct {
			LengthMM float64 `json:"length_mm"`
			WidthMM  float64 `json:"width_mm"`
		} `json:"largest_offcut"`
	}
	SheetList []cutSheet `json:"sheet_list"`
}

type launchedPart struct {
	ID       int64
	Code     string
	Name     string
	Board    string
	Grain    string
	LengthMM int `json:"length_mm"`
	WidthMM  int `json:"width_mm"`
}

func prodOrderParts(t *testing.T, env *apptest.Env, id int64) []launchedPart {
	t.Helper()
	var d struct{ Parts []launchedPart }
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	r.JSON(t, &d)
	return d.Parts
}

// jobOf is a background job as GET /api/v1/jobs/{id} shows it.
type jobOf struct {
	ID       int64
	Kind     string
	Status   string
	Progress float64
	Message  string
	Result   map[string]int64
	Error    *struct {
		Code, Detail string
		Errors       []struct{ Field, Message string }
	}
	ResultURL string `json:"result_url"`
	Plan      *cutPlan
}

// runJob follows a queued job (a 202 and its Location) to its end: the
// service's runner runs the queue, and the job is read back.
func runJob(t *testing.T, env *apptest.Env, r apptest.Response) jobOf {
	t.Helper()
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
	loc := r.Header.Get("Location")
	require.Regexp(t, `^/api/v1/jobs/\d+$`, loc)
	var queued jobOf
	r.JSON(t, &queued)
	require.Equal(t, "queued", queued.Status)
	env.RunJobs()
	g := env.Admin(http.MethodGet, loc, nil)
	require.Equal(t, http.StatusOK, g.Status, "%s", g.Body)
	var j jobOf
	g.JSON(t, &j)
	return j
}

// createCutPlan lays out a plan through its job and returns the plan.
func createCutPlan(t *testing.T, env *apptest.Env, ids ...int64) cutPlan {
	t.Helper()
	j := runJob(t, env, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": ids}))
	require.Equal(t, "done", j.Status, "%+v", j.Error)
	require.NotNil(t, j.Plan)
	require.Equal(t, j.Result["plan_id"], j.Plan.ID)
	return *j.Plan
}

// checkCutPlan is the checker of a stored plan, independent of the
// optimiser: every part of the orders placed exactly once at its size,
// inside its sheet's usable area, no two parts closer than the kerf, never
// turned against the grain, and the layout cuttable by guillotine cuts in
// the stages the sheet claims.
func checkCutPlan(t *testing.T, p cutPlan, parts []launchedPart) {
	t.Helper()
	want := map[int64]launchedPart{}
	for _, pt := range parts {
		want[pt.ID] = pt
	}
	seen := map[int64]bool{}
	const eps = 0.05
	for _, sh := range p.SheetList {
		u := sh.Usable
		require.GreaterOrEqual(t, u.X, -eps)
		require.LessOrEqual(t, u.X+u.DX, sh.LengthMM+eps)
		require.LessOrEqual(t, u.Y+u.DY, sh.WidthMM+eps)
		for i, a := range sh.Parts {
			lp, ok := want[a.PartID]
			require.True(t, ok, "part %d is not a part of the orders", a.PartID)
			require.False(t, seen[a.PartID], "part %d placed twice", a.PartID)
			seen[a.PartID] = true
			l, w := float64(lp.LengthMM), float64(lp.WidthMM)
			if a.Turned {
				l, w = w, l
			}
			require.InDelta(t, l, a.DX, eps, "part %d's length along the sheet", a.PartID)
			require.InDelta(t, w, a.DY, eps, "part %d's width across the sheet", a.PartID)
			if sh.Grain {
				switch lp.Grain {
				case "length":
					require.False(t, a.Turned, "part %d turned against the grain", a.PartID)
				case "width":
					require.True(t, a.Turned, "part %d's grain runs along its width", a.PartID)
				}
			}
			require.True(t, a.X >= u.X-eps && a.Y >= u.Y-eps && a.X+a.DX <= u.X+u.DX+eps && a.Y+a.DY <= u.Y+u.DY+eps, "part %d inside the trims", a.PartID)
			for _, b := range sh.Parts[i+1:] {
				apart := a.X+a.DX+p.KerfMM <= b.X+eps || b.X+b.DX+p.KerfMM <= a.X+eps || a.Y+a.DY+p.KerfMM <= b.Y+eps || b.Y+b.DY+p.KerfMM <= a.Y+eps
				require.True(t, apart, "parts %d and %d overlap or lie closer than the kerf", a.PartID, b.PartID)
			}
		}
		rs := make([]cutRect, len(sh.Parts))
		for i, a := range sh.Parts {
			rs[i] = a.cutRect
		}
		need := guillotineStages(u, rs, p.KerfMM)
		require.Less(t, need, 1000, "sheet %d is not cuttable by guillotine cuts", sh.N)
		require.LessOrEqual(t, need, sh.Stages, "sheet %d claims fewer stages than it takes", sh.N)
		if p.Stages > 0 {
			require.LessOrEqual(t, need, p.Stages, "sheet %d takes more stages than the saw makes", sh.N)
		}
	}
	require.Len(t, seen, len(want), "every part placed")
}

// guillotineStages is the fewest stages of guillotine cuts that free
// every part from region, the first cuts of either direction; 1000 and
// more when no guillotine split frees them.
func guillotineStages(region cutRect, rs []cutRect, kerf float64) int {
	return min(stagesAcross(region, rs, kerf, true), stagesAcross(region, rs, kerf, false))
}

// stagesAcross counts the stages when this stage's cuts are lines x = c
// (acrossX) or y = c.
func stagesAcross(region cutRect, rs []cutRect, kerf float64, acrossX bool) int {
	const eps = 0.05
	if len(rs) == 0 {
		return 0
	}
	if len(rs) == 1 && math.Abs(rs[0].X-region.X) < eps && math.Abs(rs[0].Y-region.Y) < eps &&
		math.Abs(rs[0].DX-region.DX) < eps && math.Abs(rs[0].DY-region.DY) < eps {
		return 0
	}
	lo := func(r cutRect) float64 {
		if acrossX {
			return r.X
		}
		return r.Y
	}
	hi := func(r cutRect) float64 {
		if acrossX {
			return r.X + r.DX
		}
		return r.Y + r.DY
	}
	sorted := append([]cutRect(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return lo(sorted[i]) < lo(sorted[j]) })
	// strips: runs of parts no blade passes between
	var strips [][]cutRect
	var ends []float64
	for _, r := range sorted {
		if n := len(strips); n > 0 && lo(r) < ends[n-1]+kerf-eps {
			strips[n-1] = append(strips[n-1], r)
			ends[n-1] = math.Max(ends[n-1], hi(r))
			continue
		}
		strips = append(strips, []cutRect{r})
		ends = append(ends, hi(r))
	}
	if len(strips) == 1 && math.Abs(lo(strips[0][0])-lo(region)) < eps && math.Abs(ends[0]-hi(region)) < eps {
		// no cut this way at this stage: the piece passes on to the next
		if other := stagesAcross(region, rs, kerf, !acrossX); other < 1000 {
			return 1 + other
		}
		return 1000
	}
	worst := 0
	for i, strip := range strips {
		sub := region
		if acrossX {
			sub.X, sub.DX = lo(strip[0]), ends[i]-lo(strip[0])
		} else {
			sub.Y, sub.DY = lo(strip[0]), ends[i]-lo(strip[0])
		}
		worst = max(worst, stagesAcross(sub, strip, kerf, !acrossX))
	}
	return min(1+worst, 1000)
}

// Cutting plans through the API: laid out, stored, checked; the same
// input gives the same plan; bad input is a 422 naming what is wrong and
// stores nothing; a sheet reported cut moves its parts through the cutting
// step, keeps its offcuts, and the next plan cuts from them first; a plan
// whose parts were cut elsewhere says it is stale.
func TestCuttingPlans_LayOutStoreAndCut(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 2})
		po := launch(t, env, map[string]any{"items": ids})
		parts := prodOrderParts(t, env, po.ID)
		require.NotEmpty(t, parts)
		estimate := boardNeeds(t, env, po.ID) // no plan yet: the optimiser's estimate from the parts' shapes

		t.Run("ErrInvalid", func(t *testing.T) {
			events := env.Count("events")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{}}), http.StatusUnprocessableEntity, "prod_orders")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID, 99999}}), http.StatusUnprocessableEntity, "prod_orders[1]")
			requireProblem(t, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID, po.ID}}), http.StatusUnprocessableEntity, "prod_orders[1]")
			require.Equal(t, events, env.Count("events"), "nothing written")
			_, other := receive(t, env, line{"SHK-KUPE-1600", 1})
			cancelled := launch(t, env, map[string]any{"items": other})
			require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/cancel", cancelled.ID), nil).Status)
			events = env.Count("events")
			p := requireProblem(t, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID, cancelled.ID}}), http.StatusUnprocessableEntity, "prod_orders[1]")
			require.Contains(t, p.Errors[0].Message, "cancelled")
			require.Equal(t, events, env.Count("events"), "nothing written")
			require.Zero(t, env.Count("cutting_plans"))
		})

		p := createCutPlan(t, env, po.ID)
		require.Positive(t, p.ID)
		require.Equal(t, len(parts), p.Parts)
		require.NotEmpty(t, p.Boards)
		require.Len(t, p.SheetList, p.Sheets)
		require.False(t, p.Stale)
		require.InDelta(t, 4.4, p.KerfMM, 1e-9)
		for _, b := range p.Boards {
			require.Greater(t, b.Yield, 0.0)
			require.LessOrEqual(t, b.Yield, 1.0)
			// the offcuts kept, and the largest, are the board's sheets'
			area, largest := 0.0, 0.0
			for _, sh := range p.SheetList {
				for _, o := range sh.Offcuts {
					if sh.Board == b.Board {
						area += o.DX * o.DY / 1e6
						largest = math.Max(largest, o.DX*o.DY)
					}
				}
			}
			require.InDelta(t, area, b.OffcutsM2, 1e-3, b.Board)
			require.InDelta(t, largest, b.Largest.LengthMM*b.Largest.WidthMM, 1e-6, b.Board)
		}
		checkCutPlan(t, p, parts)
		for _, b := range p.Boards {
			require.GreaterOrEqual(t, *estimate[b.Board].Sheets, b.Sheets, "%s: the estimate is never fewer sheets than the plan", b.Board)
		}
		created := catalogEvents(t, env, "cutting_plan.created", "cutting_plans", p.ID)
		require.Len(t, created, 1)
		require.Equal(t, "Администратор", created[0].Actor.Name)

		// The same input gives the same plan.
		again := createCutPlan(t, env, po.ID)
		require.Equal(t, sheetsJSON(t, p), sheetsJSON(t, again))

		// Requirements count the newest plan's sheets now: each part its
		// share of the sheet it lies on; and the older twin is stale, its
		// parts laid out by the newer one.
		needs := boardNeeds(t, env, po.ID)
		for _, b := range again.Boards {
			require.InDelta(t, float64(b.Sheets-b.OffcutsUsed), needs[b.Board].Launched, 2e-3, b.Board)
			require.Equal(t, b.Sheets-b.OffcutsUsed, *needs[b.Board].Sheets, b.Board)
		}
		var twin cutPlan
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil).JSON(t, &twin)
		require.True(t, twin.Stale)
		require.Contains(t, twin.Why[0], fmt.Sprintf("laid out by cutting plan %d now", again.ID))
		p, again = again, p // the newest is the plan the saw cuts

		var got cutPlan
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil).JSON(t, &got)
		require.Equal(t, sheetsJSON(t, p), sheetsJSON(t, got))
		var list struct{ Items []cutPlan }
		env.Admin(http.MethodGet, "/api/v1/cutting-plans?limit=1", nil).JSON(t, &list)
		require.Len(t, list.Items, 1)
		require.Equal(t, again.ID, list.Items[0].ID, "the first plan first")

		// The saw operator's views.
		r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/1", p.ID), nil, apptest.AdminToken, "Accept", "image/svg+xml")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Contains(t, r.Header.Get("Content-Type"), "image/svg+xml")
		require.Contains(t, string(r.Body), p.SheetList[0].Parts[0].Name)
		r = env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil, apptest.AdminToken, "Accept", "text/csv")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, len(parts)+1, strings.Count(strings.TrimSpace(string(r.Body)), "\n")+1)
		r = env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil, apptest.AdminToken, "Accept", "text/html")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, p.Sheets, strings.Count(string(r.Body), "<svg "))
		requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d", p.ID, p.Sheets+1), nil), http.StatusNotFound)

		// Report a sheet that leaves offcuts cut, as the master.
		n := 0
		for _, sh := range p.SheetList {
			for _, o := range sh.Offcuts {
				// a plinth (1568 × 100 mm of the white board) fits it
				if sh.OffcutID == nil && sh.Board == "LDSP16-WHITE" && math.Max(o.DX, o.DY) >= 1568 && math.Min(o.DX, o.DY) >= 100 && n == 0 {
					n = sh.N
				}
			}
		}
		require.NotZero(t, n, "some white sheet leaves an offcut a plinth fits")
		sh := p.SheetList[n-1]
		master := env.UserToken("Мастер участка", "master")
		r = env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, n), nil, master)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var cut cutSheet
		r.JSON(t, &cut)
		require.NotNil(t, cut.CutAt)
		sheetCut := catalogEvents(t, env, "cutting_plan.sheet_cut", "cutting_plans", p.ID)
		require.Len(t, sheetCut, 1)
		require.Equal(t, "Мастер участка", sheetCut[0].Actor.Name)
		require.Len(t, sheetCut[0].Payload["parts"], len(sh.Parts))
		require.Len(t, sheetCut[0].Payload["offcuts_kept"], len(sh.Offcuts))
		progress := eventsOf(t, env, "prod_order.progress_reported", po.ID)
		require.Len(t, progress, 1)
		require.EqualValues(t, len(sh.Parts), progress[0].Payload["qty"])
		require.EqualValues(t, 1, progress[0].Payload["seq"], "the cutting step")
		require.Len(t, eventsOf(t, env, "prod_order.started", po.ID), 1)
		doneOps := 0
		var detail struct {
			Operations []struct {
				Seq    int
				Status string
			}
		}
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/production-orders/%d", po.ID), nil).JSON(t, &detail)
		for _, op := range detail.Operations {
			if op.Seq == 1 && op.Status == "done" {
				doneOps++
			}
		}
		require.Equal(t, len(sh.Parts), doneOps)
		requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, n), nil, master), http.StatusConflict)
		viewer := env.UserToken("Наблюдатель", "viewer")
		requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, 1), nil, viewer), http.StatusForbidden)

		// The older twin stays stale; the plan cut from is not.
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", again.ID), nil).JSON(t, &got)
		require.True(t, got.Stale)
		require.NotEmpty(t, got.Why)
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil).JSON(t, &got)
		require.False(t, got.Stale, "%v", got.Why)
		require.Equal(t, 1, got.Cut)

		// Rebuilt, the stale twin gives way to a plan of what is left to cut.
		rj := runJob(t, env, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/rebuild", again.ID), nil))
		require.Equal(t, "done", rj.Status, "%+v", rj.Error)
		rebuilt := *rj.Plan
		require.Equal(t, len(parts)-len(sh.Parts), rebuilt.Parts, "the parts not cut yet")
		require.False(t, rebuilt.Stale)
		var left []launchedPart
		for _, pt := range parts {
			if !slices.ContainsFunc(sh.Parts, func(c cutSheetPart) bool { return c.PartID == pt.ID }) {
				left = append(left, pt)
			}
		}
		checkCutPlan(t, rebuilt, left)
		rebuiltEv := catalogEvents(t, env, "cutting_plan.created", "cutting_plans", rebuilt.ID)
		require.Len(t, rebuiltEv, 1)
		require.EqualValues(t, again.ID, rebuiltEv[0].Payload["replaces"])
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", again.ID), nil).JSON(t, &got)
		require.True(t, got.Stale)
		require.Contains(t, got.Why[0], "replaced")
		requireProblem(t, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/rebuild", again.ID), nil), http.StatusConflict)
		requireProblem(t, env.Do(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/1/cut", again.ID), nil, master), http.StatusConflict)
		// The rebuilt plan takes the offcuts of the cut sheet; the third plan below none of them.
		rebuiltOffcuts := 0
		for _, s := range rebuilt.SheetList {
			if s.OffcutID != nil {
				rebuiltOffcuts++
			}
		}
		require.Positive(t, rebuiltOffcuts, "the cut sheet's offcut is used by the rebuilt plan")

		// They are reserved: the next plan, of another wardrobe, does not take them again.
		_, ids2 := receive(t, env, line{"SHK-KUPE-1600", 1})
		po2 := launch(t, env, map[string]any{"items": ids2})
		parts2 := prodOrderParts(t, env, po2.ID)
		events := env.Count("events")
		stockEvents := len(catalogEventsOf(t, env, "stock.reserved")) + len(catalogEventsOf(t, env, "stock.released"))
		jobEvents := func() int {
			n := 0
			for _, typ := range []string{"job.queued", "job.started", "job.progressed", "job.done"} {
				n += len(catalogEventsOf(t, env, typ))
			}
			return n
		}
		jobsBefore := jobEvents()
		next := createCutPlan(t, env, po2.ID)
		checkCutPlan(t, next, parts2)
		for _, s := range next.SheetList {
			require.Nil(t, s.OffcutID)
		}
		booked := len(catalogEventsOf(t, env, "stock.reserved")) + len(catalogEventsOf(t, env, "stock.released")) - stockEvents
		require.Positive(t, booked, "its parts' needs follow its sheets")
		job := jobEvents() - jobsBefore
		require.Equal(t, 1+1+3+1, job, "its job queued, started, progressed at its start and after each of its two boards, done")
		require.Equal(t, events+1+int64(booked)+int64(job), env.Count("events"), "cutting_plan.created, the needs it changed and its job's steps, nothing else")
	})
}

// A part larger than every format of its board, and a kerf or trims that
// leave no usable sheet, fail the plan's job with the problem naming the
// part or the setting; no plan is stored.
func TestCuttingPlans_ErrCannotLayOut(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		_, ids := receive(t, env, line{"SHK-KUPE-1600", 1})
		po := launch(t, env, map[string]any{"items": ids})
		var doors []string // the sonoma doors, as fields
		for _, pt := range prodOrderParts(t, env, po.ID) {
			if pt.Board == "LDSP16-SONOMA" {
				doors = append(doors, fmt.Sprintf("prod_orders[0].parts[%d]", pt.ID))
			}
		}
		require.Len(t, doors, 2)
		// The sonoma board is now bought only in sheets too short for the doors, even turned.
		require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
			return tx.Exec(`UPDATE catalog_materials SET formats = '[{"length_mm":2000,"width_mm":1000}]' WHERE code = 'LDSP16-SONOMA'`).Error
		}))
		created := len(catalogEventsOf(t, env, "cutting_plan.created"))
		j := runJob(t, env, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID}}))
		require.Equal(t, "failed", j.Status, "only the layout finds it: the job fails")
		require.Equal(t, "invalid", j.Error.Code)
		var fields []string
		for _, e := range j.Error.Errors {
			fields = append(fields, e.Field)
		}
		require.ElementsMatch(t, doors, fields)
		require.Contains(t, j.Error.Errors[0].Message, "Дверь-купе")
		// Trims that eat the whole sheet.
		require.NoError(t, dbtest.Fixture(env.App.DB, func(tx *gorm.DB) error {
			return tx.Exec(`UPDATE catalog_materials SET formats = '[{"length_mm":2800,"width_mm":150}]', trim_l1_mm = 80, trim_l2_mm = 80 WHERE code = 'LDSP16-SONOMA'`).Error
		}))
		j = runJob(t, env, env.Admin(http.MethodPost, "/api/v1/cutting-plans", map[string]any{"prod_orders": []int64{po.ID}}))
		require.Equal(t, "failed", j.Status)
		require.Equal(t, "boards[LDSP16-SONOMA].formats[0]", j.Error.Errors[0].Field)
		require.Len(t, catalogEventsOf(t, env, "cutting_plan.created"), created, "no plan")
		require.Zero(t, env.Count("cutting_plans"))
		require.Zero(t, env.Count("cutting_sheets"))
	})
}

type boardNeed struct {
	Code     string
	Launched float64
	Qty      float64
	Sheets   *int
}

func boardNeeds(t *testing.T, env *apptest.Env, id int64) map[string]boardNeed {
	t.Helper()
	r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/materials/requirements?prod_orders=%d", id), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var rs struct{ Materials []boardNeed }
	r.JSON(t, &rs)
	out := map[string]boardNeed{}
	for _, m := range rs.Materials {
		out[m.Code] = m
	}
	return out
}

func sheetsJSON(t *testing.T, p cutPlan) string {
	t.Helper()
	for i := range p.SheetList {
		p.SheetList[i].CutAt = nil
	}
	b, err := json.Marshal(p.SheetList)
	require.NoError(t, err)
	return string(b)
}

// wardrobesPlan launches n wardrobes and plans their cutting.
func wardrobesPlan(t *testing.T, env *apptest.Env, n int) cutPlan {
	t.Helper()
	_, ids := receive(t, env, line{"SHK-KUPE-1600", n})
	po := launch(t, env, map[string]any{"items": ids})
	return createCutPlan(t, env, po.ID)
}

// A cutting plan's labels come sheet by sheet, each sheet's parts in the
// order they come off the saw and then its offcuts (O<plan>-<sheet>-<k>),
// every barcode read back by zbar; one sheet's alone with sheet=n; ZPL as
// for a production order's.
func TestCuttingPlans_Labels(t *testing.T) {
	t.Parallel()
	scantest.Tools(t)
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		p := wardrobesPlan(t, env, 1)
		want := map[int][][]string{} // per sheet, one label a page
		var all [][]string
		offcuts := 0
		for _, sh := range p.SheetList {
			parts := slices.Clone(sh.Parts)
			slices.SortFunc(parts, func(a, b cutSheetPart) int { return a.CutOrder - b.CutOrder })
			for _, pt := range parts {
				want[sh.N] = append(want[sh.N], []string{pt.Code})
			}
			for k := range sh.Offcuts {
				want[sh.N] = append(want[sh.N], []string{fmt.Sprintf("O%d-%d-%d", p.ID, sh.N, k+1)})
				offcuts++
			}
			all = append(all, want[sh.N]...)
		}
		require.Positive(t, offcuts, "the wardrobe's sheets leave offcuts")
		r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels", p.ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
		require.Equal(t, all, scantest.DecodePDF(t, r.Body, 203), "sheet by sheet, in the saw's order, then the offcuts")
		n := p.SheetList[len(p.SheetList)-1].N
		r = env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=%d", p.ID, n), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, want[n], scantest.DecodePDF(t, r.Body, 300))
		r = env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=1", p.ID), nil, apptest.AdminToken, "Accept", "application/zpl")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, len(want[1]), strings.Count(string(r.Body), "^XA"))
		// the same as a job's document (Prefer: respond-async)
		j := runJob(t, env, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=1", p.ID), nil, apptest.AdminToken,
			"Accept", "application/zpl", "Prefer", "respond-async"))
		require.Equal(t, "done", j.Status, "%+v", j.Error)
		require.EqualValues(t, len(want[1]), j.Result["labels"])
		doc := env.Admin(http.MethodGet, j.ResultURL, nil)
		require.Equal(t, http.StatusOK, doc.Status, "%s", doc.Body)
		require.Equal(t, string(r.Body), string(doc.Body))
		require.Equal(t, fmt.Sprintf(`inline; filename="cutting-plan-%d-sheet-1-labels.zpl"`, p.ID), doc.Header.Get("Content-Disposition"))
		requireProblem(t, env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=%d", p.ID, len(p.SheetList)+1), nil, apptest.AdminToken,
			"Prefer", "respond-async"), http.StatusUnprocessableEntity, "sheet")
		requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=%d", p.ID, len(p.SheetList)+1), nil), http.StatusUnprocessableEntity, "sheet")
		requireProblem(t, env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/labels?sheet=0", p.ID), nil), http.StatusUnprocessableEntity, "sheet")
		requireProblem(t, env.Admin(http.MethodGet, "/api/v1/cutting-plans/99999/labels", nil), http.StatusNotFound)
	})
}

// The plan on paper: one PDF, for each board a summary page and then a
// page per sheet, each drawing with its fences in cut order; the sheets'
// SVG well-formed XML. SHEETS_DIR, when set, keeps the documents for a
// look.
func TestCuttingPlans_OnPaper(t *testing.T) {
	t.Parallel()
	scantest.Tools(t)
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		p := wardrobesPlan(t, env, 2)
		dir := os.Getenv("SHEETS_DIR")
		r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d", p.ID), nil, apptest.AdminToken, "Accept", "application/pdf")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, "application/pdf", r.Header.Get("Content-Type"))
		if dir != "" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("plan-%s.pdf", env.Dialect)), r.Body, 0o600))
		}
		pages := scantest.Text(t, r.Body)
		require.Len(t, pages, len(p.Boards)+p.Sheets, "a summary page a board, a page a sheet")
		i := 0
		for _, b := range p.Boards {
			require.Contains(t, pages[i], fmt.Sprintf("Карта раскроя №%d: %s", p.ID, b.Board), "the board's summary")
			i++
			for _, sh := range p.SheetList {
				if sh.Board != b.Board {
					continue
				}
				require.Contains(t, pages[i], fmt.Sprintf("лист %d из %d", sh.N, p.Sheets), "its sheets, in order")
				require.Contains(t, pages[i], "Упор, мм, по порядку резов")
				if len(sh.Cuts) > 0 {
					require.Contains(t, pages[i], "1 ", "the first cut's fence")
				}
				i++
			}
		}
		for _, sh := range p.SheetList {
			r := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d", p.ID, sh.N), nil, apptest.AdminToken, "Accept", "image/svg+xml")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			_, err := svgtest.Parse(r.Body)
			require.NoError(t, err)
			if dir != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("sheet-%s-%d.svg", env.Dialect, sh.N)), r.Body, 0o600))
			}
		}
	})
}
