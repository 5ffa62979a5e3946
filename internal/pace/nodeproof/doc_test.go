package nodeproof

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each package here says what it is (controlbase's habit): a missing or
// misplaced package comment fails here, not only in the repository-wide
// architecture test.
func TestPackagesHaveADocComment(t *testing.T) {
	for dir, name := range map[string]string{".": "nodeproof", "sealedconn": "sealedconn"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var documented []string
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				documented = append(documented, e.Name())
				if !strings.HasPrefix(f.Doc.Text(), "Package "+name+" ") {
					t.Errorf("%s/%s: package comment does not start %q", dir, e.Name(), "Package "+name+" ")
				}
			}
		}
		if len(documented) != 1 || documented[0] != "doc.go" {
			t.Errorf("%s: package comment in %v, want exactly doc.go", dir, documented)
		}
	}
}
