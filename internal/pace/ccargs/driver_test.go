package ccargs

import "testing"

var driverNames = []struct {
	name                  string
	core, target, version string
	flavor                Flavor
	cxx                   bool
}{
	{"gcc", "gcc", "", "", FlavorGcc, false},
	{"g++", "g++", "", "", FlavorGcc, true},
	{"cc", "cc", "", "", FlavorGcc, false},
	{"c++", "c++", "", "", FlavorGcc, true},
	{"clang", "clang", "", "", FlavorClang, false},
	{"clang++", "clang++", "", "", FlavorClang, true},
	{"/usr/bin/gcc-12", "gcc", "", "12", FlavorGcc, false},
	{"g++-12", "g++", "", "12", FlavorGcc, true},
	{"clang-18", "clang", "", "18", FlavorClang, false},
	{"clang++-18.1.8", "clang++", "", "18.1.8", FlavorClang, true},
	{"x86_64-linux-gnu-gcc-12", "gcc", "x86_64-linux-gnu", "12", FlavorGcc, false},
	{"/usr/bin/x86_64-linux-gnu-g++-12", "g++", "x86_64-linux-gnu", "12", FlavorGcc, true},
	{"arm-none-eabi-gcc", "gcc", "arm-none-eabi", "", FlavorGcc, false},
	{"avr-gcc", "gcc", "avr", "", FlavorGcc, false},
	{"aarch64-linux-gnu-c++", "c++", "aarch64-linux-gnu", "", FlavorGcc, true},
	{"x86_64-pc-linux-gnu-clang++-17", "clang++", "x86_64-pc-linux-gnu", "17", FlavorClang, true},
	{"GCC.EXE", "gcc", "", "", FlavorGcc, false},
	{`C:\llvm\bin\clang++.exe`, "clang++", "", "", FlavorClang, true},
	{"cl", "cl", "", "", FlavorCl, false},
	{"CL.exe", "cl", "", "", FlavorCl, false},
	{"clang-cl", "clang-cl", "", "", FlavorClangCl, false},
	{"clang-cl-18.exe", "clang-cl", "", "18", FlavorClangCl, false},
}

func TestClassifyDriver(t *testing.T) {
	for _, tc := range driverNames {
		d, ok := ClassifyDriver(tc.name)
		if !ok {
			t.Errorf("ClassifyDriver(%q) not a driver", tc.name)
			continue
		}
		if d.Core != tc.core || d.Target != tc.target || d.Version != tc.version || d.Flavor != tc.flavor || d.CXX != tc.cxx {
			t.Errorf("ClassifyDriver(%q) = %+v", tc.name, d)
		}
		if !IsDriverName(tc.name) {
			t.Errorf("IsDriverName(%q) = false", tc.name)
		}
	}
}

// Tools that merely look like compilers must never be taken for one: pace-cc itself (so a
// launcher is never mistaken for a masquerade), the gcc wrappers of binutils, the compilers
// proper, other caches, and the POSIX c89/c99 scripts (gcc with -std added).
func TestClassifyDriverRefusesLookalikes(t *testing.T) {
	for _, name := range []string{
		"", "/", "pace-cc", "/usr/local/bin/pace-cc", "distcc", "ccache", "sccache", "gcc-ar",
		"gcc-ar-12", "gcc-nm", "gcc-ranlib", "x86_64-linux-gnu-gcc-ar-12", "cc1", "cc1plus",
		"c++filt", "clang-tidy", "clang-format", "clangd", "cpp", "ld", "as", "my-cc",
		"gcc-", "gcc-12.", "gcc-1..2", "clang--18", "-gcc", "x86_64--gcc", "9x-gcc", "Gcc+",
		"x86_64-pc-linux-gnu-clang-cl", "arm-cl", "gcc.sh", "c89-gcc", "c99-gcc", "/usr/bin/c11-gcc",
	} {
		if d, ok := ClassifyDriver(name); ok {
			t.Errorf("ClassifyDriver(%q) = %+v, want not a driver", name, d)
		}
	}
}
