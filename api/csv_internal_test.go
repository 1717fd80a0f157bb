package api

import (
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/page"
)

// heapSampler is a response that throws the body away and notes, every
// sampleEvery writes, the live heap (after a collection): the most memory an
// export held while it wrote.
type heapSampler struct {
	header http.Header
	writes int
	peak   uint64
}

const sampleEvery = 200

func (h *heapSampler) Header() http.Header { return h.header }
func (h *heapSampler) WriteHeader(int)     {}
func (h *heapSampler) Flush()              {}
func (h *heapSampler) Write(p []byte) (int, error) {
	if h.writes++; h.writes%sampleEvery == 0 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapAlloc)
	}
	return len(p), nil
}

type exportRow struct {
	id   int64
	name string
}

// peakHeapOfExport streams a list of n rows, fetched a page at a time as
// the lists' services do, and returns the live heap's peak while it did.
func peakHeapOfExport(t *testing.T, n int) uint64 {
	e := echo.New()
	out := &heapSampler{header: http.Header{}}
	c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), out)
	fetch := func(pr page.Request) ([]exportRow, string, error) {
		var rows []exportRow
		for id := pr.After + 1; id <= int64(n) && len(rows) <= pr.Limit; id++ {
			rows = append(rows, exportRow{id, strings.Repeat("Ж", 100) + strconv.FormatInt(id, 10)})
		}
		rows, next := page.Next(rows, pr.Limit, func(r exportRow) int64 { return r.id })
		return rows, next, nil
	}
	runtime.GC()
	require.NoError(t, writeCSV(c, csvLayout{machine: true}, "x.csv", []csvCol{{"№", "id"}, {"Имя", "name"}, {"А", "a"}, {"Б", "b"}, {"В", "c"}}, func(_ csvLayout, r exportRow) []string {
		return []string{strconv.FormatInt(r.id, 10), r.name, r.name + "b", r.name + "c", r.name + "d"}
	}, fetch))
	require.Greater(t, out.writes, n/sampleEvery, "the rows were written out as they came")
	return out.peak
}

// An export holds one page in memory, not the list: the live heap's peak
// while 20,000 rows stream out is about that of 2,000 (each row is ~1 KB, so
// a list held whole would add ~20 MB).
func TestCSV_StreamedMemoryFlat(t *testing.T) {
	small := peakHeapOfExport(t, 2_000)
	large := peakHeapOfExport(t, 20_000)
	t.Logf("live heap peak: %d KiB for 2,000 rows, %d KiB for 20,000", small>>10, large>>10)
	require.Less(t, large, small+4<<20, "the export's memory grows with the list")
}

// The neutralisation never lets a formula prefix through.
func TestCSVCell_Prefixes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"=1+1", "+1", "-1+1+cmd|' /C calc'!A0", "-1", "-", "@A1", "\tx", "\rx"} {
		require.Equal(t, "'"+s, csvCell(s), s)
	}
	for _, s := range []string{"", "1", "Иван", "'x", " =x"} {
		require.Equal(t, s, csvCell(s), s)
	}
}

// FuzzCSVCell: whatever a cell holds, the CSV the API writes never has a
// cell a spreadsheet would run as a formula, and reads back as the cell,
// an apostrophe before it at most.
func FuzzCSVCell(f *testing.F) {
	for _, s := range []string{"", "=1+1", "+1", "-1+1+cmd|' /C calc'!A0", "-", "@A1", "\t=x", "\r=x", "\n=x", "Иван", "'=x", "a,b", `"q"`, "\xff"} {
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			out := csvCell(s)
			require.True(t, out == s || out == "'"+s)
			if out != "" {
				require.NotContains(t, "=+-@\t\r", out[:1], "%q", s)
			}
		}
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
		require.NoError(t, writeCSVRows(c, csvLayout{machine: true}, "x.csv", []csvCol{{"А", "a"}, {"Б", "b"}}, [][]string{{a, b}}))
		rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(rec.Body.String(), "\uFEFF"))).ReadAll()
		if err != nil {
			return // a cell of invalid UTF-8 or a lone CR the reader will not read back: the prefix is checked above
		}
		require.Len(t, rows, 2)
		for i, cell := range rows[1] {
			if cell != "" {
				require.NotContains(t, "=+-@\t\r", cell[:1], "cell %d of %q", i, rows[1])
			}
		}
	})
}

// A layout writes quantities to their unit (metres to the centimetre,
// sheets and pieces to a thousandth as the API gives them) with its decimal
// mark, and times in its zone and form.
func TestCSVLayout_Cells(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Moscow")
	require.NoError(t, err)
	office, machine := csvLayout{loc: loc}, csvLayout{machine: true, loc: loc}
	for _, tc := range []struct {
		v               float64
		unit            string
		office, machine string
	}{
		{482.837419, "m", "482,84", "482.84"},
		{0.005, "m", "0,01", "0.01"},
		{12, "m", "12", "12"},
		{0.2894, "sheet", "0,289", "0.289"},
		{3, "pcs", "3", "3"},
		{-0.0001, "m", "0", "0"},
	} {
		require.Equal(t, tc.office, office.Qty(tc.v, tc.unit), "%v %s", tc.v, tc.unit)
		require.Equal(t, tc.machine, machine.Qty(tc.v, tc.unit), "%v %s", tc.v, tc.unit)
	}
	at := time.Date(2026, 12, 4, 21, 30, 5, 123e6, time.UTC)
	require.Equal(t, "05.12.2026 00:30:05", office.Time(at))
	require.Equal(t, "2026-12-04T21:30:05Z", machine.Time(at))
	require.Equal(t, "", office.TimePtr(nil))
	require.Equal(t, []string{"Код", "code"}, []string{office.Header([]csvCol{{"Код", "code"}})[0], machine.Header([]csvCol{{"Код", "code"}})[0]})
	require.Equal(t, ';', office.Comma())
	require.Equal(t, ',', machine.Comma())
}
