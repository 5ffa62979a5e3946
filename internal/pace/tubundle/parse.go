package tubundle

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// The layout gcc 12 gives directives-only output: `# 0 "<main>"`, with -g the working
// directory as `# 1 "<dir>//"`, the predefined macros under `# 0 "<built-in>"`, the
// command line's -D and -U under `# 0 "<command-line>"` and its forced includes
// (stdc-predef.h, -include) entered from there, then `# 1 "<main>"` and the main file, every
// include entered with flag 1 and left with flag 2 and every other jump or #line as a marker
// without either.

const (
	builtIn     = "<built-in>"
	commandLine = "<command-line>"
)

// markerAt reads the line at b.pos as a marker.
func (b *builder) markerAt() (marker, bool) {
	if b.pos >= len(b.lines) {
		return marker{}, false
	}
	return parseMarker(b.lines[b.pos])
}

// skipText moves past the lines up to the next marker.
func (b *builder) skipText() {
	for b.pos < len(b.lines) {
		if _, ok := parseMarker(b.lines[b.pos]); ok {
			return
		}
		b.pos++
	}
}

func (b *builder) parse() error {
	m, ok := b.markerAt()
	if !ok || m.line != 0 || m.enter || m.leave || strings.HasPrefix(m.name, "<") {
		return errors.New("the text does not open with the main file's line marker")
	}
	mainName := m.name
	mainFile, err := b.file(mainName)
	if err != nil {
		return err
	}
	b.pos++
	if m, ok := b.markerAt(); ok && m.line == 1 && strings.HasSuffix(m.name, "//") {
		b.pos++ // the working directory: the worker's comes from its prefix map
	}
	for m, ok := b.markerAt(); ok && m.name == builtIn; m, ok = b.markerAt() {
		b.pos++ // the predefined macros: the worker's compiler predefines the same
		b.skipText()
	}
	main, _ := b.newRegion(false)
	if err := b.commandLine(); err != nil {
		return err
	}
	if m, ok = b.markerAt(); !ok || m.name != mainName || m.enter || m.leave {
		return errors.New("the main file's text does not follow the command line's")
	}
	b.pos++
	main.rename(mainFile, b.files[mainFile].Base, m.line)
	_, err = b.body(main, "")
	return err
}

// commandLine reads the command line's section: its -D and -U (the worker is given the
// options themselves) and its forced includes, each a region of its own.
func (b *builder) commandLine() error {
	for {
		m, ok := b.markerAt()
		switch {
		case !ok:
			return errors.New("text where the command line's markers were expected")
		case m.name == commandLine && !m.enter && !m.leave:
			b.pos++
			b.skipText()
		case m.enter:
			b.pos++
			r, err := b.enter(m)
			if err != nil {
				return err
			}
			b.forced = append(b.forced, r.idx)
			if _, err := b.body(r, commandLine); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// enter starts the region of a file entered by marker m.
func (b *builder) enter(m marker) (*region, error) {
	r, err := b.newRegion(m.system)
	if err != nil {
		return nil, err
	}
	f, err := b.file(m.name)
	if err != nil {
		return nil, err
	}
	r.rename(f, b.files[f].Base, m.line)
	return r, nil
}

// body reads r's lines up to the marker that leaves it for parent ("" for the main file,
// which ends with the text), and returns the line that marker resumes the parent at.
func (b *builder) body(r *region, parent string) (int, error) {
	for b.pos < len(b.lines) {
		l := b.lines[b.pos]
		m, ok := parseMarker(l)
		if !ok {
			r.emit(l)
			b.pos++
			continue
		}
		if b.sameAsSource(r, l) {
			return 0, fmt.Errorf("%s:%d reads like a line marker", b.names[r.file], r.next)
		}
		b.pos++
		if m.leave {
			if parent == "" || m.name != parent {
				return 0, fmt.Errorf("a marker leaves %q for %q", b.names[r.file], m.name)
			}
			return m.line, nil
		}
		if err := b.marker(r, m); err != nil {
			return 0, err
		}
	}
	if parent != "" {
		return 0, fmt.Errorf("the text ends inside %q", b.names[r.file])
	}
	return 0, nil
}

// marker applies a marker that does not leave r: an included file's region, a jump within
// the file, or a #line naming another.
func (b *builder) marker(r *region, m marker) error {
	switch {
	case m.enter:
		child, err := b.enter(m)
		if err != nil {
			return err
		}
		r.emitOwn(fmt.Sprintf("#include %q", RegionName(child.idx)))
		resume, err := b.body(child, b.names[r.file])
		if err != nil {
			return err
		}
		r.jump(resume)
	case m.system && !r.system:
		return fmt.Errorf("%s turns into a system header part way (#pragma GCC system_header)", m.name)
	case m.name == b.names[r.file]:
		r.jump(m.line)
	default:
		f, err := b.file(m.name)
		if err != nil {
			return err
		}
		r.rename(f, b.files[f].Base, m.line)
	}
	return nil
}

// sameAsSource: the file has, where r stands, a line equal to the marker-like line l, so l
// may be the file's own text (a comment) rather than gcc's marker; either reading could be
// wrong, so the text is not bundled.
func (b *builder) sameAsSource(r *region, l []byte) bool {
	orig, ok := b.original(lineRef{r.file, r.next})
	return ok && bytes.Equal(orig, l)
}

// original is the file's own line ref.line (1-based), when the file was read.
func (b *builder) original(ref lineRef) ([]byte, bool) {
	if ref.file < 0 || !b.files[ref.file].HasContent {
		return nil, false
	}
	lines := b.lines0[ref.file]
	if ref.line < 1 || ref.line > len(lines) {
		return nil, true
	}
	return lines[ref.line-1], true
}
