package input

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// openers are the calls that open a file by name for reading. A named pipe
// given where a file is expected blocks every one of them (a manifest, a
// profile, a shard's export report, an attempt record); the tool opens
// files through this package instead.
var openers = map[string][]string{
	"os":        {"Open", "ReadFile", "OpenFile", "DirFS"},
	"io/ioutil": {"ReadFile"},
	"github.com/apache/arrow-go/v18/parquet/file": {"OpenParquetFile"},
}

// notInputs are the call sites that open, by name, something no user
// gives: each says why it cannot be a pipe. Keyed by file and function.
var notInputs = map[string]string{
	"internal/fsync/fsync.go syncPath":                      "fsyncs a directory or a file the tool wrote itself",
	"internal/campaign/record.go withTokenLock":             "the fencing token's lock file, made by the tool under OUT/.attempts with O_NOFOLLOW",
	"internal/video/join.go open":                           "reads back the output file it is writing",
	"internal/synth/session/journal.go corruptFirstSegment": "damages a segment synth has just written",
	"internal/synth/session/journal.go tearLastRecord":      "tears the last record of a segment synth has just written",
	"internal/synth/live.go growCamera":                     "copies a camera file synth has just encoded into the one it is growing",
}

// Every file the tool opens by name goes through the
// regular-file rule. This test reads the whole module's code: a call that
// opens a file (openers) must be in package input, create a new file
// (O_CREATE|O_EXCL, which never opens a pipe), or be listed in notInputs;
// and FFmpeg's OpenInput must follow an input.Check in its function. So
// the next new input cannot forget the rule.
func TestEveryOpenGoesThroughInput(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/input/") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		imports := map[string]string{} // local name -> path
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(path)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = path
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			key := rel + " " + fn.Name.Name
			var checked token.Pos // the first input.Check in fn
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok {
					path := imports[x.Name]
					if strings.HasSuffix(path, "/internal/input") && sel.Sel.Name == "Check" && checked == token.NoPos {
						checked = call.Pos()
					}
					if !slices.Contains(openers[path], sel.Sel.Name) {
						return true
					}
					where := fset.Position(call.Pos()).String()
					switch {
					case sel.Sel.Name == "OpenFile" && createsNew(call):
					case notInputs[key] != "":
						used[key] = true
					default:
						t.Errorf("%s: %s.%s opens a file by name; use internal/input (Open, ReadFile), which refuses pipes and devices without blocking, or list %q in notInputs with the reason", where, path, sel.Sel.Name, key)
					}
					return true
				}
				// FFmpeg opens by name itself: the path must be checked first.
				if sel.Sel.Name == "OpenInput" && (checked == token.NoPos || checked > call.Pos()) {
					t.Errorf("%s: OpenInput without an input.Check of its path before it", fset.Position(call.Pos()))
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range notInputs {
		if !used[key] {
			t.Errorf("notInputs lists %q, which opens nothing by name (any more): remove it", key)
		}
	}
}

// createsNew reports whether an os.OpenFile call's flags hold both O_CREATE
// and O_EXCL: it makes a new file, so it never opens an existing pipe.
func createsNew(call *ast.CallExpr) bool {
	if len(call.Args) < 2 {
		return false
	}
	var flags []string
	ast.Inspect(call.Args[1], func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			flags = append(flags, id.Name)
		}
		return true
	})
	return slices.Contains(flags, "O_CREATE") && slices.Contains(flags, "O_EXCL")
}
