package cutplan

import (
	"testing"
	"time"
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
