package cutting

import "slices"

// Baseline lays the parts out the plain way, for comparison only: the parts
// by decreasing area, each into the free rectangle of any open sheet that
// it fits best by area, turned when its grain allows and the fit is better,
// the rectangle split across its shorter leftover side first; a new sheet
// when none takes it. It keeps the kerf, the trims and the stages.
func Baseline(p Problem) (Plan, error) {
	e, err := newEngine(&p)
	if err != nil {
		return Plan{}, err
	}
	order := make([]int, len(e.shapes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if e.shapes[a].area != e.shapes[b].area {
			if e.shapes[a].area > e.shapes[b].area {
				return -1
			}
			return 1
		}
		return 0
	})
	sol := e.packItems(e.expand(order), fitBestArea, splitShorterLeftover, false)
	if sol == nil {
		return Plan{}, errTooFewSheets()
	}
	return e.plan(&p, sol), nil
}
