package toolchain

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func needCompiler(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found on PATH: make test installs it (scripts/deps.sh)", name)
	}
	return path
}

func TestIdentifyGCC(t *testing.T) {
	gcc := needCompiler(t, "gcc")
	id, err := Identify(context.Background(), gcc, "")
	if err != nil {
		t.Fatal(err)
	}
	// The banner names the driver it was run as, so the identity runs the resolved binary: gcc, cc
	// and x86_64-linux-gnu-gcc-12 are one compiler and must key alike.
	real, _ := filepath.EvalSymlinks(gcc)
	out, _ := exec.Command(real, "--version").Output()
	first, _, _ := strings.Cut(string(out), "\n")
	if id.Banner != strings.TrimSpace(first) {
		t.Errorf("banner %q, want %q", id.Banner, first)
	}
	target, _ := exec.Command(gcc, "-dumpmachine").Output()
	if id.Target != strings.TrimSpace(string(target)) || id.Flavor != GCC {
		t.Errorf("identity %+v", id)
	}
	if id.String() != id.Banner+"\n"+id.Target {
		t.Errorf("String() = %q", id.String())
	}
}

func TestIdentityIsCachedAndRevalidated(t *testing.T) {
	dir := t.TempDir()
	fake := fakeCompiler(t, "fakecc version 1")
	id, err := Identify(context.Background(), fake, dir)
	if err != nil || id.Banner != "fakecc version 1" {
		t.Fatalf("first identify: %+v %v", id, err)
	}
	// Same witnesses: the cached banner is served even though running the binary would now say
	// something else (rewrite it in place keeping size and mtime).
	fi, _ := os.Stat(fake)
	rewriteKeepingWitness(t, fake, "fakecc version 2", fi)
	if id, _ := Identify(context.Background(), fake, dir); id.Banner != "fakecc version 1" {
		t.Errorf("cache not used: %q", id.Banner)
	}
	// A changed mtime invalidates the cache.
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(fake, later, later); err != nil {
		t.Fatal(err)
	}
	if id, _ := Identify(context.Background(), fake, dir); id.Banner != "fakecc version 2" {
		t.Errorf("stale cache served after the compiler changed: %q", id.Banner)
	}
}

func TestFingerprintGCC(t *testing.T) {
	gcc := needCompiler(t, "gcc")
	dir := t.TempDir()
	id, err := Identify(context.Background(), gcc, dir)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := Fingerprint(context.Background(), id, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fp) != 64 {
		t.Fatalf("fingerprint %q", fp)
	}
	again, err := Fingerprint(context.Background(), id, "")
	if err != nil || again != fp {
		t.Fatalf("uncached fingerprint %q differs from cached %q (%v)", again, fp, err)
	}
	gxx := needCompiler(t, "g++")
	gid, _ := Identify(context.Background(), gxx, dir)
	gfp, _ := Fingerprint(context.Background(), gid, dir)
	if gfp == fp {
		t.Error("gcc and g++ share a fingerprint although their banners differ")
	}
}

// fakeCompiler writes a shell script answering --version and -dumpmachine.
func fakeCompiler(t *testing.T, banner string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fakecc")
	writeFake(t, path, banner)
	return path
}

func writeFake(t *testing.T, path, banner string) {
	t.Helper()
	script := "#!/bin/sh\ncase \"$1\" in --version) echo '" + banner + "';; -dumpmachine) echo x86_64-test-linux;; esac\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func rewriteKeepingWitness(t *testing.T, path, banner string, fi os.FileInfo) {
	t.Helper()
	writeFake(t, path, banner) // same length banner, same inode (written in place)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func TestAliasesOfOneCompilerShareAnIdentity(t *testing.T) {
	gcc, cc := needCompiler(t, "gcc"), needCompiler(t, "cc")
	a, err1 := Identify(context.Background(), gcc, "")
	b, err2 := Identify(context.Background(), cc, "")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	ra, _ := filepath.EvalSymlinks(gcc)
	rb, _ := filepath.EvalSymlinks(cc)
	if ra == rb && a.String() != b.String() {
		t.Errorf("gcc and cc resolve to %s but identify as %q and %q", ra, a, b)
	}
}
