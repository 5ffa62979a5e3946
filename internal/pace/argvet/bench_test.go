package argvet

import "testing"

func BenchmarkVet(b *testing.B) {
	args := []string{"--target=x86_64-pc-linux-gnu", "-pedantic", "-std=c99", "-Wall", "-W",
		"-Wno-missing-field-initializers", "-O2", "-g", "-ggdb", "-fPIC", "-fvisibility=hidden",
		"-fsanitize=address,undefined", "-x", "cpp-output"}
	b.ReportAllocs()
	for b.Loop() {
		if err := Vet(FlavorClang, args); err != nil {
			b.Fatal(err)
		}
	}
}
