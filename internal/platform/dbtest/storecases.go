package dbtest

import (
	"go/ast"

	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"
)

// EveryStatementHasACase fails t for each function of the package's store
// (its store*.go files, in the test's working directory) that no
// store*_test.go file calls as name(ctx: a statement added to a module's
// store without its case on both databases. except are helpers of the
// store that are no statement of their own.
func EveryStatementHasACase(t *testing.T, except ...string) {
	t.Helper()
	files, err := filepath.Glob("store*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("dbtest: no store*.go here (%v)", err)
	}
	var tests strings.Builder
	var funcs []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tests.Write(b)
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && !slices.Contains(except, fn.Name.Name) {
				funcs = append(funcs, fn.Name.Name)
			}
		}
	}
	if len(funcs) == 0 {
		t.Fatal("dbtest: the store has no function")
	}
	for _, name := range funcs {
		if !regexp.MustCompile(`\b` + name + `\(ctx`).MatchString(tests.String()) {
			t.Errorf("store function %s has no case in store*_test.go", name)
		}
	}
}

// RolledBack runs fn in a transaction of db rolled back after it: a store's
// case sees the fixture as it was committed, and what the case writes to
// set its scene is never committed (so no change goes without its event).
func RolledBack(t *testing.T, db *gorm.DB, fn func(tx *gorm.DB)) {
	t.Helper()
	tx := db.Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	defer tx.Rollback()
	fn(tx)
}
