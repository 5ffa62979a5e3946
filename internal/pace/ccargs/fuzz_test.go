package ccargs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzClassify feeds NUL-separated command lines (compiler first). Classify must never panic,
// must return a Compile or a PassthroughError, and a Compile's derived commands must keep
// their invariants: the probes keep the source, and the key never grows arguments.
func FuzzClassify(f *testing.F) {
	for _, seed := range []string{
		"gcc\x00-c\x00-o\x00a.o\x00a.c",
		"c++\x00-I/s/include\x00-MD\x00-MT\x00x.o\x00-MF\x00x.o.d\x00-o\x00x.o\x00-c\x00/s/x.cc",
		"clang\x00-Xclang\x00-load\x00-c\x00a.c\x00-o\x00a.o",
	} {
		f.Add([]byte(seed), "/s", "/b")
	}
	f.Fuzz(func(t *testing.T, data []byte, src, build string) {
		line := strings.Split(string(data), "\x00")
		c, err := Classify(Invocation{Compiler: line[0], Args: line[1:], Cwd: "/b", Roots: Roots{Source: src, Build: build}, ImplicitOutput: len(data)%2 == 0})
		if err != nil {
			if c != nil || !errors.Is(err, ErrPassthrough) {
				t.Fatalf("Classify(%q) = %v, %v", line, c, err)
			}
			return
		}
		if !slices.Contains(c.KeyProbeArgs("s.d"), c.Source) || !slices.Contains(c.DispatchPreprocessArgs(), c.Source) {
			t.Fatalf("probe lost the source of %q", line)
		}
		if len(c.KeyArgs()) > len(c.Args) {
			t.Fatalf("KeyArgs %q longer than the arguments %q", c.KeyArgs(), c.Args)
		}
		if _, err := c.RemoteCompileArgs("x86_64-pc-linux-gnu"); err != nil && !errors.Is(err, ErrNotDispatchable) {
			t.Fatalf("untyped dispatch refusal %v", err)
		}
	})
}
