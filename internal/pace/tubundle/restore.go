package tubundle

import (
	"bytes"
	"fmt"
)

// finish checks every region against the files it came from, restores the directive lines
// gcc rewrote, refuses the pragmas directives-only output drops, and assembles the bundle.
func (b *builder) finish() error {
	for _, r := range b.regions {
		if err := b.restore(r); err != nil {
			return err
		}
	}
	if err := b.checkPragmas(); err != nil {
		return err
	}
	src := b.src.SourceName
	base := src[lastSlash(src)+1:]
	if !validBase(base) {
		base = "tu"
	}
	bundle := &Bundle{
		Locale: b.src.Locale, Files: b.files, Forced: b.forced,
		Source: File{Base: base, Debug: b.src.Debug(src), Macro: b.src.Macro(src)},
	}
	if !validName(bundle.Source.Debug) || !validName(bundle.Source.Macro) {
		return fmt.Errorf("the source's name maps to a name a prefix map cannot carry")
	}
	for _, r := range b.regions {
		bundle.Regions = append(bundle.Regions, Region{System: r.system, Text: joinLines(r.lines)})
	}
	b.built = &Built{Bundle: bundle, Names: b.names, Inexact: b.inexact}
	return nil
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func joinLines(lines [][]byte) []byte {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	out := make([]byte, 0, n)
	for _, l := range lines {
		out = append(append(out, l...), '\n')
	}
	return out
}

// restore holds every line of r to the file it came from: a line of text must be the file's
// own line, and a directive line (which gcc writes normalized, on one line) is put back as
// the file has it, continuation lines and comments included, so that the columns of macro
// bodies are the file's. A directive that cannot be put back stays as gcc wrote it: the
// object is the same, the columns of a diagnostic inside it may not be (Built.Inexact).
func (b *builder) restore(r *region) error {
	for i := 0; i < len(r.lines); i++ {
		ref, l := r.refs[i], r.lines[i]
		if ref.file < 0 || isBlank(l) {
			continue
		}
		orig, read := b.original(ref)
		if !read {
			if _, dir := directiveName(l); dir {
				b.noteInexact(fmt.Sprintf("a directive of %s, which was not read", b.names[ref.file]))
			}
			continue
		}
		if bytes.Equal(l, orig) {
			continue
		}
		name, dir := directiveName(l)
		oname, odir := directiveName(orig)
		if !dir || !odir || name != oname || name == "" || name[0] >= '0' && name[0] <= '9' {
			return fmt.Errorf("%s:%d is not the preprocessor's line there (a consumed pragma, or an edit)", b.names[ref.file], ref.line)
		}
		k := directiveExtent(b.lines0[ref.file], ref.line-1)
		if k < 0 || !r.blankAfter(i, k) {
			b.noteInexact(fmt.Sprintf("the #%s at %s:%d", name, b.names[ref.file], ref.line))
			continue
		}
		for j := 0; j <= k; j++ {
			r.lines[i+j] = b.lines0[ref.file][ref.line-1+j]
		}
		i += k
	}
	return nil
}

// blankAfter: the k lines after line i are blank and are the next lines of the same file,
// or the region ends first (gcc leaves a file right after its last directive's first line):
// then the region is grown by the missing lines.
func (r *region) blankAfter(i, k int) bool {
	for j := 1; j <= k; j++ {
		ref := lineRef{r.refs[i].file, r.refs[i].line + j}
		if i+j == len(r.lines) {
			r.lines = append(r.lines, nil)
			r.refs = append(r.refs, ref)
			continue
		}
		if r.refs[i+j] != ref || !isBlank(r.lines[i+j]) {
			return false
		}
	}
	return true
}

func (b *builder) noteInexact(why string) {
	if b.inexact == "" {
		b.inexact = why + " could not be restored"
	}
}

// consumedPragmas are the pragmas gcc's directives-only output drops though they change the
// compile: macro stacks, poisoning, the message and the renaming pragmas, and those that
// print or read files.
var consumedPragmas = map[string]bool{
	"push_macro": true, "pop_macro": true, "poison": true, "message": true,
	"redefine_extname": true, "include_alias": true,
}

var consumedGCCPragmas = map[string]bool{
	"poison": true, "warning": true, "error": true, "dependency": true,
	"push_macro": true, "pop_macro": true,
}

// checkPragmas refuses a translation unit any of whose files holds a pragma the
// directives-only text loses (wherever it stands: a skipped one is refused too), or a
// system_header pragma in a file entered as a user header.
func (b *builder) checkPragmas() error {
	user := make([]bool, len(b.files))
	for _, r := range b.regions {
		if !r.system {
			for _, ref := range r.refs {
				if ref.file >= 0 {
					user[ref.file] = true
				}
			}
		}
	}
	for f, lines := range b.lines0 {
		for n, l := range lines {
			p1, p2, ok := pragmaWords(l)
			switch {
			case !ok && bytes.Contains(l, []byte("_Pragma")) && (bytes.Contains(l, []byte("push_macro")) || bytes.Contains(l, []byte("pop_macro"))):
				return fmt.Errorf("%s:%d: a _Pragma push_macro or pop_macro", b.names[f], n+1)
			case !ok:
			case consumedPragmas[p1], p1 == "GCC" && consumedGCCPragmas[p2]:
				return fmt.Errorf("%s:%d: #pragma %s %s is lost in directives-only output", b.names[f], n+1, p1, p2)
			case p1 == "GCC" && p2 == "system_header" && user[f]:
				return fmt.Errorf("%s:%d: #pragma GCC system_header in a user header", b.names[f], n+1)
			}
		}
	}
	return nil
}

// pragmaWords are the first two words of a #pragma line.
func pragmaWords(l []byte) (w1, w2 string, ok bool) {
	name, dir := directiveName(l)
	if !dir || name != "pragma" {
		return "", "", false
	}
	i := bytes.Index(l, []byte("pragma")) + len("pragma")
	w1, i = word(l, i)
	w2, _ = word(l, i)
	return w1, w2, true
}

func word(l []byte, i int) (string, int) {
	i = skipBlank(l, i)
	j := i
	for j < len(l) && isIdent(l[j]) {
		j++
	}
	return string(l[i:j]), j
}
