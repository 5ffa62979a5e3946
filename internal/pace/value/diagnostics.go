package value

import "bytes"

const showIncludesMarker = "Note: including file:"

// showIncludesSpan: blanks, the marker, nesting blanks, then the path to the end of the line.
func showIncludesSpan(line []byte) (int, int, bool) {
	i := skipBlanks(line, 0)
	if !bytes.HasPrefix(line[i:], []byte(showIncludesMarker)) {
		return 0, 0, false
	}
	i = skipBlanks(line, i+len(showIncludesMarker))
	return i, len(line), i < len(line)
}

// msvcDiagnosticSpan: optional blanks, then the path up to the first "(line[,col]):". A path
// may itself hold parentheses ("Program Files (x86)"), so only a complete location ends it.
func msvcDiagnosticSpan(line []byte) (int, int, bool) {
	start := skipBlanks(line, 0)
	for k := start + 1; k < len(line); k++ {
		if line[k] == '(' && msvcLocationAt(line, k) {
			return start, k, true
		}
	}
	return 0, 0, false
}

// msvcLocationAt reports whether line[k:] starts with "(digits[,digits]):".
func msvcLocationAt(line []byte, k int) bool {
	i := skipDigits(line, k+1)
	if i == k+1 {
		return false
	}
	if i < len(line) && line[i] == ',' {
		j := skipDigits(line, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	return i+1 < len(line) && line[i] == ')' && line[i+1] == ':'
}

var (
	includedFromPrefix = []byte("In file included from ")
	fromPrefix         = []byte("from ")
)

// gnuDiagnosticSpan recognises the GCC/Clang line shapes that start with a location.
func gnuDiagnosticSpan(line []byte) (int, int, bool) {
	i := skipCSI(line, 0)
	switch {
	case bytes.HasPrefix(line[i:], includedFromPrefix):
		return includeLocationSpan(line, skipCSI(line, i+len(includedFromPrefix)))
	case i < len(line) && (line[i] == ' ' || line[i] == '\t'):
		j := skipBlanks(line, i)
		if !bytes.HasPrefix(line[j:], fromPrefix) {
			return 0, 0, false // echoed source, carets, fix-it hints
		}
		return includeLocationSpan(line, skipCSI(line, j+len(fromPrefix)))
	}
	for k := i + 1; k < len(line); k++ {
		if line[k] != ':' {
			continue
		}
		if end, ok := lineColumnEnd(line, k); ok && end < len(line) && line[end] == ':' {
			return i, k, true
		}
		if bytes.HasPrefix(line[k:], []byte(": In ")) || bytes.HasPrefix(line[k:], []byte(": At ")) {
			return i, k, true
		}
	}
	return 0, 0, false
}

// includeLocationSpan: the path from start up to ":line[:col]" followed by ',', ':', a colour
// escape or the end of the line.
func includeLocationSpan(line []byte, start int) (int, int, bool) {
	for k := start + 1; k < len(line); k++ {
		if line[k] != ':' {
			continue
		}
		end, ok := lineColumnEnd(line, k)
		if ok && (end == len(line) || line[end] == ',' || line[end] == ':' || line[end] == 0x1b) {
			return start, k, true
		}
	}
	return 0, 0, false
}

// lineColumnEnd matches ":digits[:digits]" at line[k:] and returns the index after it. A
// ":digits:" followed by a non-digit ends after the line number, leaving that ':' to the caller.
func lineColumnEnd(line []byte, k int) (int, bool) {
	i := skipDigits(line, k+1)
	if i == k+1 {
		return 0, false
	}
	if i < len(line) && line[i] == ':' {
		if j := skipDigits(line, i+1); j > i+1 {
			return j, true
		}
	}
	return i, true
}

func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// skipCSI skips ANSI colour sequences (ESC '[' params final) that -fdiagnostics-color=always
// puts before a location; build systems such as Ninja commonly force colour on.
func skipCSI(b []byte, i int) int {
	for i+1 < len(b) && b[i] == 0x1b && b[i+1] == '[' {
		j := i + 2
		for j < len(b) && (b[j] >= 0x30 && b[j] <= 0x3f) {
			j++
		}
		if j >= len(b) || b[j] < 0x40 || b[j] > 0x7e {
			return i
		}
		i = j + 1
	}
	return i
}
