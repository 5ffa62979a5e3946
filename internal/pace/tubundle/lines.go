package tubundle

import (
	"bytes"
	"strconv"
)

// splitLines cuts text at '\n'; a final line without one is kept, a final '\n' adds none.
// Carriage returns stay in the lines: gcc copies them from CRLF sources, and a line
// compares equal to the original only with them.
func splitLines(text []byte) [][]byte {
	if len(text) == 0 {
		return nil
	}
	lines := bytes.Split(text, []byte{'\n'})
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// marker is one of gcc's line markers: `# N "name" flags`.
type marker struct {
	line   int
	name   string
	enter  bool // flag 1: a file is entered
	leave  bool // flag 2: back in the file that included the one left
	system bool // flag 3
}

// parseMarker reads a line marker as gcc writes them; ok is false for any other line. gcc
// escapes '\' and '"' in the name, and other unprintable bytes as three octal digits.
func parseMarker(l []byte) (m marker, ok bool) {
	rest, ok := bytes.CutPrefix(l, []byte("# "))
	if !ok {
		return m, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(string(rest[:i]))
	if i == 0 || i > 10 || err != nil || !bytes.HasPrefix(rest[i:], []byte(` "`)) {
		return m, false
	}
	name, tail, ok := unquote(rest[i+2:])
	if !ok {
		return m, false
	}
	m = marker{line: n, name: name}
	for len(tail) > 0 {
		if len(tail) < 2 || tail[0] != ' ' || tail[1] < '1' || tail[1] > '4' {
			return m, false
		}
		m.enter = m.enter || tail[1] == '1'
		m.leave = m.leave || tail[1] == '2'
		m.system = m.system || tail[1] == '3'
		tail = tail[2:]
	}
	return m, !(m.enter && m.leave)
}

// unquote reads a marker's escaped name up to its closing quote.
func unquote(b []byte) (name string, rest []byte, ok bool) {
	var out []byte
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return string(out), b[i+1:], true
		case c != '\\':
			out = append(out, c)
		case i+1 < len(b) && (b[i+1] == '\\' || b[i+1] == '"'):
			out = append(out, b[i+1])
			i++
		case i+3 < len(b) && isOctal(b[i+1]) && isOctal(b[i+2]) && isOctal(b[i+3]):
			out = append(out, (b[i+1]-'0')<<6|(b[i+2]-'0')<<3|(b[i+3]-'0'))
			i += 3
		default:
			return "", nil, false
		}
	}
	return "", nil, false
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func isHSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' || c == '\v' }

// isBlank: a line of nothing but horizontal space (gcc writes such for a consumed directive).
func isBlank(l []byte) bool {
	for _, c := range l {
		if !isHSpace(c) && c != '\r' {
			return false
		}
	}
	return true
}

// directiveName is the name of the directive l opens (after leading space, '#', and space
// or one-line comments), or ok false when l is no directive line. A digit-led name is a line
// marker's.
func directiveName(l []byte) (name string, ok bool) {
	i := skipBlank(l, 0)
	if i >= len(l) || l[i] != '#' {
		return "", false
	}
	i = skipBlank(l, i+1)
	j := i
	for j < len(l) && isIdent(l[j]) {
		j++
	}
	return string(l[i:j]), true
}

// skipBlank skips horizontal space and block comments that close on the line.
func skipBlank(l []byte, i int) int {
	for i < len(l) {
		switch {
		case isHSpace(l[i]):
			i++
		case bytes.HasPrefix(l[i:], []byte("/*")):
			end := bytes.Index(l[i+2:], []byte("*/"))
			if end < 0 {
				return i
			}
			i += end + 4
		default:
			return i
		}
	}
	return i
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// maxExtent bounds how many lines one directive may continue over.
const maxExtent = 4096

// directiveExtent is how many physical lines after lines[start] the logical line it opens
// continues over: backslash-newlines, and block comments that close on a later line. It is
// -1 when that cannot be read for sure (a trigraph continuation, an unclosed comment or a
// directive longer than maxExtent lines).
func directiveExtent(lines [][]byte, start int) int {
	inComment := false
	for k := 0; start+k < len(lines) && k <= maxExtent; k++ {
		l := bytes.TrimRight(lines[start+k], "\r")
		var cont bool
		inComment, cont = scanDirectiveLine(l, inComment)
		if bytes.HasSuffix(bytes.TrimRight(l, " \t"), []byte("??/")) {
			return -1
		}
		if !inComment && !cont {
			return k
		}
	}
	return -1
}

// scanDirectiveLine follows one physical line of a directive: whether a block comment is
// open at its end and whether a backslash continues it. String and character literals end
// at the line's end, as in a directive.
func scanDirectiveLine(l []byte, inComment bool) (comment, cont bool) {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case inComment:
			if c == '*' && i+1 < len(l) && l[i+1] == '/' {
				inComment, i = false, i+1
			}
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && i+1 < len(l) && l[i+1] == '*':
			inComment, i = true, i+1
		case c == '/' && i+1 < len(l) && l[i+1] == '/':
			return false, endsWithBackslash(l)
		}
	}
	return inComment, !inComment && endsWithBackslash(l)
}

// endsWithBackslash: gcc splices a backslash followed by spaces and the newline, warning.
func endsWithBackslash(l []byte) bool {
	t := bytes.TrimRight(l, " \t\f\v")
	return len(t) > 0 && t[len(t)-1] == '\\'
}
