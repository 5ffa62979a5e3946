package ccargs

import "strings"

// unknown inspects options the table does not describe: they are kept verbatim, but some
// carry meaning pace-cc needs (debug level, diagnostics colour) or a reason to pass through.
func (w *walker) unknown(a string) *PassthroughError {
	switch {
	case a == "-gtoggle": // flips debug info on or off depending on what came before
		return passthrough(ReasonUnsupportedOption, a)
	case strings.HasPrefix(a, "-g"):
		w.debugLevel = debugLevelAfter(w.debugLevel, a[2:])
		w.debugDetail(a[2:])
	case a == "-fdebug-macro" || a == "-fno-debug-macro":
		w.debugMacro = a == "-fdebug-macro"
	case strings.HasPrefix(a, "-fdebug-default-version="):
		w.dwarfDefault = dwarfVersion(strings.TrimPrefix(a, "-fdebug-default-version="))
	case isNativeCPU(a):
		return passthrough(ReasonHostCPU, a)
	}
	if c, ok := colorOption(a); ok {
		w.color = c
	}
	return nil
}

// debugDetail records what a -g option (without "-g") says besides the level: the DWARF
// version of -gdwarf-N and column recording.
func (w *walker) debugDetail(rest string) {
	switch {
	case rest == "column-info":
		w.columns = ColumnsOn
	case rest == "no-column-info":
		w.columns = ColumnsOff
	case strings.HasPrefix(rest, "dwarf-"):
		w.dwarf = dwarfVersion(rest[len("dwarf-"):])
	}
}

// dwarfVersion reads a DWARF version 2 to 5; anything else is 0, the compiler's default.
func dwarfVersion(v string) int {
	if len(v) == 1 && v[0] >= '2' && v[0] <= '5' {
		return int(v[0] - '0')
	}
	return 0
}

// debugLevelAfter applies one -g option (without "-g") to the debug level, as gcc 12 does:
// -g, -ggdb and -gdwarf-N raise the level to 2 but never lower 3; -gN and -ggdbN set N.
func debugLevelAfter(current int, rest string) int {
	level := -1
	switch {
	case rest == "" || rest == "gdb" || strings.HasPrefix(rest, "dwarf") ||
		rest == "btf" || rest == "ctf" || rest == "codeview" || strings.HasPrefix(rest, "stabs") ||
		strings.HasPrefix(rest, "xcoff") || rest == "vms":
		level = max(current, 2)
	case len(rest) == 1 && rest[0] >= '0' && rest[0] <= '3':
		level = int(rest[0] - '0')
	case len(rest) == 4 && strings.HasPrefix(rest, "gdb") && rest[3] >= '0' && rest[3] <= '3':
		level = int(rest[3] - '0')
	case rest == "line-tables-only" || rest == "mlt" || rest == "line-directives-only":
		level = 1
	}
	if level < 0 {
		return current // -gcolumn-info, -gz, -gstrict-dwarf, ...: no change of level
	}
	return level
}

// isNativeCPU matches -march=native, -mtune=native and -mcpu=native: their meaning is the
// machine the compiler runs on, which no key piece captures.
func isNativeCPU(a string) bool {
	for _, p := range []string{"-march=", "-mtune=", "-mcpu="} {
		if v, ok := strings.CutPrefix(a, p); ok && v == "native" {
			return true
		}
	}
	return false
}

// colorOption reads the GNU and clang spellings of diagnostics colouring.
func colorOption(a string) (ColorMode, bool) {
	switch a {
	case "-fdiagnostics-color", "-fcolor-diagnostics", "-fdiagnostics-color=always":
		return ColorAlways, true
	case "-fno-diagnostics-color", "-fno-color-diagnostics", "-fdiagnostics-color=never":
		return ColorNever, true
	case "-fdiagnostics-color=auto":
		return ColorAuto, true
	}
	return ColorDefault, false
}
