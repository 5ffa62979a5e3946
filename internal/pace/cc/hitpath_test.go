package cc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPruneShardKeepsTheNewest(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 10 {
		p := filepath.Join(dir, fmt.Sprintf("m%d", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, at, at)
	}
	pruneShard(dir, 4)
	left, _ := os.ReadDir(dir)
	if len(left) != 4 {
		t.Fatalf("%d memos left, want 4", len(left))
	}
	for i, e := range left {
		if want := fmt.Sprintf("m%d", 6+i); e.Name() != want {
			t.Fatalf("kept %s, want the newest (%s)", e.Name(), want)
		}
	}
	pruneShard(dir, 4) // at the bound: nothing more goes
	if again, _ := os.ReadDir(dir); len(again) != 4 {
		t.Fatalf("%d memos after a second prune", len(again))
	}
}
