package cutting

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoSharedState keeps the optimiser free of what a data race needs: it
// starts no goroutine, imports no synchronisation, and writes no
// package-level variable (its tables are read, never changed). `make test`
// builds this package without the race detector's instrumentation
// (Makefile, RACE_FLAGS), which is sound only while this holds.
func TestNoSharedState(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	globals := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						globals[n.Name] = true
					}
				}
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no source files found")
	}
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "sync" || path == "sync/atomic" || path == "unsafe" {
				t.Errorf("%s imports %s", fset.Position(imp.Pos()), path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine", fset.Position(n.Pos()))
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if name := root(lhs); n.Tok != token.DEFINE && globals[name] {
						t.Errorf("%s writes the package-level %s", fset.Position(n.Pos()), name)
					}
				}
			case *ast.IncDecStmt:
				if name := root(n.X); globals[name] {
					t.Errorf("%s writes the package-level %s", fset.Position(n.Pos()), name)
				}
			}
			return true
		})
	}
}

// root returns the variable an assignment's target belongs to: x in x,
// x[i], x.f, x[i].f[j].
func root(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name
		case *ast.IndexExpr:
			e = x.X
		case *ast.SelectorExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		default:
			return ""
		}
	}
}
