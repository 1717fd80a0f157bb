package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
)

// A part scrapped after its cutting plan was made is left alone when its
// sheet is reported cut: the answer is 200 (not a 404 naming the part), the
// scrapped part stays scrapped and uncut, its re-cut waits for the saw, and
// the sheet's other parts go through the cutting step.
func TestCuttingPlans_SheetWithAScrappedPart(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		p := wardrobesPlan(t, env, 1)
		sheet := -1
		for i, sh := range p.SheetList {
			if len(sh.Parts) >= 3 {
				sheet = i
				break
			}
		}
		require.GreaterOrEqual(t, sheet, 0, "a sheet of three parts or more")
		sh := p.SheetList[sheet]
		scrapped := sh.Parts[1]
		r := env.Admin(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": scrapped.Code, "step": 1, "reason": "material_defect"})
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		r = env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/cutting-plans/%d/sheets/%d/cut", p.ID, sh.N), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

		parts := map[int64]floorPart{}
		var recut *floorPart
		for _, pt := range partsOf(t, env, scrapped.ProdOrderID, "") {
			parts[pt.ID] = pt
			if pt.RecutOf != nil && *pt.RecutOf == scrapped.PartID {
				recut = &pt
			}
		}
		gone := parts[scrapped.PartID]
		require.Equal(t, "scrapped", gone.State)
		for _, st := range gone.Steps {
			require.NotEqual(t, "done", st.Status, "the scrapped part is not cut: %+v", gone.Steps)
		}
		require.NotNil(t, recut, "its re-cut")
		require.Equal(t, "pending", recut.Steps[0].Status, "the re-cut waits for the saw")
		for _, sp := range sh.Parts {
			if sp.PartID == scrapped.PartID {
				continue
			}
			require.Equal(t, "done", parts[sp.PartID].Steps[0].Status, "part %s of the sheet is cut", sp.Code)
		}
		progress := eventsOf(t, env, "prod_order.progress_reported", scrapped.ProdOrderID)
		require.Len(t, progress, 1)
		require.EqualValues(t, len(sh.Parts)-1, progress[0].Payload["qty"], "the sheet's parts but the scrapped one")
	})
}
