package schemagen

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

func describe(v uint16) string { return "shape of " + strconv.Itoa(int(v)) + "\n" }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestSyncWritesNewVersionsAndDeletesOldOnes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"v28.txt": "old", "v29.txt": "old", "v30.txt": describe(30), "README": "keep me",
	})
	res, err := Sync(dir, wire.VersionRange{Oldest: 30, Newest: 32}, describe)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Written, []string{"v31.txt", "v32.txt"}) || !slices.Equal(res.Deleted, []string{"v28.txt", "v29.txt"}) ||
		!slices.Equal(res.Kept, []string{"v30.txt"}) {
		t.Errorf("result = %+v", res)
	}
	want := map[string]string{"v30.txt": describe(30), "v31.txt": describe(31), "v32.txt": describe(32), "README": "keep me"}
	if got := readDir(t, dir); !maps.Equal(got, want) {
		t.Errorf("directory = %v, want %v", got, want)
	}
}

func TestSyncNeverRewritesAFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"v30.txt": "hand-edited\n", "v31.txt": "above newest\n"})
	_, err := Sync(dir, wire.VersionRange{Oldest: 30, Newest: 30}, describe)
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("Sync error = %v, want ErrRefused", err)
	}
	want := map[string]string{"v30.txt": "hand-edited\n", "v31.txt": "above newest\n"}
	if got := readDir(t, dir); !maps.Equal(got, want) {
		t.Errorf("directory changed to %v", got)
	}
}

func TestWriteRefusesExistingAndUnsupportedVersions(t *testing.T) {
	dir := t.TempDir()
	r := wire.VersionRange{Oldest: 30, Newest: 30}
	if err := Write(dir, r, 30, describe); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, r, 30, func(uint16) string { return "other" }); !errors.Is(err, ErrRefused) {
		t.Errorf("second Write error = %v, want ErrRefused", err)
	}
	if err := Write(dir, r, 31, describe); !errors.Is(err, ErrRefused) {
		t.Errorf("Write outside the range error = %v, want ErrRefused", err)
	}
	if got := readDir(t, dir); !maps.Equal(got, map[string]string{"v30.txt": describe(30)}) {
		t.Errorf("directory = %v", got)
	}
}

func TestTheRepositorySchemaDirectoryIsInStep(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "schema")
	files := readDir(t, src)
	writeFiles(t, dir, files)
	res, err := Sync(dir, wire.ProtoVersions(), wire.Describe)
	if err != nil || len(res.Written) != 0 || len(res.Deleted) != 0 {
		t.Errorf("Sync on a copy of schema/ = %+v, %v; want nothing to do (run gradient-wire-schema)", res, err)
	}
}
