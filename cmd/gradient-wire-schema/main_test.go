package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func TestRunWritesTheCurrentVersionAndRefusesToRewrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "v1.txt"), []byte("ancient"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, 0); err != nil {
		t.Fatal(err)
	}
	newest := wire.ProtoVersions().Newest
	got, err := os.ReadFile(filepath.Join(dir, "v"+itoa(newest)+".txt"))
	if err != nil || string(got) != wire.Describe(newest) {
		t.Fatalf("schema file = %q, %v; want Describe(%d)", got, err, newest)
	}
	if _, err := os.Stat(filepath.Join(dir, "v1.txt")); !os.IsNotExist(err) {
		t.Errorf("v1.txt below the oldest version was not deleted: %v", err)
	}
	if err := run(dir, uint(newest)); err == nil {
		t.Error("run -version on an existing file succeeded; files are never rewritten")
	}
}

func itoa(v uint16) string { return strconv.Itoa(int(v)) }
