package worker

import "strings"

// Scratch file naming (pace-wire §3.10): a compiler records the name of the
// file it was handed, so the worker keeps the client's base name when it
// is harmless and invents one otherwise.
const (
	fallbackStem      = "tu"
	fallbackExtension = ".cpp"
	maxStemLen        = 64
)

var sourceExtensions = map[string]bool{".cpp": true, ".cc": true, ".cxx": true, ".c": true, ".m": true, ".mm": true, ".S": true}

// windowsDevices are names Windows resolves to devices whatever the
// directory or extension.
var windowsDevices = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}

// SanitizeSourceName reduces a client's source name to the base name the
// worker writes the translation unit under: the last component (split on
// '/', '\' and ':'), whose stem must be 1–64 of [A-Za-z0-9._+-], not start
// with '.', and not be a Windows device name, else "tu"; and whose
// extension must be one of .cpp .cc .cxx .c .m .mm .S, else ".cpp". The
// language is never inferred from it: the client states it (-x …-cpp-output).
func SanitizeSourceName(sourceName string) string {
	base := sourceName
	if i := strings.LastIndexAny(base, `/\:`); i >= 0 {
		base = base[i+1:]
	}
	stem, ext := base, ""
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem, ext = base[:i], base[i:]
	}
	if !sourceExtensions[ext] {
		ext = fallbackExtension
	}
	if !validStem(stem) {
		stem = fallbackStem
	}
	return stem + ext
}

func validStem(stem string) bool {
	if stem == "" || len(stem) > maxStemLen || stem[0] == '.' || isWindowsDevice(stem) {
		return false
	}
	for i := 0; i < len(stem); i++ {
		c := stem[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '+' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// isWindowsDevice checks the part before the first dot, as Windows does
// ("con.c" and "COM1.x.cpp" are devices too).
func isWindowsDevice(stem string) bool {
	name, _, _ := strings.Cut(strings.ToLower(stem), ".")
	if windowsDevices[name] {
		return true
	}
	if len(name) == 4 && (strings.HasPrefix(name, "com") || strings.HasPrefix(name, "lpt")) {
		return name[3] >= '1' && name[3] <= '9'
	}
	return false
}
