package ccargs

import "strings"

// Tokens that stand for the checkout roots in keys and stored values (pace-wire §2.3). They
// are the same strings internal/pace/value writes into stored text.
const (
	SrcRootToken   = "<SRCROOT>"
	BuildTreeToken = "<BUILDTREE>"
)

// Roots are the source root (PACE_SOURCE_DIR) and build tree (PACE_BINARY_DIR). Either may be
// empty; both empty leaves every path verbatim, so absolute paths stay in the key. Only
// absolute roots are used, compared byte for byte on a segment boundary (POSIX layout: MSVC
// drivers are out of scope on Linux).
type Roots struct {
	Source string
	Build  string
}

// Empty reports whether no usable root is set.
func (r Roots) Empty() bool { return cleanRoot(r.Source) == "" && cleanRoot(r.Build) == "" }

// cleanRoot drops trailing separators (keeping "/" whole) and ignores relative roots.
func cleanRoot(p string) string {
	if !strings.HasPrefix(p, "/") {
		return ""
	}
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// tailUnder returns the part of p below root, and whether p is root itself or under it on a
// segment boundary (/src2 is not under /src).
func tailUnder(p, root string) (tail string, under bool) {
	if root == "" || !strings.HasPrefix(p, root) {
		return "", false
	}
	switch {
	case len(p) == len(root):
		return "", true
	case root == "/":
		return p[1:], true
	case p[len(root)] == '/':
		return p[len(root)+1:], true
	}
	return "", false
}

// Relativize turns a path under a root into TOKEN or TOKEN/tail; the longer root wins, so a
// build tree inside the source tree gives <BUILDTREE>, and on a tie (an in-source build) the
// build tree wins, as internal/pace/value decides. Other paths, relative ones included, are
// returned unchanged.
func (r Roots) Relativize(p string) string {
	src, build := cleanRoot(r.Source), cleanRoot(r.Build)
	srcTail, inSrc := tailUnder(p, src)
	buildTail, inBuild := tailUnder(p, build)
	switch {
	case inBuild && (!inSrc || len(build) >= len(src)):
		return withTail(BuildTreeToken, p, build, buildTail)
	case inSrc:
		return withTail(SrcRootToken, p, src, srcTail)
	}
	return p
}

func withTail(token, p, root, tail string) string {
	if len(p) == len(root) {
		return token
	}
	return token + "/" + tail
}

// Localize is Relativize's inverse on the consumer's side: TOKEN and TOKEN/tail become the
// consumer's root and root/tail. A token whose root is not set is left as it is.
func (r Roots) Localize(p string) string {
	for _, c := range []struct{ token, root string }{{BuildTreeToken, cleanRoot(r.Build)}, {SrcRootToken, cleanRoot(r.Source)}} {
		if c.root == "" {
			continue
		}
		rest, ok := strings.CutPrefix(p, c.token)
		switch {
		case !ok:
			continue
		case rest == "":
			return c.root
		case rest[0] != '/':
			continue
		case c.root == "/":
			return c.root + rest[1:]
		}
		return c.root + rest
	}
	return p
}

// spellsToken reports whether p already reads like a relativized path; such a spelling would
// key the same as a real path under a root, so the command passes through instead.
func spellsToken(p string) bool {
	return strings.HasPrefix(p, SrcRootToken) || strings.HasPrefix(p, BuildTreeToken)
}
