package narstore_test

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
)

// TestUsageCountsStoredObjectsOnly: committed objects count with their compressed size;
// partial uploads and removed objects do not.
func TestUsageCountsStoredObjectsOnly(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	var want int64
	for i, h := range []string{strings.Repeat("a", 32), strings.Repeat("b", 32)} {
		obj := narstoretest.Make(narstoretest.NAR(3000, uint64(i)))
		st := stage(t, s, h)
		writeAll(t, st, 0, obj.Compressed)
		if err := st.Commit(h, obj.Expect); err != nil {
			t.Fatal(err)
		}
		want += int64(len(obj.Compressed))
	}
	partial := stage(t, s, "partial")
	writeAll(t, partial, 0, []byte("not an object"))
	partial.Close()
	if bytes, n, err := s.Usage(); err != nil || n != 2 || bytes != want {
		t.Fatalf("usage %d bytes in %d objects, %v; want %d in 2", bytes, n, err, want)
	}
	if err := s.Remove(strings.Repeat("a", 32)); err != nil {
		t.Fatal(err)
	}
	if _, n, err := s.Usage(); err != nil || n != 1 {
		t.Fatalf("after a removal: %d objects, %v", n, err)
	}
}
