package hitmemo

import (
	"bytes"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"pgregory.net/rapid"
)

func genStat(t *rapid.T, label string) Stat {
	return Stat{Dev: rapid.Uint64().Draw(t, label+"dev"), Ino: rapid.Uint64().Draw(t, label+"ino"),
		Size: rapid.Int64().Draw(t, label+"size"), Mtime: rapid.Int64().Draw(t, label+"mtime"),
		Ctime: rapid.Int64().Draw(t, label+"ctime")}
}

func genEntry(t *rapid.T) Entry {
	str := rapid.StringN(0, 40, -1)
	e := Entry{RecordedAt: rapid.Int64().Draw(t, "at"), Compiler: genStat(t, "c"),
		ObjectKey: cachekey.Content([]byte(str.Draw(t, "obj"))),
		Source:    str.Draw(t, "src"), Output: str.Draw(t, "out"), Depfile: str.Draw(t, "dep")}
	for i := range rapid.IntRange(0, 6).Draw(t, "n") {
		_ = i
		e.Files = append(e.Files, File{Path: str.Draw(t, "path"), Hash: cachekey.Content([]byte(str.Draw(t, "h"))), Stat: genStat(t, "f")})
	}
	return e
}

// Every entry survives the trip, and its encoding is the only one that decodes to it.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := genEntry(t)
		b, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.RecordedAt != e.RecordedAt || got.Compiler != e.Compiler || got.ObjectKey != e.ObjectKey ||
			got.Source != e.Source || got.Output != e.Output || got.Depfile != e.Depfile || len(got.Files) != len(e.Files) {
			t.Fatalf("round trip: %+v -> %+v", e, got)
		}
		for i := range e.Files {
			if got.Files[i] != e.Files[i] {
				t.Fatalf("file %d: %+v -> %+v", i, e.Files[i], got.Files[i])
			}
		}
		again, _ := Encode(got)
		if !bytes.Equal(again, b) {
			t.Fatal("re-encoding differs")
		}
	})
}

// A memo cut anywhere short of its end never decodes.
func TestPropertyPrefixesRefused(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b, _ := Encode(genEntry(t))
		n := rapid.IntRange(0, len(b)-1).Draw(t, "cut")
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("a %d-byte prefix of a %d-byte memo decoded", n, len(b))
		}
	})
}
