package cutting

import "fmt"

// The standard set of two-dimensional bin packing: the 500 instances that
// the literature reports on since Lodi, Martello & Vigo (INFORMS Journal on
// Computing, 1999), classes I–VI after Berkey & Wang (1987) and VII–X after
// Martello & Vigo (1998), ten instances of each class for 20, 40, 60, 80
// and 100 items. The published files (Class_01.2bp … Class_10.2bp, in the
// ESICUP and OR-Library collections) were written by the authors' generator,
// whose random numbers come from a small linear congruential generator in
// single precision; the rules below give the same numbers, item for item,
// so that the set needs no data file here: testdata/README.md says how the
// published files' digests are checked against it.

// StandardSizes are the items per instance of the standard set.
var StandardSizes = []int{20, 40, 60, 80, 100}

// StandardPerSize is the instances per class and size of the standard set.
const StandardPerSize = 10

// standardRNG is the generator's: v ← (v·7141 + 54773) mod 259200, each
// draw v ÷ 259200 in single precision.
type standardRNG struct{ v int32 }

func (r *standardRNG) next() float32 {
	r.v = (r.v*7141 + 54773) % 259200
	return float32(r.v) / 259200
}

// draw is ⌊span · u⌋ + lo for the next draw u, the product in single
// precision as the generator has it.
func (r *standardRNG) draw(lo, hi int) int {
	return int(float32(hi-lo+1)*r.next()) + lo
}

// StandardItems is instance k (1 … 10) of class c (0 for I … 9 for X)
// with n items, as the published file has it: the bin's height and width
// (square) and each item's height and width.
func StandardItems(c, n, k int) (bin int, h, w []int) {
	// the seed: n·k·31.47 + 2000 in single precision, that many draws
	// thrown away, and one more
	x := float32(n*k)*float32(31.47) + 2000
	r := &standardRNG{}
	for range int(x) + 1 {
		r.next()
	}
	bin = []int{10, 30, 40, 100, 100, 300, 100, 100, 100, 100}[c]
	m := []int{10, 10, 35, 35, 100, 100, 100, 100, 100, 100}[c]
	h, w = make([]int, n), make([]int, n)
	if c < 6 {
		for j := range n {
			h[j], w[j] = r.draw(1, m), r.draw(1, m)
		}
		return bin, h, w
	}
	// Martello & Vigo: the class's own type of item with probability
	// 0.7, each other type 0.1 (class X: small items at 0.7)
	p := [4][3]float32{{0.7, 0.1, 0.1}, {0.1, 0.7, 0.1}, {0.1, 0.1, 0.7}, {0.1, 0.1, 0.1}}[c-6]
	for j := range n {
		hLo, wLo, hHi, wHi := 1, 1, m, m
		switch u := r.next(); {
		case u < p[0]: // wide and low
			wLo, hHi = m*2/3, m/2
		case u < p[0]+p[1]: // narrow and high
			hLo, wHi = m*2/3, m/2
		case u < p[0]+p[1]+p[2]: // large
			wLo, hLo = m/2, m/2
		default: // small
			wHi, hHi = m/2, m/2
		}
		h[j] = r.draw(hLo, hHi)
		w[j] = r.draw(wLo, wHi)
	}
	return bin, h, w
}

// StandardInstance is instance k (1 … 10) of class c (0 for I … 9 for X)
// with n items of the standard set, as a problem: the items' widths along
// the sheet's length, zero kerf and trims, turning allowed, any number of
// stages.
func StandardInstance(c, n, k int) Problem {
	bin, h, w := StandardItems(c, n, k)
	p := Problem{Formats: []Format{{Name: fmt.Sprintf("%d×%d", bin, bin), Length: float64(bin), Width: float64(bin)}}}
	for j := range h {
		p.Parts = append(p.Parts, Part{ID: fmt.Sprint(j + 1), Length: float64(w[j]), Width: float64(h[j]), Qty: 1})
	}
	return p
}
