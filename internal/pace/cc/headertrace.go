package cc

import (
	"bytes"
	"io"
)

// guardFooter opens the list gcc's -H prints last: headers without include guards, one path a
// line, each one it already named in the trace.
const guardFooter = "Multiple include guards may be useful for:"

// traceFilter takes the compiler's standard error under -H (pace-wire §3.6.2) and passes on
// exactly what the compiler would have printed without it, line by line as lines complete,
// while keeping the files the trace named. A trace line is one or more dots, a space and a
// path; diagnostics never start so (they start with a location, "In file included from",
// spaces, or the program's name).
type traceFilter struct {
	out     io.Writer
	partial []byte
	files   []string
	named   map[string]bool
	footer  bool // inside the guard footer
	pch     bool // a precompiled header was read ("! x.gch"): its contents are not traced
	passed  int  // bytes passed on
}

func newTraceFilter(out io.Writer) *traceFilter {
	return &traceFilter{out: out, named: make(map[string]bool)}
}

func (f *traceFilter) Write(p []byte) (int, error) {
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			break
		}
		f.line(f.partial[:i+1])
		f.partial = f.partial[i+1:]
	}
	if len(f.partial) == 0 {
		f.partial = nil // let the buffer go rather than grow it from an old base
	}
	return len(p), nil
}

// Close passes on a last line that had no newline.
func (f *traceFilter) Close() error {
	if len(f.partial) > 0 {
		f.line(f.partial)
		f.partial = nil
	}
	return nil
}

// line handles one line, its newline (if any) included.
func (f *traceFilter) line(l []byte) {
	text := string(bytes.TrimSuffix(l, []byte("\n")))
	if path, ok := tracedPath(text); ok {
		f.footer = false
		if !f.named[path] {
			f.named[path] = true
			f.files = append(f.files, path)
		}
		return
	}
	if path, ok := pchPath(text); ok {
		f.footer, f.pch = false, true
		f.named[path] = true
		return
	}
	switch {
	case text == guardFooter:
		f.footer = true
		return
	case f.footer && f.named[text]:
		return
	}
	f.footer = false
	n, _ := f.out.Write(l)
	f.passed += n
}

// tracedPath reads a trace line: dots, one space, a path.
func tracedPath(s string) (string, bool) {
	n := 0
	for n < len(s) && s[n] == '.' {
		n++
	}
	if n == 0 || n+1 >= len(s) || s[n] != ' ' {
		return "", false
	}
	return s[n+1:], true
}

// pchPath reads the line -H prints for a precompiled header it tried: "! path.gch" when it used
// it, "x path.gch" when it could not.
func pchPath(s string) (string, bool) {
	if len(s) < 7 || (s[0] != '!' && s[0] != 'x') || s[1] != ' ' || s[len(s)-4:] != ".gch" {
		return "", false
	}
	return s[2:], true
}
