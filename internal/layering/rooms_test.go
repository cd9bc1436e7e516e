package layering

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The bounds of issue 31: a command builder of internal/cli does flags ->
// options -> call -> render in at most 80 lines, and no function of the
// module (tests and generated files left out) is over 120.
const (
	maxBuilderLines  = 80
	maxFunctionLines = 120
)

// generated says whether a Go file is generated (its first lines say so).
func generated(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; i < 5 && sc.Scan(); i++ {
		if strings.HasPrefix(sc.Text(), "// Code generated") {
			return true
		}
	}
	return false
}

// TestFunctionLengths holds every function (a literal too) to
// maxFunctionLines, and every command builder of internal/cli (a func
// new...) to maxBuilderLines.
func TestFunctionLengths(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "tools", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || generated(p) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		builders := filepath.Dir(rel) == filepath.Join("internal", "cli")
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncDecl:
				checked++
				if l := lines(x); l > maxFunctionLines {
					t.Errorf("%s: func %s is %d lines (at most %d)", rel, x.Name.Name, l, maxFunctionLines)
				} else if builders && strings.HasPrefix(x.Name.Name, "new") && l > maxBuilderLines {
					t.Errorf("%s: the command builder %s is %d lines (at most %d: flags -> options -> call -> render)", rel, x.Name.Name, l, maxBuilderLines)
				}
			case *ast.FuncLit:
				if l := lines(x); l > maxFunctionLines {
					t.Errorf("%s:%d: a func literal is %d lines (at most %d)", rel, fset.Position(x.Pos()).Line, l, maxFunctionLines)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 1000 {
		t.Errorf("only %d functions checked", checked)
	}
}
