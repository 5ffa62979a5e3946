package hitmemo

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
)

func sample() Entry {
	return Entry{
		RecordedAt: 1_700_000_000_000_000_000,
		Compiler:   Stat{Dev: 1, Ino: 2, Size: 3, Mtime: 4, Ctime: 5},
		ObjectKey:  cachekey.Content([]byte("object")),
		Source:     "a.c",
		Output:     "/w/a.o",
		Depfile:    "/w/a.d",
		Files: []File{
			{Path: "/w/a.c", Hash: cachekey.Content([]byte("a")), Stat: Stat{Dev: 9, Ino: 10, Size: 1, Mtime: 7, Ctime: 8}},
			{Path: "/usr/include/stdio.h", Hash: cachekey.Content([]byte("s"))},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, e := range map[string]Entry{"sample": sample(), "empty": {}, "no depfile": {Source: "x.c", Output: "/x.o"}} {
		b, err := Encode(e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, _ := Encode(got)
		if !bytes.Equal(again, b) || got.Source != e.Source || len(got.Files) != len(e.Files) {
			t.Fatalf("%s: round trip changed the memo: %+v", name, got)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	good, _ := Encode(sample())
	huge := append([]byte(nil), good[:1+8+statLen+cachekey.Size]...)
	for range 3 {
		huge = append(huge, 0, 0, 0, 0)
	}
	huge = append(huge, 0xff, 0xff, 0xff, 0x7f) // a file count far past the bytes present
	long := append([]byte(nil), good[:1+8+statLen+cachekey.Size]...)
	long = append(long, 0x01, 0x10, 0, 0) // a 4097-byte source
	for name, b := range map[string][]byte{
		"empty":         nil,
		"other format":  append([]byte{Format + 1}, good[1:]...),
		"truncated":     good[:len(good)-1],
		"trailing byte": append(append([]byte(nil), good...), 0),
		"huge count":    huge,
		"long path":     long,
	} {
		if _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode = %v, want ErrMalformed", name, err)
		}
	}
}

func TestEncodeRefusesWhatDecodeWould(t *testing.T) {
	e := sample()
	e.Output = string(make([]byte, MaxPath+1))
	if _, err := Encode(e); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a long path encoded: %v", err)
	}
	e = Entry{Files: make([]File, MaxFiles+1)}
	if _, err := Encode(e); !errors.Is(err, ErrMalformed) {
		t.Fatalf("too many files encoded: %v", err)
	}
}

func TestTrusted(t *testing.T) {
	old := Stat{Ino: 1, Size: 10, Mtime: 100, Ctime: 100}
	at := int64(100 + 3*time.Second)
	cases := []struct {
		name       string
		now        Stat
		recordedAt int64
		want       bool
	}{
		{"unchanged and old", old, at, true},
		{"size moved", Stat{Ino: 1, Size: 11, Mtime: 100, Ctime: 100}, at, false},
		{"ctime moved", Stat{Ino: 1, Size: 10, Mtime: 100, Ctime: 101}, at, false},
		{"replaced by another inode", Stat{Ino: 2, Size: 10, Mtime: 100, Ctime: 100}, at, false},
		{"stat taken within the racy window", old, 100 + int64(time.Second), false},
	}
	for _, c := range cases {
		if got := Trusted(c.now, old, c.recordedAt); got != c.want {
			t.Errorf("%s: Trusted = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestKeyCoversEveryPart(t *testing.T) {
	base := Invocation{Compiler: "/usr/bin/gcc", Cwd: "/w", Args: []string{"-c", "a.c", "-o", "a.o"}, Env: []string{"LANG=C"}}
	variants := []Invocation{
		{Compiler: "/usr/bin/clang", Cwd: base.Cwd, Args: base.Args, Env: base.Env},
		{Compiler: base.Compiler, Cwd: "/w2", Args: base.Args, Env: base.Env},
		{Compiler: base.Compiler, Cwd: base.Cwd, Args: []string{"-c", "a.c", "-o", "b.o"}, Env: base.Env},
		{Compiler: base.Compiler, Cwd: base.Cwd, Args: base.Args, Env: nil},
		// An argument may never pose as a variable.
		{Compiler: base.Compiler, Cwd: base.Cwd, Args: append(append([]string(nil), base.Args...), "LANG=C"), Env: nil},
	}
	k := Key(base)
	for i, v := range variants {
		if Key(v) == k {
			t.Errorf("variant %d shares the key", i)
		}
	}
}

func TestEnvLines(t *testing.T) {
	env := map[string]string{"LANG": "C", "PACE_BINARY_DIR": "/b", "CPATH": "", "HOME": "/root"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := EnvLines(lookup)
	want := []string{"PACE_BINARY_DIR=/b", "CPATH=", "LANG=C"}
	if len(got) != len(want) {
		t.Fatalf("EnvLines = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("EnvLines = %q, want %q", got, want)
		}
	}
}

func TestPath(t *testing.T) {
	k := cachekey.Content([]byte("k"))
	if got, want := Path("/s", k), "/s/hits/"+k.Hex()[:2]+"/"+k.Hex(); got != want {
		t.Fatalf("Path = %s, want %s", got, want)
	}
}
