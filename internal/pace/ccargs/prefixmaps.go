package ccargs

import "strings"

// The names a compile records for its files after the command's prefix maps. A gcc worker
// compiling directives-only text reads every file under a scratch name of its own and maps
// each straight to these (pace-wire §3.9.1), so they must be the names a local compile
// writes.

// DebugName is path as gcc records it in debug information: the -fdebug-prefix-map and
// -ffile-prefix-map options are tried from the last given to the first and the first whose
// OLD is a prefix of path replaces it with NEW (gcc 12's remap_filename). gcc splits a map
// at its first '=' and Compile at its last, so the result is gcc's when each map holds one,
// which RemoteCompileArgs requires of a gcc compile.
func (c *Compile) DebugName(path string) string { return c.remap(path, "-fdebug-prefix-map=") }

// MacroName is path as __FILE__ and __BASE_FILE__ spell it: -fmacro-prefix-map and
// -ffile-prefix-map, by the same rule as DebugName.
func (c *Compile) MacroName(path string) string { return c.remap(path, "-fmacro-prefix-map=") }

func (c *Compile) remap(path, flag string) string {
	for i := len(c.PrefixMaps) - 1; i >= 0; i-- {
		m := c.PrefixMaps[i]
		if (m.Flag == flag || m.Flag == "-ffile-prefix-map=") && strings.HasPrefix(path, m.Old) {
			return m.New + path[len(m.Old):]
		}
	}
	return path
}
