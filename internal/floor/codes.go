package floor

import (
	"strconv"
	"strings"

	"github.com/tsekh/tsekh/internal/platform/input"
)

// A re-cut's code is the scrapped part's with a generation (package plan
// gives parts and units theirs at launch):
//
//	re-cut    <the part's code>.<g>       P12-5.1 (g: its generation of re-cuts)

// recutCode is the code of the part cut again in place of the part with the
// code given: P12-5 → P12-5.1, P12-5.1 → P12-5.2.
func recutCode(code string) string {
	base, gen, ok := strings.Cut(code, ".")
	n, err := strconv.Atoi(gen)
	if !ok || err != nil {
		return code + ".1"
	}
	return base + "." + strconv.Itoa(n+1)
}

// normalCode is a code as it is stored, in capitals: scanners and people may
// send it in lower case, fullwidth or with blanks around it
// (input.NormalCode reads it as every code is read).
func normalCode(s string) string { return strings.ToUpper(input.NormalCode(s)) }
