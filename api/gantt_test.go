package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/render/svgtest"
)

// parseSVGNodes reads the document, failing on any error.
func parseSVGNodes(t *testing.T, body []byte) []*svgtest.Node {
	t.Helper()
	nodes, err := svgtest.Parse(body)
	require.NoError(t, err, "the SVG is not well-formed XML")
	return nodes
}

func TestSchedule_GanttMarks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		monday := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
		env.App.Plan.SetToday(func() time.Time { return monday })
		order := func(sku string, qty int, due string) []int64 {
			body := map[string]any{"customer": map[string]any{"name": "ООО «Мебель & Дом»"}, "items": []line{{sku, qty}}}
			if due != "" {
				body["due_date"] = due
			}
			_, ids := receiveOrder(t, env, body)
			return ids
		}
		// Twenty wardrobes due on Tuesday cannot make it; one nightstand due
		// on Wednesday is made on that day, in time; the sofa has no due date.
		late := launch(t, env, map[string]any{"items": order("SHK-RASP-1200", 20, "2026-11-17")})
		small := launch(t, env, map[string]any{"items": order("TMB-PRIK-450", 1, "2026-11-18")})
		sofa := launch(t, env, map[string]any{"items": order("DIV-CHESTER-3", 1, "")})
		require.Greater(t, late.ETA, "2026-11-17")
		require.Equal(t, "2026-11-18", small.ETA, "made on the day it is due")
		r := env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/production-orders/%d/operations/%d/start", late.ID, late.Operations[0].ID), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		// The cutting centre loses most of its capacity: overloaded days.
		cut := late.Operations[0].WorkCenterID
		r = env.Admin(http.MethodPut, fmt.Sprintf("/api/v1/work-centers/%d", cut), map[string]any{
			"code": "CUT", "name": "Раскрой & кромка <ЧПУ>", "capacity_min_per_day": 240})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		// Two days before today to two weeks later: 14 days of 64 px after the 260 px of the lanes' names.
		const path = "/api/v1/plan/schedule?from=2026-11-14&to=2026-11-27"
		const left, dayW = 260.0, 64.0
		var v struct {
			Today       string
			WorkCenters []struct {
				ID   int64
				Code string
				Days []struct {
					Date     string
					Overload bool
				}
				Orders []struct {
					ProdOrderID   int64    `json:"prod_order_id"`
					SKUs          []string `json:"skus"`
					SalesOrderIDs []int64  `json:"sales_order_ids"`
					DueDate       *string  `json:"due_date"`
					ETA           string   `json:"eta"`
					Late          bool
				}
			} `json:"work_centers"`
		}
		env.Admin(http.MethodGet, path, nil).JSON(t, &v)
		require.Equal(t, "2026-11-16", v.Today)
		overloaded := map[string]bool{} // "centre id/date"
		for _, wc := range v.WorkCenters {
			for _, d := range wc.Days {
				if d.Overload {
					overloaded[fmt.Sprintf("%d/%s", wc.ID, d.Date)] = true
				}
			}
			for _, o := range wc.Orders {
				require.NotEmpty(t, o.SalesOrderIDs)
				switch o.ProdOrderID {
				case late.ID:
					require.Equal(t, []string{"SHK-RASP-1200"}, o.SKUs)
					require.Equal(t, "2026-11-17", *o.DueDate)
					require.Equal(t, late.ETA, o.ETA)
					require.True(t, o.Late)
				case small.ID:
					require.Equal(t, []string{"TMB-PRIK-450"}, o.SKUs)
					require.Equal(t, "2026-11-18", *o.DueDate)
					require.False(t, o.Late)
				case sofa.ID:
					require.Nil(t, o.DueDate)
					require.False(t, o.Late)
				}
			}
		}
		require.NotEmpty(t, overloaded)

		r = env.Do(http.MethodGet, path, nil, apptest.AdminToken, "Accept", "image/svg+xml")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		nodes := parseSVGNodes(t, r.Body)
		byClass := func(class string) []*svgtest.Node { return svgtest.ByClass(nodes, class) }
		num := func(s string) float64 {
			f, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			return f
		}

		t.Run("BarsSpeakRussian", func(t *testing.T) {
			status := map[int64]string{late.ID: "в работе", small.ID: "запущен", sofa.ID: "запущен"}
			sku := map[int64]string{late.ID: "SHK-RASP-1200", small.ID: "TMB-PRIK-450", sofa.ID: "DIV-CHESTER-3"}
			orders := byClass("order")
			require.NotEmpty(t, orders)
			for _, g := range orders {
				id, err := strconv.ParseInt(g.Attr["data-prod-order-id"], 10, 64)
				require.NoError(t, err)
				require.Contains(t, g.Title, fmt.Sprintf("ПЗ №%d — %s", id, status[id]), "every bar has a tooltip")
				require.Contains(t, g.Title, "Артикулы: "+sku[id])
			}
			labels := map[string][]string{} // prod order id: its labels
			for _, l := range byClass("label") {
				g := l.Parent
				require.Equal(t, "order-label", g.Attr["class"])
				id := g.Attr["data-prod-order-id"]
				require.Contains(t, g.Title, "ПЗ №"+id, "a label has its bar's tooltip")
				labels[id] = append(labels[id], l.Text)
			}
			require.Contains(t, labels[fmt.Sprint(late.ID)], fmt.Sprintf("ПЗ №%d · SHK-RASP-1200", late.ID), "the wardrobes' long bars are labelled with their SKU")
			require.Contains(t, labels[fmt.Sprint(small.ID)], fmt.Sprintf("ПЗ №%d · TMB-PRIK-450", small.ID), "the nightstand's short bars are labelled beside them")
			english := regexp.MustCompile(`\b(launched|in_progress|done|cancelled|pending)\b`)
			for _, n := range nodes {
				require.False(t, english.MatchString(n.Text), "%s: %q", n.Name, n.Text)
			}
		})

		t.Run("OverloadColourOnlyOnOverloadedDays", func(t *testing.T) {
			over := byClass("overload")
			require.Len(t, over, len(overloaded))
			color := strings.ToLower(over[0].Attr["fill"])
			for _, n := range nodes {
				if !slices.Contains(n.Colors(), color) {
					continue
				}
				if c := n.Attr["class"]; c != "overload" && c != "swatch" {
					require.Failf(t, "the overload colour on something else", "%s %v %v", n.Name, n.Classes, n.Attr)
				}
			}
			// Each overload rectangle is on a day flagged overloaded, in its own lane.
			lane := ""
			for _, n := range nodes {
				if n.Attr["class"] == "lane" {
					lane = n.Attr["data-work-center-id"]
				}
				if n.Attr["class"] == "overload" {
					require.True(t, overloaded[lane+"/"+n.Attr["data-date"]], "%s/%s", lane, n.Attr["data-date"])
				}
			}
		})

		t.Run("LegendMatchesTheMarks", func(t *testing.T) {
			legend, marks := map[string]bool{}, map[string]bool{}
			for _, n := range nodes {
				switch {
				case n.In("swatch"):
					for _, c := range n.Colors() {
						legend[c] = true
					}
				case n.In("bar") || n.In("overload") || n.In("day-off") || n.In("due") || n.In("today"):
					for _, c := range n.Colors() {
						marks[c] = true
					}
				}
			}
			require.NotEmpty(t, legend)
			require.Equal(t, marks, legend, "the legend's colours are the colours of the marks")
			for _, b := range byClass("bar") {
				require.True(t, legend[strings.ToLower(b.Attr["fill"])], "bar colour %s is in the legend", b.Attr["fill"])
			}
		})

		t.Run("TodayLine", func(t *testing.T) {
			today := byClass("today")
			require.Len(t, today, 1)
			require.Equal(t, "2026-11-16", today[0].Attr["data-date"])
			require.Contains(t, today[0].Title, "Сегодня, 16.11")
			var line *svgtest.Node
			for _, n := range nodes {
				if n.In("today") && n.Name == "line" {
					line = n
				}
			}
			require.NotNil(t, line)
			require.InDelta(t, left+2*dayW, num(line.Attr["x1"]), 0.05, "at the start of the third day")
			require.Equal(t, line.Attr["x1"], line.Attr["x2"])
		})

		t.Run("DueDates", func(t *testing.T) {
			due := map[string]*svgtest.Node{}
			for _, g := range byClass("due") {
				due[g.Attr["data-prod-order-id"]] = g
			}
			require.Len(t, due, 2, "the wardrobes and the nightstand; the sofa has no due date")
			lineOf := func(g *svgtest.Node) *svgtest.Node {
				i := slices.Index(nodes, g)
				for _, n := range nodes[i+1:] {
					if n.Name == "line" {
						return n
					}
				}
				return nil
			}
			w, n := due[fmt.Sprint(late.ID)], due[fmt.Sprint(small.ID)]
			require.NotNil(t, w)
			require.NotNil(t, n)
			// At the end of the due day: 17.11 is the fourth day, 18.11 the fifth.
			require.InDelta(t, left+4*dayW, num(lineOf(w).Attr["x1"]), 0.05)
			require.InDelta(t, left+5*dayW, num(lineOf(n).Attr["x1"]), 0.05)
			require.Contains(t, w.Title, "Срок ПЗ №")
			require.Contains(t, w.Title, "позже срока")
			require.Contains(t, n.Title, "в срок")
			// The late order's marker is in the late colour, which outlines its
			// bars, and no one else's; the legend names it.
			lateColor := strings.ToLower(lineOf(w).Attr["stroke"])
			require.NotEqual(t, lateColor, strings.ToLower(lineOf(n).Attr["stroke"]))
			for _, b := range byClass("bar") {
				if b.Attr["data-prod-order-id"] == fmt.Sprint(late.ID) {
					require.Equal(t, lateColor, strings.ToLower(b.Attr["stroke"]))
				} else {
					require.NotEqual(t, lateColor, strings.ToLower(b.Attr["stroke"]))
				}
			}
			named := ""
			for _, n := range nodes {
				if n.In("swatch") && slices.Contains(n.Colors(), lateColor) {
					for _, m := range nodes {
						if m.Parent == n.Parent && m.Name == "text" {
							named += m.Text + ";"
						}
					}
				}
			}
			require.Contains(t, named, "не успевает")
			require.Contains(t, named, "позже срока")
		})
	})
}
