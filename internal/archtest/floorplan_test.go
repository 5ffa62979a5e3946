package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// floorPlanRow is a table row of docs/ARCHITECTURE.md whose first cell names a package.
var floorPlanRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// TestFloorPlanListsEveryPackage: docs/ARCHITECTURE.md has one table row for every package
// `go list ./...` reports, and none for a package that no longer exists. A new package
// without a line in the floor plan fails here.
func TestFloorPlanListsEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatalf("the floor plan: %v", err)
	}
	listed := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := floorPlanRow.FindStringSubmatch(line); m != nil {
			listed[m[1]]++
		}
	}
	var packages []string
	for _, p := range goList(t, "./...") {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		packages = append(packages, rel)
		switch listed[rel] {
		case 0:
			t.Errorf("%s has no row in docs/ARCHITECTURE.md: add one under its layer, from its package doc", rel)
		case 1:
		default:
			t.Errorf("%s has %d rows in docs/ARCHITECTURE.md; one is enough", rel, listed[rel])
		}
	}
	for rel := range listed {
		if !slices.Contains(packages, rel) {
			t.Errorf("docs/ARCHITECTURE.md lists %s, which go list does not report", rel)
		}
	}
}
