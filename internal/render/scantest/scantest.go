// Package scantest reads the barcodes of printed documents as a scanner
// would: it renders each page of a PDF at a printer's resolution with
// poppler's pdftoppm and decodes the image with zbar's zbarimg (Debian's
// poppler-utils and zbar-tools; .ci/run installs them).
package scantest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tools makes sure pdftoppm and zbarimg are on the PATH. Without them the
// test fails where CI=true, so that CI never passes without reading a
// barcode, and is skipped elsewhere with a message saying what to install.
func Tools(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"pdftoppm", "pdftotext", "zbarimg"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("%s not installed (apt-get install poppler-utils zbar-tools): the barcodes cannot be read", strings.Join(missing, " and "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Pages renders the PDF's pages at dpi as greyscale PGM files and returns
// their paths in page order. Set SCANTEST_DIR to keep them for a look.
func Pages(t testing.TB, pdf []byte, dpi int) []string {
	t.Helper()
	dir := t.TempDir()
	if keep := os.Getenv("SCANTEST_DIR"); keep != "" {
		dir = filepath.Join(keep, strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()), fmt.Sprint(dpi))
		if err := os.MkdirAll(dir, 0o750); err != nil { //nolint:gosec // SCANTEST_DIR is the developer's own
			t.Fatal(err)
		}
	}
	in := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil { //nolint:gosec // in the test's folder
		t.Fatal(err)
	}
	cmd := exec.Command("pdftoppm", "-r", fmt.Sprint(dpi), "-gray", in, filepath.Join(dir, "page")) //nolint:gosec // the test's own files
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, out)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "page-*.pgm"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("pdftoppm made no page (%v)", err)
	}
	slices.Sort(pages) // page-01.pgm, page-02.pgm, …: zero-padded to the same width
	return pages
}

// Decode returns the Code 128 symbols zbarimg reads in the image, in the
// order it reads them (none: an empty list).
func Decode(t testing.TB, image string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("zbarimg", "--quiet", "--raw", "-Sdisable", "-Scode128.enable", image)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// zbarimg exits 4 when it finds no symbol
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Fatalf("zbarimg %s: %v: %s", image, err, errb.Bytes())
		}
	}
	var codes []string
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		if line != "" {
			codes = append(codes, line)
		}
	}
	return codes
}

// DecodePDF renders the PDF at dpi and returns what zbarimg reads on each
// page, the codes of a page sorted.
func DecodePDF(t testing.TB, pdf []byte, dpi int) [][]string {
	t.Helper()
	var out [][]string
	for _, p := range Pages(t, pdf, dpi) {
		codes := Decode(t, p)
		slices.Sort(codes)
		out = append(out, codes)
	}
	return out
}

// Text is the text of each page of the PDF, as pdftotext (poppler-utils)
// reads it.
func Text(t testing.TB, pdf []byte) []string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", "-layout", in, "-").Output() //nolint:gosec // the test's own file
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	pages := strings.Split(string(out), "\f")
	return pages[:len(pages)-1] // a form feed ends every page
}
