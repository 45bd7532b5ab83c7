package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of the CLI may be, from its func
// line to its closing brace: the CLI parses flags, calls a library and
// prints, and a longer function is a decision that belongs in a library,
// where it is tested without the binary.
const maxFuncLines = 60

// TestFunctionsShort parses the package's non-test files and names every
// function (declared or literal) longer than maxFuncLines.
func TestFunctionsShort(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			what := "function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, what = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			start := fset.Position(n.Pos())
			if lines := fset.Position(body.End()).Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines, want at most %d: move its decisions into a library package", start, what, lines, maxFuncLines)
			}
			return true
		})
	}
	if files == 0 {
		t.Fatal("no non-test Go files found in the package directory")
	}
}
