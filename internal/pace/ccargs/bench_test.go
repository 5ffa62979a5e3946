package ccargs

import "testing"

// Classification and key derivation run on every pace-cc call, hits included.
func BenchmarkClassifyAndKeyArgs(b *testing.B) {
	line := argv(leveldbLine)
	inv := Invocation{Compiler: line[0], Args: line[1:], Cwd: "/b", Roots: Roots{Source: "/s", Build: "/b"}}
	b.ReportAllocs()
	for b.Loop() {
		c, err := Classify(inv)
		if err != nil {
			b.Fatal(err)
		}
		_ = c.KeyArgs()
		_ = c.KeyProbeArgs("/tmp/x.d")
	}
}
