package argvet

import "sync"

// The tables are built on first use: pace-cc links this package for dispatch, and a cache hit
// must not pay for indexing rows it never consults.
var (
	gnuAllow = sync.OnceValue(func() *allowTable {
		t := newAllowTable(gnuOptimisation(), gnuLanguage(), gnuDefines(), gnuWarnings(), gnuMachine(),
			gnuDebug(), gnuFBare(), gnuFValued(), gnuParam(), gnuMisc())
		return &t
	})
	msvcAllow = sync.OnceValue(func() *allowTable {
		t := newAllowTable(msvcOptimisation(), msvcLanguage(), msvcDefines(), msvcWarnings(), msvcMachine(),
			msvcCodegen(), msvcMisc())
		return &t
	})
)

// allowTableFor returns the family's allowlist, nil for an unknown family (which accepts
// nothing).
func allowTableFor(f Family) *allowTable {
	switch f {
	case FamilyGNU:
		return gnuAllow()
	case FamilyMSVC:
		return msvcAllow()
	}
	return nil
}
