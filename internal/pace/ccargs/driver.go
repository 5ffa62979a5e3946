package ccargs

import (
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/argvet"
)

// Family and Flavor are argvet's: the worker's vetting and the client's classification speak
// of the same drivers.
type (
	Family = argvet.Family
	Flavor = argvet.Flavor
)

// Flavors and families, re-exported for callers of this package.
const (
	FamilyGNU     = argvet.FamilyGNU
	FamilyMSVC    = argvet.FamilyMSVC
	FlavorGcc     = argvet.FlavorGcc
	FlavorClang   = argvet.FlavorClang
	FlavorCl      = argvet.FlavorCl
	FlavorClangCl = argvet.FlavorClangCl
)

// Driver is what a compiler's name says about it (pace-wire §3.2).
type Driver struct {
	Name    string // the basename as given, e.g. "x86_64-linux-gnu-g++-12"
	Core    string // gcc, g++, cc, c++, clang, clang++, cl or clang-cl
	Target  string // a target-triple prefix such as "x86_64-linux-gnu", "" when none
	Version string // a version suffix such as "12" or "18.1", "" when none
	Flavor  Flavor
	CXX     bool // the driver compiles .c (and .i) as C++: g++, c++, clang++
}

// Family is the driver's family.
func (d Driver) Family() Family { return d.Flavor.Family() }

// WithFlavor returns d reclassified, e.g. cc as Clang when its banner says "clang version".
func (d Driver) WithFlavor(f Flavor) Driver {
	d.Flavor = f
	return d
}

// coreDriver is one recognised driver name. Longer names come first so that "clang-cl" is not
// read as a "cl" with a "clang" triple, nor "g++" as a "c++".
type coreDriver struct {
	name      string
	flavor    Flavor
	cxx       bool
	minPrefix int // components a target prefix needs; -1: no prefix allowed
}

var coreDrivers = []coreDriver{
	{"clang-cl", FlavorClangCl, false, -1},
	{"clang++", FlavorClang, true, 1},
	{"clang", FlavorClang, false, 1},
	{"g++", FlavorGcc, true, 1},
	{"gcc", FlavorGcc, false, 1},
	// cc and c++ need a full triple (two components or more) as a prefix, so that a tool
	// named like "pace-cc" or "distcc" is never taken for a compiler.
	{"c++", FlavorGcc, true, 2},
	{"cc", FlavorGcc, false, 2},
	{"cl", FlavorCl, false, -1},
}

// ClassifyDriver says whether name (a path or a basename, argv[0] of a compiler or of pace-cc
// invoked through a symlink) names a supported driver: gcc, g++, cc, c++, clang, clang++ with
// an optional target prefix ("x86_64-linux-gnu-gcc") and version suffix ("g++-12",
// "clang-18.1"), case-insensitively and with ".exe" allowed; or the MSVC drivers cl and
// clang-cl. ok is false for anything else, including tools like gcc-ar.
func ClassifyDriver(name string) (d Driver, ok bool) {
	base := name
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	lower := strings.ToLower(base)
	lower = strings.TrimSuffix(lower, ".exe")
	stem, version := splitVersion(lower)
	for _, c := range coreDrivers {
		prefix, found := splitCore(stem, c.name)
		if !found || !validPrefix(prefix, c.minPrefix) {
			continue
		}
		return Driver{Name: base, Core: c.name, Target: prefix, Version: version, Flavor: c.flavor, CXX: c.cxx}, true
	}
	return Driver{}, false
}

// IsDriverName reports whether argv[0]'s basename names a driver, which is how pace-cc knows
// it was invoked through a masquerade symlink (pace-wire §5.7).
func IsDriverName(argv0 string) bool {
	_, ok := ClassifyDriver(argv0)
	return ok
}

// splitVersion cuts a trailing "-N" or "-N.N..." version.
func splitVersion(s string) (stem, version string) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 || !isVersion(s[i+1:]) {
		return s, ""
	}
	return s[:i], s[i+1:]
}

func isVersion(v string) bool {
	if v == "" || v[0] == '.' || v[len(v)-1] == '.' || strings.Contains(v, "..") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if (v[i] < '0' || v[i] > '9') && v[i] != '.' {
			return false
		}
	}
	return true
}

// splitCore matches stem against core exactly or as "<prefix>-<core>".
func splitCore(stem, core string) (prefix string, ok bool) {
	if stem == core {
		return "", true
	}
	if p, found := strings.CutSuffix(stem, "-"+core); found && p != "" {
		return p, true
	}
	return "", false
}

// validPrefix checks a target-triple prefix: at least min components of [a-z0-9_.], the first
// starting with a letter. min -1 allows no prefix at all.
func validPrefix(prefix string, min int) bool {
	if prefix == "" {
		return true
	}
	if min < 0 {
		return false
	}
	parts := strings.Split(prefix, "-")
	if len(parts) < min || parts[0] == "" || parts[0][0] < 'a' || parts[0][0] > 'z' || isStandardWrapper(parts) {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_.") != "" {
			return false
		}
	}
	return true
}

// isStandardWrapper reports a prefix naming a C standard, as in Debian's c89-gcc and c99-gcc:
// those are scripts adding -std and -pedantic to gcc, not compilers for a target, and a
// masquerade or a worker taking them for gcc would compile with the wrong options.
func isStandardWrapper(parts []string) bool {
	p := parts[0]
	return len(parts) == 1 && len(p) == 3 && p[0] == 'c' && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' && p[2] <= '9'
}
