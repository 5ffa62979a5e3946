package nixexec

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// ImportOrder puts every path after the paths it references, for any acyclic reference graph.
func TestImportOrderIsTopological(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 30).Draw(t, "n")
		items := make([]ImportItem, n)
		for i := range items {
			items[i].Path = fmt.Sprintf("%s/%032d-p%d", StoreDir, i, i)
			// Only lower-numbered references: acyclic by construction. Some in hash-name
			// form, some outside the set, some to itself (a self-reference is allowed).
			for j := range i + 1 {
				if rapid.Bool().Draw(t, fmt.Sprintf("ref%d-%d", i, j)) {
					ref := fmt.Sprintf("%032d-p%d", j, j)
					if j%2 == 0 {
						ref = StoreDir + "/" + ref
					}
					items[i].References = append(items[i].References, ref)
				}
			}
			items[i].References = append(items[i].References, StoreDir+"/outside-the-set")
		}
		perm := rapid.Permutation(items).Draw(t, "order")
		got, err := ImportOrder(perm)
		if err != nil {
			t.Fatal(err)
		}
		pos := map[string]int{}
		for i, it := range got {
			pos[it.Path] = i
		}
		if len(got) != n {
			t.Fatalf("%d items out of %d", len(got), n)
		}
		for _, it := range got {
			for _, r := range it.References {
				if p, ok := pos[FullStorePath(r)]; ok && p > pos[it.Path] {
					t.Fatalf("%s comes before its reference %s", it.Path, r)
				}
			}
		}
	})
}

func TestImportOrderRefusesACycle(t *testing.T) {
	items := []ImportItem{
		{Path: StoreDir + "/a", References: []string{"b"}},
		{Path: StoreDir + "/b", References: []string{StoreDir + "/a"}},
	}
	if _, err := ImportOrder(items); !errors.Is(err, ErrImportCycle) {
		t.Fatalf("err = %v, want ErrImportCycle", err)
	}
}
