package api_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

type scheduleView struct {
	From        string
	To          string
	WorkCenters []struct {
		ID                int64
		Code              string
		CapacityMinPerDay int `json:"capacity_min_per_day"`
		Days              []struct {
			Date        string
			Working     bool
			CapacityMin float64 `json:"capacity_min"`
			LoadMin     float64 `json:"load_min"`
			Overload    bool
		}
		Orders []struct {
			ProdOrderID int64  `json:"prod_order_id"`
			StartDay    string `json:"start_day"`
			EndDay      string `json:"end_day"`
			Operations  int
			Minutes     float64
		}
	} `json:"work_centers"`
}

func TestSchedule_JSONAndSVG(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetToday(func() time.Time { return monday })
		_, kupe := receive(t, env, line{"SHK-KUPE-1600", 1})
		a := launch(t, env, map[string]any{"items": kupe})
		_, sofa := receive(t, env, line{"DIV-CHESTER-3", 2})
		b := launch(t, env, map[string]any{"items": sofa})
		_, big := receive(t, env, line{"SHK-RASP-1200", 20})
		c := launch(t, env, map[string]any{"items": big})

		t.Run("JSON", func(t *testing.T) {
			r := env.Admin(http.MethodGet, "/api/v1/plan/schedule", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.Contains(t, r.Header.Get("Content-Type"), "application/json")
			var v scheduleView
			r.JSON(t, &v)
			require.Equal(t, "2026-11-16", v.From)
			require.Equal(t, "2026-11-29", v.To)
			require.Len(t, v.WorkCenters, 7, "every demo work centre")
			planned := map[int64]float64{}
			for _, o := range []prodOrder{a, b, c} {
				for _, op := range o.Operations {
					planned[op.WorkCenterID] += op.Minutes
				}
			}
			for _, wc := range v.WorkCenters {
				require.Len(t, wc.Days, 14)
				var load, minutes float64
				for _, d := range wc.Days {
					wd := mustDay(t, d.Date).Weekday()
					weekend := wd == time.Saturday || wd == time.Sunday
					require.Equal(t, !weekend, d.Working, d.Date)
					require.False(t, d.Overload, "%s %s", wc.Code, d.Date)
					require.LessOrEqual(t, d.LoadMin, d.CapacityMin)
					load += d.LoadMin
				}
				for _, o := range wc.Orders {
					minutes += o.Minutes
					require.LessOrEqual(t, o.StartDay, o.EndDay)
				}
				// Every planned minute is in the two weeks, on its own centre.
				require.InDelta(t, planned[wc.ID], load, 0.01, wc.Code)
				require.InDelta(t, planned[wc.ID], minutes, 0.01, wc.Code)
			}
			cut := v.WorkCenters[0]
			require.Equal(t, "CUT", cut.Code)
			require.Len(t, cut.Orders, 2, "the kupe and the wardrobes are cut; the sofa is not")
			require.Equal(t, a.ID, cut.Orders[0].ProdOrderID)
			require.Equal(t, 13, cut.Orders[0].Operations)
		})

		t.Run("Range", func(t *testing.T) {
			var v scheduleView
			env.Admin(http.MethodGet, "/api/v1/plan/schedule?from=2026-11-20&to=2026-11-23", nil).JSON(t, &v)
			require.Len(t, v.WorkCenters[0].Days, 4)
			env.Admin(http.MethodGet, "/api/v1/plan/schedule?from=2027-01-01&to=2027-01-31", nil).JSON(t, &v)
			for _, wc := range v.WorkCenters {
				require.Empty(t, wc.Orders)
			}
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/schedule?from=2026-11-20&to=2026-11-19", nil), http.StatusUnprocessableEntity, "to")
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/schedule?from=2026-01-01&to=2026-12-31", nil), http.StatusUnprocessableEntity, "to")
			requireProblem(t, env.Admin(http.MethodGet, "/api/v1/plan/schedule?from=16.11.2026&to=x", nil), http.StatusUnprocessableEntity, "from", "to")
			requireProblem(t, env.Do(http.MethodGet, "/api/v1/plan/schedule", nil, ""), http.StatusUnauthorized)
		})

		t.Run("SVG", func(t *testing.T) {
			r := env.Admin(http.MethodGet, "/api/v1/plan/schedule", nil)
			var v scheduleView
			r.JSON(t, &v)
			r = env.Do(http.MethodGet, "/api/v1/plan/schedule", nil, apptest.AdminToken, "Accept", "image/svg+xml")
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.True(t, strings.HasPrefix(r.Header.Get("Content-Type"), "image/svg+xml"), r.Header.Get("Content-Type"))
			svg := parseSVG(t, r.Body)
			require.Equal(t, "svg", svg.root)
			require.Len(t, svg.lanes, len(v.WorkCenters), "one lane per work centre")
			for i, wc := range v.WorkCenters {
				require.Equal(t, fmt.Sprint(wc.ID), svg.lanes[i])
			}
			require.Subset(t, svg.bars, []string{fmt.Sprint(a.ID), fmt.Sprint(b.ID), fmt.Sprint(c.ID)})
			require.Zero(t, svg.overloads)
			require.Contains(t, string(r.Body), "16.11")
		})

		t.Run("Overload", func(t *testing.T) {
			// Halve the cutting centre's capacity: what was planned no longer fits.
			var wc struct {
				ID                int64
				Code, Name        string
				CapacityMinPerDay int `json:"capacity_min_per_day"`
			}
			env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/work-centers/%d", c.Operations[0].WorkCenterID), nil).JSON(t, &wc)
			r := env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", wc.ID), map[string]any{
				"code": wc.Code, "name": wc.Name, "capacity_min_per_day": wc.CapacityMinPerDay / 4})
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var v scheduleView
			env.Admin(http.MethodGet, "/api/v1/plan/schedule", nil).JSON(t, &v)
			over := 0
			for _, d := range v.WorkCenters[0].Days {
				if d.Overload {
					over++
					require.Greater(t, d.LoadMin, d.CapacityMin)
				}
			}
			require.Positive(t, over)
			r = env.Do(http.MethodGet, "/api/v1/plan/schedule", nil, apptest.AdminToken, "Accept", "image/svg+xml")
			require.Equal(t, over, parseSVG(t, r.Body).overloads)
		})
	})
}

type svgSummary struct {
	root      string
	lanes     []string // data-work-center-id of each lane, in order
	bars      []string // data-prod-order-id of each bar
	overloads int
}

// parseSVG reads the document with an XML decoder, failing on any error.
func parseSVG(t *testing.T, body []byte) svgSummary {
	t.Helper()
	var s svgSummary
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed XML")
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if s.root == "" {
			s.root = el.Name.Local
			require.Equal(t, "http://www.w3.org/2000/svg", el.Name.Space)
		}
		attr := func(name string) string {
			for _, a := range el.Attr {
				if a.Name.Local == name {
					return a.Value
				}
			}
			return ""
		}
		switch {
		case el.Name.Local == "g" && attr("class") == "lane":
			s.lanes = append(s.lanes, attr("data-work-center-id"))
		case el.Name.Local == "rect" && attr("class") == "bar":
			s.bars = append(s.bars, attr("data-prod-order-id"))
		case el.Name.Local == "rect" && attr("class") == "overload":
			s.overloads++
		}
	}
	return s
}
