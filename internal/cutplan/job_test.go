package cutplan

import (
	"testing"
	"time"

	"github.com/tsekh/tsekh/internal/cutting"
	"github.com/tsekh/tsekh/internal/floor"
)

// The optimiser's budget is the plan's, however many boards it has: each
// board gets what is left, shared among the boards still to lay out, so a
// plan whose boards each take all they are given ends within its budget
// (give or take the least a board is given).
func TestBoardBudget_SharedByThePlan(t *testing.T) {
	for _, boards := range []int{1, 2, 6, 40} {
		budget := 10 * time.Second
		spent := time.Duration(0)
		for i := range boards {
			spent += boardBudget(budget, spent, boards-i)
		}
		if limit := budget + time.Duration(boards)*minBoardBudget; spent > limit {
			t.Fatalf("%d boards: %s spent of a %s budget", boards, spent, budget)
		}
		if boards <= 6 && spent < budget-time.Millisecond {
			t.Fatalf("%d boards: only %s of a %s budget given", boards, spent, budget)
		}
	}
	if got := boardBudget(10*time.Second, 0, 5); got != 2*time.Second {
		t.Fatalf("the first of five boards gets %s, not a fifth", got)
	}
}

// The optimiser's problem for a board carries the plan's settings, the
// effort per part (CUTTING_EFFORT) among them, times the board's parts.
func TestProblem_CarriesTheSettings(t *testing.T) {
	set := Settings{KerfMM: 3.2, Stages: 3, MinOffcutMM: 150, OffcutWeight: 0.5, TimeBudget: time.Second, EffortPerPart: 12_345}
	s := &Service{set: set}
	g := boardGroup{parts: []floor.SawPart{{ID: 1, LengthMM: 700, WidthMM: 400}, {ID: 2, LengthMM: 500, WidthMM: 300}, {ID: 3, LengthMM: 300, WidthMM: 200}}}
	pr := s.problem(g, nil, 2*time.Second)
	if pr.Effort != 3*12_345 {
		t.Fatalf("effort %d, want 3 parts × 12,345", pr.Effort)
	}
	if pr.Kerf != 3.2 || pr.Stages != 3 || pr.MinOffcut.Length != 150 || pr.OffcutWeight != 0.5 || pr.TimeLimit != 2*time.Second || len(pr.Parts) != 3 {
		t.Fatalf("the problem does not carry the settings: %+v", pr)
	}
	s.set.EffortPerPart = cutting.DefaultEffortPerPart
	if got := s.problem(g, nil, time.Second).Effort; got != cutting.Effort(3, cutting.DefaultEffortPerPart) {
		t.Fatalf("the default effort: %d", got)
	}
}
