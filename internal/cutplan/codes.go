package cutplan

import "fmt"

// OffcutCode is the code of the k-th offcut (from 1, in the order of the
// sheet's Offcuts) that sheet n of plan planID leaves: O<plan>-<sheet>-<k>.
// Its label carries it as a barcode, and the offcut keeps it in stock.
func OffcutCode(planID int64, sheet, k int) string {
	return fmt.Sprintf("O%d-%d-%d", planID, sheet, k)
}
