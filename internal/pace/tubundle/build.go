package tubundle

import (
	"fmt"
	"strings"
)

// Source is what Build works from: gcc's -E -fdirectives-only output of one compile, and how
// to read the files it names and the names a local compile records for them.
type Source struct {
	Text []byte
	// Read returns a file as its line markers name it (relative to the compile's directory);
	// an error leaves the file without content.
	Read         func(name string) ([]byte, error)
	Debug, Macro func(name string) string
	SourceName   string // the source as spelled on the command line
	Locale       string // LocaleC or LocaleCUTF8
}

// Built is a bundle and what the client keeps to read the worker's answer.
type Built struct {
	Bundle *Bundle
	Names  []string // each file's name as the local compile prints it, by index
	// Inexact says why the worker's diagnostics could differ from a local compile's, ""
	// when they cannot: a directive gcc rewrote that could not be restored.
	Inexact string
}

// Build splits the directives-only text into regions (see the package comment). It refuses
// (ErrUnbuildable) text that is not gcc's directives-only output as expected, text whose
// lines do not match the files they came from (a pragma gcc consumed there, a file changed
// since), and pragmas that directives-only output drops although they change the compile.
func Build(s Source) (*Built, error) {
	b := &builder{src: s, lines: splitLines(s.Text), fileIdx: map[string]int{}}
	if err := b.parse(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnbuildable, err)
	}
	if err := b.finish(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnbuildable, err)
	}
	return b.built, nil
}

// lineRef is where a region line came from: a line of a file, or a line of pace's own.
type lineRef struct{ file, line int }

var synthetic = lineRef{file: -1}

// region is a file entry being built.
type region struct {
	idx    int
	system bool
	lines  [][]byte
	refs   []lineRef
	file   int // the file the next line belongs to
	next   int // its line number
}

type builder struct {
	src     Source
	lines   [][]byte
	pos     int
	fileIdx map[string]int
	names   []string
	files   []File
	lines0  [][][]byte // each file's original lines, split once
	regions []*region
	forced  []int
	built   *Built
	inexact string
}

// file registers name and returns its index, reading the original on first sight.
func (b *builder) file(name string) (int, error) {
	if i, ok := b.fileIdx[name]; ok {
		return i, nil
	}
	base := name[strings.LastIndexByte(name, '/')+1:]
	if !validBase(base) {
		return 0, fmt.Errorf("file name %q: its base name cannot be carried", name)
	}
	f := File{Base: base, Debug: b.src.Debug(name), Macro: b.src.Macro(name)}
	if !validName(f.Debug) || !validName(f.Macro) {
		return 0, fmt.Errorf("file name %q maps to a name a prefix map cannot carry", name)
	}
	if content, err := b.src.Read(name); err == nil {
		f.Content, f.HasContent = content, true
	}
	if len(b.files) == MaxFiles {
		return 0, fmt.Errorf("more than %d files", MaxFiles)
	}
	i := len(b.files)
	b.fileIdx[name] = i
	b.names = append(b.names, name)
	b.files = append(b.files, f)
	b.lines0 = append(b.lines0, splitLines(f.Content))
	return i, nil
}

func (b *builder) newRegion(system bool) (*region, error) {
	if len(b.regions) == MaxRegions {
		return nil, fmt.Errorf("more than %d file entries", MaxRegions)
	}
	r := &region{idx: len(b.regions), system: system}
	b.regions = append(b.regions, r)
	return r, nil
}

// emit adds a line of the current file to r.
func (r *region) emit(l []byte) {
	r.lines = append(r.lines, l)
	r.refs = append(r.refs, lineRef{r.file, r.next})
	r.next++
}

// emitOwn adds a line of pace's own, which stands on the current line.
func (r *region) emitOwn(l string) {
	r.lines = append(r.lines, []byte(l))
	r.refs = append(r.refs, synthetic)
	r.next++
}

// maxPad bounds the blank lines a forward jump is written as; a longer one is a #line.
const maxPad = 1 << 16

// jump moves r to line n of its current file: blank lines forward, #line back.
func (r *region) jump(n int) {
	switch {
	case n == r.next:
	case n > r.next && n-r.next <= maxPad:
		for r.next < n {
			r.lines = append(r.lines, nil)
			r.refs = append(r.refs, lineRef{r.file, r.next})
			r.next++
		}
	default:
		r.emitOwn(fmt.Sprintf("#line %d", n))
		r.next = n
	}
}

// rename starts line n of file f in r, as a #line directive.
func (r *region) rename(f int, base string, n int) {
	r.emitOwn(fmt.Sprintf("#line %d %q", n, FileName(f, base)))
	r.file, r.next = f, n
}
