package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tsekh/tsekh/internal/cutting"
)

const benchCuttingSummary = `Measures the cutting optimiser against a plain best-area-fit guillotine
heuristic, in this process and without a database: on the ten classes of
two-dimensional bin packing of Berkey & Wang (I–VI) and Martello & Vigo
(VII–X) (zero kerf, turning allowed, any number of stages): the 500 published
instances (--set standard, beside the best published method's sheets) and
more generated from the classes' rules with a fixed seed (--set generated);
and on a furniture factory's week (2800 × 2070 mm sheets, 4.4 mm kerf, 10 mm
trims, grain, three stages). Prints a line per class on stderr and one JSON
object on stdout: per set and class, sheets used by each, the lower bound
(the largest of the parts' area, the parts too large to share a sheet,
Martello & Vigo's L2 and the bound by dual feasible functions) and the CPU
time per instance.`

func benchCutting(args []string, stdout, stderr io.Writer) error {
	fs := flags("bench cutting [flags]", benchCuttingSummary, stderr)
	set := fs.String("set", "standard,generated", "sets of instances, comma-separated: standard (the published ones), generated")
	sizes := fs.String("sizes", "20,40,60,80,100", "items per instance, comma-separated")
	per := fs.Int("instances", 10, "instances per class and size (the standard set has 10)")
	classes := fs.String("classes", strings.Join(cutting.ClassNames, ","), "classes, comma-separated (I … X)")
	furniture := fs.Int("furniture", 2000, "parts of the furniture week (0: leave it out)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	o := cutting.BenchOptions{PerSize: *per, Furniture: *furniture, Classes: []int{},
		Progress: func(s string) { _, _ = fmt.Fprintln(stderr, s) }}
	for _, s := range strings.Split(*set, ",") {
		switch s = strings.TrimSpace(s); s {
		case cutting.SetStandard, cutting.SetGenerated:
			o.Sets = append(o.Sets, s)
		case "":
		default:
			return fmt.Errorf("--set: no set %q (they are %s and %s)", s, cutting.SetStandard, cutting.SetGenerated)
		}
	}
	if o.Sets == nil {
		o.Sets = []string{}
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive whole number", s)
		}
		o.Sizes = append(o.Sizes, n)
	}
	for _, c := range strings.Split(*classes, ",") {
		c = strings.ToUpper(strings.TrimSpace(c))
		found := false
		for i, name := range cutting.ClassNames {
			if name == c {
				o.Classes = append(o.Classes, i)
				found = true
			}
		}
		if !found && c != "" {
			return fmt.Errorf("--classes: no class %q (they are %s)", c, strings.Join(cutting.ClassNames, ", "))
		}
	}
	res, err := cutting.RunBench(o)
	if err != nil {
		return err
	}
	for _, s := range res.Sets {
		if len(s.Classes) == 0 {
			continue
		}
		published := ""
		if s.Published > 0 {
			published = fmt.Sprintf(" (GDRR %d)", s.Published)
		}
		_, _ = fmt.Fprintf(stderr, "%s, all classes: %d sheets%s, baseline %d, lower bound %d: %.1f %% fewer sheets than the baseline, %.0f ms of CPU a instance\n",
			s.Name, s.Sheets, published, s.BaselineSheets, s.LowerBound, 100*s.Saving, s.CPUMsMean)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
