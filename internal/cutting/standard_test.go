package cutting

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The standard set's rules give the published files byte for byte: each
// class written as the authors' generator writes it (Fortran's fixed
// columns, CRLF lines) has the SHA-256 of the published Class_NN.2bp
// (testdata/standard.sha256, from the ESICUP and OR-Library files).
func TestStandardItems_AreThePublishedFiles(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/standard.sha256")
	require.NoError(t, err)
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		require.Len(t, fields, 2)
		want[fields[1]] = fields[0]
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, len(ClassNames))
	for c := range ClassNames {
		var b bytes.Buffer
		for _, n := range StandardSizes {
			for k := 1; k <= StandardPerSize; k++ {
				bin, h, w := StandardItems(c, n, k)
				fmt.Fprintf(&b, "%5d        PROBLEM CLASS\r\n", c+1)
				fmt.Fprintf(&b, "%5d        N. OF ITEMS\r\n", n)
				fmt.Fprintf(&b, "%5d%5d   RELATIVE AND ABSOLUTE N. OF INSTANCE\r\n", k, c*50+(n-20)/2+k)
				fmt.Fprintf(&b, "%5d%5d   HBIN,WBIN\r\n", bin, bin)
				for j := range h {
					fmt.Fprintf(&b, "%5d%5d", h[j], w[j])
					if j == 0 {
						b.WriteString("   H(I),W(I),I=1,...,N")
					}
					b.WriteString("\r\n")
				}
				b.WriteString("\r\n")
			}
		}
		sum := sha256.Sum256(b.Bytes())
		name := fmt.Sprintf("Class_%02d.2bp", c+1)
		require.Equal(t, want[name], hex.EncodeToString(sum[:]), "%s as the rules write it", name)
	}
}

// BenchmarkOptimise_Standard lays out the 50 standard instances of each
// class with the default search, as tsekh cut does, and reports the sheets
// they take beside GDRR's (the best published method's) on the same
// instances: `go test -run XXX -bench Standard ./internal/cutting` (about
// eight minutes). tsekh bench cutting gives the same figures with the CPU
// time of each instance.
func BenchmarkOptimise_Standard(b *testing.B) {
	for c, name := range ClassNames {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				sheets := 0
				for _, n := range StandardSizes {
					for k := 1; k <= StandardPerSize; k++ {
						plan, err := Optimise(StandardInstance(c, n, k))
						if err != nil {
							b.Fatal(err)
						}
						sheets += plan.Totals.Sheets
					}
				}
				b.ReportMetric(float64(sheets), "sheets")
				b.ReportMetric(float64(GDRRSheets[c]), "gdrr-sheets")
			}
		})
	}
}
