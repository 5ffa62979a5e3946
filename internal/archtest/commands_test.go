package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// commands names the system of every main package, under cmd/ and bench/ alike. A command's
// name does not have to say its system (pacectl, the load generators): this table does, and
// a new command without a row fails TestEveryCommandHasASystem.
var commands = map[string]string{
	"cmd/pace-cc":              "pace",
	"cmd/pace-cc-full":         "pace",
	"cmd/pace-kv":              "pace",
	"cmd/pace-node":            "pace",
	"cmd/pacectl":              "pace",
	"bench/dispatch":           "pace",
	"bench/failover":           "pace",
	"bench/hostile":            "pace",
	"bench/kvload":             "pace",
	"bench/leaseload":          "pace",
	"bench/netlab":             "pace",
	"cmd/gradient-server":      "gradient",
	"cmd/gradient-worker":      "gradient",
	"cmd/gradient-wire-schema": "gradient",
	"bench/hostilegradient":    "gradient",
	"bench/fakeforge":          "gradient",
}

// Thin mains. A command under cmd/ reads its flags, builds its package's configuration and runs
// it: the work lives in the packages it assembles. A load generator under bench/ is the
// measurement itself and has no assembler below it, so only the function and file limits hold
// there.
const (
	maxCommandLines  = 250 // non-test lines of one cmd/ main package
	maxMainFuncLines = 50  // one function of any main package (a flag table runs a little long)
	maxMainFileLines = 400 // one non-test file of any main package
)

func TestEveryCommandHasASystem(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range goList(t, "./...") {
		if p.Name != "main" {
			continue
		}
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		seen[rel] = true
		if commands[rel] == "" {
			t.Errorf("%s: a main package with no row in commands: say whether it is pace or gradient", rel)
		}
	}
	for rel := range commands {
		if !seen[rel] {
			t.Errorf("commands lists %s, which is not a main package", rel)
		}
	}
}

func TestMainsAreThin(t *testing.T) {
	for rel := range commands {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(repoRoot, rel, "*.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no Go files (%v)", rel, err)
			continue
		}
		total := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			lines := fset.Position(f.End()).Line
			total += lines
			if lines > maxMainFileLines {
				t.Errorf("%s: %d lines; a main package's file stays under %d", name, lines, maxMainFileLines)
			}
			checkFuncLengths(t, fset, f)
		}
		if strings.HasPrefix(rel, "cmd/") && total > maxCommandLines {
			t.Errorf("%s: %d lines outside tests; a command is flags -> configuration -> run (at most %d): move the work into its package",
				rel, total, maxCommandLines)
		}
	}
}

// checkFuncLengths fails every function of f longer than maxMainFuncLines.
func checkFuncLengths(t *testing.T, fset *token.FileSet, f *ast.File) {
	t.Helper()
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		if n := end.Line - start.Line + 1; n > maxMainFuncLines {
			t.Errorf("%s:%d: %s is %d lines; a main's functions stay under %d", start.Filename, start.Line, fd.Name.Name, n, maxMainFuncLines)
		}
	}
}
