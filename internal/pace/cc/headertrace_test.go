package cc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// What -H adds to standard error is taken out, and exactly that (pace-wire §3.6.2).
func TestTraceFilter(t *testing.T) {
	cases := []struct {
		name, in, out string
		files         []string
		pch           bool
	}{
		{"trace only", ". a.h\n.. /usr/include/stdio.h\n. a.h\n", "", []string{"a.h", "/usr/include/stdio.h"}, false},
		{"diagnostics kept in place",
			". a.h\nc.c:1:10: fatal error: x.h: No such file or directory\n    1 | #include \"x.h\"\n      |          ^~~~~\ncompilation terminated.\n",
			"c.c:1:10: fatal error: x.h: No such file or directory\n    1 | #include \"x.h\"\n      |          ^~~~~\ncompilation terminated.\n",
			[]string{"a.h"}, false},
		{"guard footer of named files", ". a.h\n.. b.h\n" + guardFooter + "\nb.h\na.h\n", "", []string{"a.h", "b.h"}, false},
		{"footer ends at a line it did not name", ". a.h\n" + guardFooter + "\na.h\nIn file included from x.c:1:\n", "In file included from x.c:1:\n", []string{"a.h"}, false},
		{"a path line outside a footer is kept", ". a.h\na.h\n", "a.h\n", []string{"a.h"}, false},
		{"no newline at the end", ". a.h\nlast words", "last words", []string{"a.h"}, false},
		{"dots without a space are not a trace", "...\n.a.h\n", "...\n.a.h\n", nil, false},
		{"precompiled header", "! inc/all.h.gch\n. a.h\n", "", []string{"a.h"}, true},
		{"unusable precompiled header", "x inc/all.h.gch\n. inc/all.h\n", "", []string{"inc/all.h"}, true},
		{"a path with spaces", ". my dir/a b.h\n", "", []string{"my dir/a b.h"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newTraceFilter(&out)
			f.Write([]byte(tc.in))
			f.Close()
			if out.String() != tc.out || !reflect.DeepEqual(f.files, tc.files) || f.pch != tc.pch || f.passed != len(tc.out) {
				t.Fatalf("passed %q, files %q, pch %v; want %q, %q, %v", out.String(), f.files, f.pch, tc.out, tc.files, tc.pch)
			}
		})
	}
}

// However the compiler's writes split the stream, the filter passes on the same bytes and keeps
// the same files; and what it passes on is the input less whole lines.
func TestTraceFilterIgnoresHowWritesSplit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOf(rapid.SampledFrom([]string{". a.h", ".. /usr/include/b.h", guardFooter, "a.h",
			"x.c:3:1: error: oops", " 3 | int x", "", "! p.h.gch", "plain"})).Draw(t, "lines")
		in := strings.Join(lines, "\n")
		var whole, split bytes.Buffer
		a, b := newTraceFilter(&whole), newTraceFilter(&split)
		a.Write([]byte(in))
		a.Close()
		for rest := []byte(in); len(rest) > 0; {
			n := rapid.IntRange(1, len(rest)).Draw(t, "chunk")
			b.Write(rest[:n])
			rest = rest[n:]
		}
		b.Close()
		if whole.String() != split.String() || !reflect.DeepEqual(a.files, b.files) {
			t.Fatalf("split writes changed the result: %q vs %q", whole.String(), split.String())
		}
		if !isLineSubsequence(whole.String(), in) {
			t.Fatalf("passed %q, which is not whole lines of %q", whole.String(), in)
		}
	})
}

// isLineSubsequence reports whether the lines of sub appear, in order, among those of of.
func isLineSubsequence(sub, of string) bool {
	if sub == "" {
		return true
	}
	have := strings.SplitAfter(of, "\n")
	i := 0
	for _, l := range strings.SplitAfter(sub, "\n") {
		if l == "" {
			continue // SplitAfter's empty last piece after a final newline
		}
		for i < len(have) && have[i] != l {
			i++
		}
		if i == len(have) {
			return false
		}
		i++
	}
	return true
}

func FuzzTraceFilter(f *testing.F) {
	f.Add([]byte(". a.h\n.. b.h\n" + guardFooter + "\nb.h\n"))
	f.Add([]byte("c.c:1:10: fatal error: x.h: No such file or directory\ncompilation terminated.\n"))
	f.Add([]byte("! a.h.gch\nx b.h.gch\n. \n.\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		tf := newTraceFilter(&out)
		tf.Write(in)
		tf.Close()
		if out.Len() != tf.passed || out.Len() > len(in) || !isLineSubsequence(out.String(), string(in)) {
			t.Fatalf("passed %q of %q", out.String(), in)
		}
		for _, p := range tf.files {
			if !bytes.Contains(in, []byte(" "+p)) {
				t.Fatalf("named %q, which the input does not hold", p)
			}
		}
	})
}
