package ccstats

import (
	"bytes"
	"testing"
)

// FuzzParseLine: no line makes the parser or the fold panic, a parsed record's cause is always
// in the vocabulary, and a fold of any bytes accounts for every line it read. The seed corpus
// in testdata/fuzz/FuzzParseLine holds lines of each era and some damage.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"t":1,"outcome":"miss","ms":12.5,"cpp_ms":3,"lookup_ms":1,"store_ms":2,"io_ms":3,"dispatch":"worker-refused:not-a-member"}`))
	f.Add([]byte(`{"outcome":"miss","dispatch":"scheduler 10.0.0.5:6674 refused: no-worker"}`))
	f.Add([]byte(`{"outcome":"hit","via":"direct","ms":1}` + "\n" + `{"outcome":`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if r, err := ParseLine(line); err == nil && r.Dispatch != "" && !r.Dispatch.Known() {
			t.Fatalf("cause %q outside the vocabulary", r.Dispatch)
		}
		s, err := Fold(bytes.NewReader(line))
		if err != nil {
			t.Fatalf("fold of in-memory bytes failed: %v", err)
		}
		lines := bytes.Count(line, []byte("\n")) + 1
		if s.Invocations+s.Unreadable > lines {
			t.Fatalf("%d invocations and %d unreadable from %d lines", s.Invocations, s.Unreadable, lines)
		}
		for c := range s.Dispatch {
			if !c.Known() {
				t.Fatalf("cause %q outside the vocabulary", c)
			}
		}
	})
}
