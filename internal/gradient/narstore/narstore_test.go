package narstore_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

const hashA = "0iz84xy22rpj9d46qj6dz4sbicjazq3d"

const chunk = 512 << 10

func open(t *testing.T, dir string, opts ...narstore.Options) *narstore.Store {
	t.Helper()
	s, err := narstore.Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeAll stages b from offset in upload-sized chunks.
func writeAll(t *testing.T, st *narstore.Staged, offset int64, b []byte) {
	t.Helper()
	for len(b) > 0 {
		n := min(len(b), chunk)
		if err := st.Write(offset, b[:n]); err != nil {
			t.Fatal(err)
		}
		offset, b = offset+int64(n), b[n:]
	}
}

func stage(t *testing.T, s *narstore.Store, key string) *narstore.Staged {
	t.Helper()
	st, err := s.Stage(key)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func readObject(t *testing.T, s *narstore.Store, hash string) []byte {
	t.Helper()
	r, size, err := s.Open(hash)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("read %d bytes (size %d): %v", len(b), size, err)
	}
	return b
}

// partials lists the files under nar-partial.
func partials(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "nar-partial"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitStoresTheCompressedBytesAsSent(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	obj := narstoretest.Make(narstoretest.NAR(3<<20, 1))
	st := stage(t, s, "worker-1/"+hashA)
	if st.Offset() != 0 {
		t.Fatalf("fresh stage at offset %d", st.Offset())
	}
	writeAll(t, st, 0, obj.Compressed)
	if err := st.Commit(hashA, obj.Expect); err != nil {
		t.Fatal(err)
	}
	if got := readObject(t, s, hashA); !bytes.Equal(got, obj.Compressed) {
		t.Fatalf("stored %d bytes differ from the %d uploaded", len(got), len(obj.Compressed))
	}
	if ok, size, err := s.Has(hashA); !ok || size != int64(len(obj.Compressed)) || err != nil {
		t.Errorf("Has = %v, %d, %v", ok, size, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nar", hashA+".nar.zst")); err != nil {
		t.Errorf("object not at nar/<hash>.nar.zst: %v", err)
	}
	if p := partials(t, dir); len(p) != 0 {
		t.Errorf("partials left after commit: %v", p)
	}
	for name, err := range map[string]error{"Write": st.Write(st.Offset(), []byte("x")), "Commit": st.Commit(hashA, obj.Expect)} {
		if !errors.Is(err, narstore.ErrFinished) {
			t.Errorf("%s after commit: %v, want ErrFinished", name, err)
		}
	}
}

// A commit that fails verification leaves neither an object nor a partial
// (gradient-protocol §7.3: no row may ever claim bytes that are not stored, and a bad
// upload must not be resumed).
func TestCommitRefusesAndCleansUp(t *testing.T) {
	obj := narstoretest.Make(narstoretest.NAR(1<<20, 2))
	notNAR := bytes.Repeat([]byte("not a nar "), 1000)
	bombNAR := append(append([]byte(nil), obj.NAR[:24]...), make([]byte, 16<<20)...)
	bomb := narstoretest.Compress(bombNAR)
	wideWindow := narstoretest.Compress(obj.NAR, zstd.WithWindowSize(8<<20))
	garbage := bytes.Repeat([]byte{0xfe}, 4096)
	cases := []struct {
		name   string
		bytes  []byte
		expect func(narstore.Expect) narstore.Expect
		opts   narstore.Options
		check  narstore.Check
	}{
		{"file size too small", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.FileSize--; return e }, narstore.Options{}, narstore.CheckFileSize},
		{"file size too large", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.FileSize++; return e }, narstore.Options{}, narstore.CheckFileSize},
		{"file hash", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.FileHash[0] ^= 1; return e }, narstore.Options{}, narstore.CheckFileHash},
		{"nar size declared larger", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.NarSize++; return e }, narstore.Options{}, narstore.CheckNarSize},
		{"nar size declared smaller", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.NarSize--; return e }, narstore.Options{}, narstore.CheckNarSize},
		{"nar hash", obj.Compressed, func(e narstore.Expect) narstore.Expect { e.NarHash[31] ^= 0x80; return e }, narstore.Options{}, narstore.CheckNarHash},
		{"not a NAR", narstoretest.Compress(notNAR), func(narstore.Expect) narstore.Expect {
			return narstoretest.ExpectOf(notNAR, narstoretest.Compress(notNAR))
		}, narstore.Options{}, narstore.CheckNarFormat},
		{"not zstd", garbage, func(narstore.Expect) narstore.Expect {
			return narstore.Expect{FileSize: int64(len(garbage)), FileHash: nixhash.Sum(garbage), NarSize: 100, NarHash: obj.Expect.NarHash}
		}, narstore.Options{}, narstore.CheckDecompress},
		{"decompression bomb declared small", bomb, func(narstore.Expect) narstore.Expect {
			e := narstoretest.ExpectOf(bombNAR, bomb)
			e.NarSize = 1 << 20
			return e
		}, narstore.Options{}, narstore.CheckNarSize},
		{"window over the cap", wideWindow, func(narstore.Expect) narstore.Expect {
			return narstoretest.ExpectOf(obj.NAR, wideWindow)
		}, narstore.Options{MaxWindow: 1 << 20}, narstore.CheckDecompress},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, c.opts)
			st := stage(t, s, "w/"+hashA)
			writeAll(t, st, 0, c.bytes)
			err := st.Commit(hashA, c.expect(obj.Expect))
			var ve *narstore.VerifyError
			if !errors.As(err, &ve) || ve.Check != c.check || !errors.Is(err, narstore.ErrVerify) {
				t.Fatalf("Commit = %v, want a %s VerifyError", err, c.check)
			}
			if ok, _, _ := s.Has(hashA); ok {
				t.Error("a refused upload was stored")
			}
			if p := partials(t, dir); len(p) != 0 {
				t.Errorf("partial kept after refusal: %v", p)
			}
			if again := stage(t, s, "w/"+hashA); again.Offset() != 0 {
				t.Errorf("the key resumes at %d after a refusal", again.Offset())
			}
		})
	}
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed: not a bomb", len(bomb))
	}
}

// The bomb's output is cut right after the declared size: the detail says the output
// passed it, not that a full decompression found a different length.
func TestBombIsCutAtTheDeclaredSize(t *testing.T) {
	nar := append(append([]byte(nil), narstoretest.NAR(0, 1)[:24]...), make([]byte, 16<<20)...)
	comp := narstoretest.Compress(nar)
	s := open(t, t.TempDir())
	st := stage(t, s, "bomb")
	writeAll(t, st, 0, comp)
	e := narstoretest.ExpectOf(nar, comp)
	e.NarSize = 4096
	var ve *narstore.VerifyError
	if err := st.Commit(hashA, e); !errors.As(err, &ve) || ve.Detail != "output passed the declared 4096 bytes" {
		t.Fatalf("Commit = %v", err)
	}
}

func TestWritesMustBeContiguous(t *testing.T) {
	s := open(t, t.TempDir())
	st := stage(t, s, "k")
	writeAll(t, st, 0, []byte("abcd"))
	for _, off := range []int64{0, 3, 5, -1} {
		err := st.Write(off, []byte("x"))
		var oe *narstore.OffsetError
		if !errors.As(err, &oe) || oe.Got != off || oe.Want != 4 || !errors.Is(err, narstore.ErrNotContiguous) {
			t.Errorf("Write at %d: %v, want OffsetError{%d, 4}", off, err, off)
		}
	}
	if st.Offset() != 4 {
		t.Errorf("refused writes moved the offset to %d", st.Offset())
	}
}

// Crash safety: a partial written by a Store that never closed it (a killed server) is
// found by a new Store on the same directory and resumes where it ended.
func TestPartialSurvivesARestartAndResumes(t *testing.T) {
	dir := t.TempDir()
	obj := narstoretest.Make(narstoretest.NAR(2<<20, 3))
	half := int64(len(obj.Compressed) / 2)
	writeAll(t, stage(t, open(t, dir), "w/"+hashA), 0, obj.Compressed[:half]) // never closed

	s := open(t, dir)
	st := stage(t, s, "w/"+hashA)
	if st.Offset() != half {
		t.Fatalf("resumed at %d, want %d", st.Offset(), half)
	}
	writeAll(t, st, half, obj.Compressed[half:])
	if err := st.Commit(hashA, obj.Expect); err != nil {
		t.Fatalf("commit of a resumed upload: %v", err)
	}
	if !bytes.Equal(readObject(t, s, hashA), obj.Compressed) {
		t.Fatal("resumed object differs")
	}
}

func TestCloseKeepsThePartialAndAbortDeletesIt(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	st := stage(t, s, "k")
	if _, err := s.Stage("k"); !errors.Is(err, narstore.ErrBusy) {
		t.Fatalf("second Stage of a held key: %v, want ErrBusy", err)
	}
	writeAll(t, st, 0, []byte("12345"))
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = stage(t, s, "k")
	if st.Offset() != 5 {
		t.Fatalf("after Close the key resumes at %d, want 5", st.Offset())
	}
	if err := st.Abort(); err != nil {
		t.Fatal(err)
	}
	if p := partials(t, dir); len(p) != 0 {
		t.Fatalf("Abort left %v", p)
	}
	if st = stage(t, s, "k"); st.Offset() != 0 {
		t.Fatalf("after Abort the key resumes at %d", st.Offset())
	}
}

func TestCommitReplacesAnExistingObject(t *testing.T) {
	s := open(t, t.TempDir())
	nar := narstoretest.NAR(100<<10, 4)
	first := narstoretest.Make(nar)
	second := narstoretest.Compress(nar, zstd.WithEncoderLevel(zstd.SpeedFastest))
	for _, b := range [][]byte{first.Compressed, second} {
		st := stage(t, s, "k")
		writeAll(t, st, 0, b)
		if err := st.Commit(hashA, narstoretest.ExpectOf(nar, b)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(readObject(t, s, hashA), second) {
		t.Fatal("the second commit did not replace the first")
	}
}

func TestSweepRemovesOnlyStaleUnheldPartials(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	s := open(t, dir, narstore.Options{Now: func() time.Time { return now }})
	for _, k := range []string{"stale", "fresh", "held"} {
		st := stage(t, s, k)
		writeAll(t, st, 0, []byte(k))
		if k != "held" {
			st.Close()
		}
	}
	old := now.Add(-10 * time.Minute)
	for _, name := range []string{"stale.part", "held.part"} {
		if err := os.Chtimes(filepath.Join(dir, "nar-partial", name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.SweepPartials(300 * time.Second)
	if err != nil || n != 1 {
		t.Fatalf("SweepPartials = %d, %v; want 1", n, err)
	}
	got := partials(t, dir)
	if len(got) != 2 || got[0] != "fresh.part" || got[1] != "held.part" {
		t.Fatalf("partials after sweep: %v", got)
	}
}

func TestObjectNamesAreCheckedHashes(t *testing.T) {
	s := open(t, t.TempDir())
	for _, h := range []string{"", "../../../../etc/passwd", hashA[:31], hashA + "0", "0iz84xy22rpj9d46qj6dz4sbicjazq3e", "0IZ84XY22RPJ9D46QJ6DZ4SBICJAZQ3D"} {
		if _, _, err := s.Open(h); !errors.Is(err, narstore.ErrBadHash) {
			t.Errorf("Open(%q): %v, want ErrBadHash", h, err)
		}
		if err := s.Remove(h); !errors.Is(err, narstore.ErrBadHash) {
			t.Errorf("Remove(%q): %v", h, err)
		}
	}
	if _, _, err := s.Open(hashA); !errors.Is(err, narstore.ErrNotFound) {
		t.Errorf("Open of a missing object: %v, want ErrNotFound", err)
	}
	if err := s.Remove(hashA); err != nil {
		t.Errorf("Remove of a missing object: %v", err)
	}
	st := stage(t, s, "k")
	if err := st.Commit("../x", narstore.Expect{}); !errors.Is(err, narstore.ErrBadHash) {
		t.Errorf("Commit to a bad hash: %v", err)
	}
}
