package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/platform/config"
)

// The shop floor reads its scrap reasons in Russian: each reason has the
// code a scrap names and a label, by default and as FLOOR_SCRAP_REASONS
// sets them.
func TestFloor_ScrapReasonsLabelled(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		var got struct{ Reasons []floor.ScrapReason }
		env.Admin(http.MethodGet, "/api/v1/floor/scrap-reasons", nil).JSON(t, &got)
		require.Len(t, got.Reasons, 7)
		require.Contains(t, got.Reasons, floor.ScrapReason{Code: "drilling_error", Label: "Ошибка присадки"})
		for _, r := range got.Reasons {
			require.NotEqual(t, r.Code, r.Label, "every default has a label of its own")
		}
	})
}

// FLOOR_SCRAP_REASONS gives the codes and their labels; a scrap naming
// another code is refused with the reasons and their labels.
func TestFloor_ScrapReasonsConfigured(t *testing.T) {
	t.Parallel()
	eachWith(t, func(c *config.Config) {
		c.FloorScrapReasons = []string{"chipped=Скол", "burnt=Прижог", "other"}
	}, func(t *testing.T, env *apptest.Env) {
		var got struct{ Reasons []floor.ScrapReason }
		env.Admin(http.MethodGet, "/api/v1/floor/scrap-reasons", nil).JSON(t, &got)
		require.Equal(t, []floor.ScrapReason{{Code: "chipped", Label: "Скол"}, {Code: "burnt", Label: "Прижог"}, {Code: "other", Label: "other"}}, got.Reasons)
		p := requireProblem(t, env.Admin(http.MethodPost, "/api/v1/floor/scrap", map[string]any{"code": "P1-1", "reason": "drilling_error"}),
			http.StatusUnprocessableEntity, "reason")
		require.Contains(t, p.Errors[0].Message, "burnt (Прижог)", "the refusal names the reasons with their labels")
	})
}
