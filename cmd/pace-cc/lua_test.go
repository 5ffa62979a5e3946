package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// corpus finds a tarball in the committed corpus (testdata/corpus at the repository's top),
// or else in the directory PACE_CORPUS names.
func corpus(t *testing.T, name string) string {
	t.Helper()
	dirs := []string{filepath.Join(repoRoot(t), "testdata", "corpus")}
	if extra := os.Getenv("PACE_CORPUS"); extra != "" {
		dirs = append(dirs, extra)
	}
	for _, dir := range dirs {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	t.Fatalf("corpus tarball %s is in none of %v", name, dirs)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// repoRoot is the directory holding go.mod, above the test's working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func untar(t *testing.T, tarball, into string) string {
	t.Helper()
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", into).CombinedOutput(); err != nil {
		t.Fatalf("untar: %v %s", err, out)
	}
	entries, _ := os.ReadDir(into)
	return filepath.Join(into, entries[0].Name())
}

func (e *env) make(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("make", args...)
	cmd.Dir, cmd.Env = dir, e.vars()
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("make %v: %v\n%s", args, err, out)
	}
}

// TestLuaBuildsTwiceThroughPaceCC builds Lua 5.4 from the corpus with CC="pace-cc gcc": the
// second build is all hits, and every object is byte-identical to a plain gcc build's.
func TestLuaBuildsTwiceThroughPaceCC(t *testing.T) {
	tarball := corpus(t, "lua5.4_5.4.4.orig.tar.gz")
	plainDir := untar(t, tarball, t.TempDir())
	cmd := exec.Command("make", "-j2", "posix")
	cmd.Dir = plainDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("plain build: %v\n%s", err, out)
	}
	e, src := newEnv(t), untar(t, tarball, t.TempDir())
	cc := "CC=" + os.Args[0] + " gcc"
	e.make(src, "-j2", "posix", cc)
	e.make(src, "clean")
	before := e.stats()
	e.make(src, "-j2", "posix", cc)
	after := e.stats()
	compiles := after.Hits + after.Misses - before.Hits - before.Misses
	if hits := after.Hits - before.Hits; compiles == 0 || hits != compiles {
		t.Fatalf("second build: %d hits of %d compiles", hits, compiles)
	}
	objs, _ := filepath.Glob(filepath.Join(plainDir, "src", "*.o"))
	if len(objs) < 30 {
		t.Fatalf("plain build made %d objects", len(objs))
	}
	for _, o := range objs {
		sameBytes(t, o, filepath.Join(src, "src", filepath.Base(o)))
	}
	sameBytes(t, filepath.Join(plainDir, "src", "lua"), filepath.Join(src, "src", "lua"))
}
