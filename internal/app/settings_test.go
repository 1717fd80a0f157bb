package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The cutting settings of the configuration reach the cutting plans'
// service: CUTTING_EFFORT among them, which only the plans' speed shows.
func TestApp_CuttingSettingsReachThePlans(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, database.SQLite, func(c *config.Config) {
		c.CuttingEffort, c.CuttingKerfMM, c.CuttingStages = 54_321, 3.5, 2
	})
	set := env.App.CutPlan.Settings()
	require.Equal(t, int64(54_321), set.EffortPerPart)
	require.InDelta(t, 3.5, set.KerfMM, 0)
	require.Equal(t, 2, set.Stages)
}
