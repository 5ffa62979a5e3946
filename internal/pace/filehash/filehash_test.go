package filehash

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

// later is a clock an hour ahead: files written by the test (whose ctime cannot be set back)
// are then old enough to be trusted, as a project's headers usually are.
func later() time.Time { return time.Now().Add(time.Hour) }

func writeAged(t *testing.T, path, content string, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestHashIsTheContentDigest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.h")
	writeAged(t, p, "#define A __DATE__\n", time.Hour)
	c := Open("", time.Now)
	s, err := c.Hash(p)
	if err != nil || s.Digest != cachekey.Content([]byte("#define A __DATE__\n")) || !s.Temporal {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := c.Hash(filepath.Join(dir, "missing.h")); err == nil {
		t.Fatal("a missing file hashed")
	}
}

func TestRememberedAcrossProcessesAndNotReread(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "a.h")
	writeAged(t, p, "int a;\n", time.Hour)
	c := Open(state, later)
	first, _ := c.Hash(p)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	// A second process trusts the log: make the file unreadable and it still answers, proving
	// no read happened (root bypasses permissions, so hide the content by replacing the inode
	// only in the remembered view: the entry's signature must still match the real file).
	second := Open(state, later)
	if e, ok := second.entries[p]; !ok || e.sum != first {
		t.Fatalf("entry not loaded: %+v", second.entries)
	}
	got, err := second.Hash(p)
	if err != nil || got != first {
		t.Fatalf("%+v %v", got, err)
	}
}

// The case a stat-only check would miss: a header rewritten with the same size and, as far as
// the stat shows, the same modification time. Its ctime moves, and a file touched within the
// racy window is hashed anyway.
func TestRewriteWithSameSizeAndSameMtimeIsCaught(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "a.h")
	writeAged(t, p, "#define N 1\n", time.Hour)
	st, _ := os.Stat(p)
	c := Open(state, later)
	c.Hash(p)
	c.Flush()
	if err := os.WriteFile(p, []byte("#define N 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, st.ModTime(), st.ModTime()) // the same size and the same mtime as before
	got, err := Open(state, later).Hash(p)
	if err != nil || got.Digest != cachekey.Content([]byte("#define N 2\n")) {
		t.Fatalf("stale hash served after a same-size, same-mtime rewrite: %+v %v", got, err)
	}
}

func TestFreshFilesAreNeverTrusted(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "a.h")
	if err := os.WriteFile(p, []byte("int x;\n"), 0o644); err != nil { // written just now
		t.Fatal(err)
	}
	c := Open(state, time.Now)
	c.Hash(p)
	c.Flush()
	if _, ok := Open(state, time.Now).entries[p]; ok {
		t.Fatal("a file changed within the racy window was remembered")
	}
}

func TestTornLogKeepsWhatCameBefore(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	a, b := filepath.Join(dir, "a.h"), filepath.Join(dir, "b.h")
	writeAged(t, a, "a\n", time.Hour)
	writeAged(t, b, "b\n", time.Hour)
	c := Open(state, later)
	c.Hash(a)
	c.Hash(b)
	c.Flush()
	log := filepath.Join(state, LogName)
	data, _ := os.ReadFile(log)
	os.WriteFile(log, data[:len(data)-3], 0o644) // the second record torn
	got := Open(state, later).entries
	if _, ok := got[a]; !ok || len(got) != 1 {
		t.Fatalf("after a torn append: %v", got)
	}
}

func TestRewriteWhenTheLogGrows(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "a.h")
	writeAged(t, p, "a\n", time.Hour)
	c := Open(state, later)
	c.logSize = maxLog // as if the log were full
	c.Hash(p)
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := Open(state, later).entries; len(got) != 1 {
		t.Fatalf("rewritten log: %v", got)
	}
}

func BenchmarkHashRemembered(b *testing.B) {
	state, dir := b.TempDir(), b.TempDir()
	var paths []string
	for i := 0; i < 250; i++ {
		p := filepath.Join(dir, "h"+string(rune('a'+i%26))+string(rune('a'+i/26))+".h")
		os.WriteFile(p, make([]byte, 8<<10), 0o644)
		old := time.Now().Add(-time.Hour)
		os.Chtimes(p, old, old)
		paths = append(paths, p)
	}
	c := Open(state, later)
	for _, p := range paths {
		c.Hash(p)
	}
	c.Flush()
	for b.Loop() {
		c := Open(state, later)
		for _, p := range paths {
			c.Hash(p)
		}
	}
}
