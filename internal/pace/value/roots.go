package value

import (
	"bytes"
	"sort"
	"strings"
)

// Tokens that stand for the checkout roots in canonical text (pace-wire §2.3).
const (
	SrcRootToken   = "<SRCROOT>"
	BuildTreeToken = "<BUILDTREE>"
)

// Roots are the two checkout roots of pace-wire §2.3, as the producer (Canonicalize) or the
// consumer (Localize) spells them. Either may be empty; both empty means no rewriting at all.
type Roots struct {
	SrcRoot   string
	BuildTree string
}

// pathMap rewrites one path span; ok is false when the path is left as it is.
type pathMap func(path []byte) (rewritten []byte, ok bool)

// root is one configured root, prepared for matching and for joining.
type root struct {
	token []byte
	norm  []byte // comparison form: '/' separators in a Windows layout, no trailing separator unless bare
	bare  bool   // the root is its own trailing separator ("/", "C:/")
	local []byte // the spelling Localize writes back, trailing separators trimmed unless bare
	sep   byte   // the separator Localize uses in tails: the root's own style
}

// rootSet holds the configured roots, longest first so a nested root wins.
type rootSet struct {
	windows bool
	roots   []root
}

// WindowsLayout reports whether the roots are Windows-shaped: either uses a backslash or starts
// with a drive letter. Decided from the roots, never from the host.
func (r Roots) WindowsLayout() bool { return windowsShaped(r.SrcRoot) || windowsShaped(r.BuildTree) }

// Empty reports whether no root is set.
func (r Roots) Empty() bool { return r.SrcRoot == "" && r.BuildTree == "" }

func windowsShaped(p string) bool {
	return strings.IndexByte(p, '\\') >= 0 || (len(p) >= 2 && isASCIILetter(p[0]) && p[1] == ':')
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func newRootSet(r Roots) rootSet {
	rs := rootSet{windows: r.WindowsLayout()}
	// BuildTree is listed first so that, on a tie in length, the more specific concept wins.
	for _, spec := range []struct{ path, token string }{{r.BuildTree, BuildTreeToken}, {r.SrcRoot, SrcRootToken}} {
		if spec.path != "" {
			rs.roots = append(rs.roots, prepareRoot(spec.path, spec.token, rs.windows))
		}
	}
	sort.SliceStable(rs.roots, func(i, j int) bool { return len(rs.roots[i].norm) > len(rs.roots[j].norm) })
	return rs
}

func prepareRoot(path, token string, windows bool) root {
	norm := []byte(path)
	if windows {
		norm = bytes.ReplaceAll(norm, []byte{'\\'}, []byte{'/'})
		if len(norm) == 2 && norm[1] == ':' {
			norm = append(norm, '/') // "C:" names the drive's root
		}
	}
	norm = trimTrailingSeparators(norm, windows, func(c byte) bool { return c == '/' })
	local := trimTrailingSeparators([]byte(path), windows, func(c byte) bool { return c == '/' || (windows && c == '\\') })
	sep := byte('/')
	if bytes.IndexByte(local, '\\') >= 0 {
		sep = '\\'
	}
	return root{token: []byte(token), norm: norm, bare: norm[len(norm)-1] == '/', local: local, sep: sep}
}

// trimTrailingSeparators drops trailing separators but keeps a bare root ("/", "C:\") whole.
func trimTrailingSeparators(p []byte, windows bool, isSep func(byte) bool) []byte {
	for len(p) > 1 && isSep(p[len(p)-1]) {
		if windows && len(p) == 3 && p[1] == ':' {
			break
		}
		p = p[:len(p)-1]
	}
	return p
}

func (rs *rootSet) isSep(c byte) bool { return c == '/' || (rs.windows && c == '\\') }

// prefixEqual compares a path prefix with a normalized root: byte-exact on POSIX layouts,
// separator-insensitive and ASCII case-insensitive on Windows layouts.
func (rs *rootSet) prefixEqual(p, norm []byte) bool {
	if !rs.windows {
		return bytes.Equal(p, norm)
	}
	for i := range p {
		a, b := p[i], norm[i]
		if a == '\\' {
			a = '/'
		}
		if a != b && !(isASCIILetter(a) && a|0x20 == b|0x20) {
			return false
		}
	}
	return true
}

// canonical maps a path under a root to TOKEN or TOKEN/tail with '/' separators.
func (rs *rootSet) canonical(p []byte) ([]byte, bool) {
	for i := range rs.roots {
		r := &rs.roots[i]
		tail, ok := rs.tailUnder(p, r)
		if !ok {
			continue
		}
		out := make([]byte, 0, len(r.token)+1+len(tail))
		out = append(out, r.token...)
		if tail == nil {
			return out, true
		}
		out = append(out, '/')
		for _, c := range tail {
			if rs.windows && c == '\\' {
				c = '/'
			}
			out = append(out, c)
		}
		return out, true
	}
	return nil, false
}

// tailUnder returns the part of p after root r and its separator, nil for p equal to the root.
func (rs *rootSet) tailUnder(p []byte, r *root) ([]byte, bool) {
	n := len(r.norm)
	if len(p) < n || !rs.prefixEqual(p[:n], r.norm) {
		return nil, false
	}
	switch {
	case len(p) == n:
		return nil, true
	case r.bare:
		return p[n:], true
	case rs.isSep(p[n]):
		return p[n+1:], true
	}
	return nil, false // a sibling sharing a prefix, like /src2 beside /src
}

// local maps TOKEN or TOKEN/tail back to the consumer's root in its own separator style.
func (rs *rootSet) local(p []byte) ([]byte, bool) {
	for i := range rs.roots {
		r := &rs.roots[i]
		if !bytes.HasPrefix(p, r.token) {
			continue
		}
		rest := p[len(r.token):]
		if len(rest) == 0 {
			return append([]byte(nil), r.local...), true
		}
		if rest[0] != '/' {
			continue
		}
		return r.join(rest[1:]), true
	}
	return nil, false
}

func (r *root) join(tail []byte) []byte {
	out := make([]byte, 0, len(r.local)+1+len(tail))
	out = append(out, r.local...)
	if last := r.local[len(r.local)-1]; last != '/' && last != '\\' {
		out = append(out, r.sep)
	}
	for _, c := range tail {
		if c == '/' {
			c = r.sep
		}
		out = append(out, c)
	}
	return out
}

// editor rewrites spans of a text, copying only when the first span changes.
type editor struct {
	src     []byte
	out     []byte
	copied  int
	changed bool
}

func (e *editor) replace(start, end int, with []byte) {
	if !e.changed {
		e.out = make([]byte, 0, len(e.src)+len(with))
		e.changed = true
	}
	e.out = append(e.out, e.src[e.copied:start]...)
	e.out = append(e.out, with...)
	e.copied = end
}

// rewrite maps the span [start, end) through m, replacing it when m rewrites it.
func (e *editor) rewrite(start, end int, m pathMap) {
	if start >= end {
		return
	}
	if with, ok := m(e.src[start:end]); ok {
		e.replace(start, end, with)
	}
}

func (e *editor) finish() ([]byte, bool) {
	if !e.changed {
		return e.src, false
	}
	return append(e.out, e.src[e.copied:]...), true
}
