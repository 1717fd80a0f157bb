package events

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDriver_EveryMethodHasACase fails when a method of the driver has no
// case of its own in the conformance suite: a case (a function that a
// suite hands to exercise in a driverCase) that calls the method itself,
// or through a helper of the tests, not only through the code above it. A new statement therefore comes
// with a case that runs it on both databases, as River's riverdrivertest
// requires of every driver function.
//
// It reads the package's test files: the methods are matched by name, so a
// case that calls another type's method of the same name would count; the
// suite's cases call the driver's.
func TestDriver_EveryMethodHasACase(t *testing.T) {
	t.Parallel()
	called := caseCalls(t)
	it := reflect.TypeOf((*driver)(nil)).Elem()
	var missing []string
	for i := range it.NumMethod() {
		if name := it.Method(i).Name; !called[name] {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "driver methods that no conformance case calls")
	require.Greater(t, it.NumMethod(), 50, "the driver's methods are read (reflect lists an interface's unexported methods)")
}

// caseCalls returns the names of the methods called in the bodies of the
// functions that the package's tests hand to exercise as driverCases.
func caseCalls(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	var cases []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
		// The elements of every []driverCase literal: {"Name", fn}.
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isCaseList(lit.Type) {
				return true
			}
			for _, e := range lit.Elts {
				c, ok := e.(*ast.CompositeLit)
				require.True(t, ok && len(c.Elts) == 2, "a driverCase is {name, fn}: %s", fset.Position(e.Pos()))
				fn, ok := c.Elts[1].(*ast.Ident)
				require.True(t, ok, "a driverCase names its function: %s", fset.Position(e.Pos()))
				cases = append(cases, fn.Name)
			}
			return true
		})
	}
	require.NotEmpty(t, cases, "the suites' cases are found")
	sort.Strings(cases)
	called := map[string]bool{}
	seen := map[string]bool{}
	// A case's calls, and those of the tests' own helpers it calls
	// (listed, addSubscriber…), which check what they run.
	var walk func(fd *ast.FuncDecl)
	walk = func(fd *ast.FuncDecl) {
		if seen[fd.Name.Name] {
			return
		}
		seen[fd.Name.Name] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch f := call.Fun.(type) {
			case *ast.SelectorExpr:
				called[f.Sel.Name] = true
			case *ast.Ident:
				if helper, ok := funcs[f.Name]; ok {
					walk(helper)
				}
			}
			return true
		})
	}
	for _, name := range slices.Compact(cases) {
		fd := funcs[name]
		require.NotNil(t, fd, "case %s is a function of the package's tests", name)
		walk(fd)
	}
	return called
}

// isCaseList tells whether e is the type []driverCase.
func isCaseList(e ast.Expr) bool {
	at, ok := e.(*ast.ArrayType)
	if !ok || at.Len != nil {
		return false
	}
	id, ok := at.Elt.(*ast.Ident)
	return ok && id.Name == "driverCase"
}
