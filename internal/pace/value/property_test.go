package value

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func genValue() *rapid.Generator[Value] {
	return rapid.Custom(func(t *rapid.T) Value {
		v := Value{Object: rapid.SliceOf(rapid.Byte()).Draw(t, "object")}
		for i := range rapid.IntRange(0, 4).Draw(t, "regions") {
			v.Regions = append(v.Regions, Region{
				Grammar: Grammar(rapid.IntRange(0, int(GnuDiagnostics)).Draw(t, fmt.Sprint("grammar", i))),
				Text:    rapid.SliceOf(rapid.Byte()).Draw(t, fmt.Sprint("text", i)),
			})
		}
		return v
	})
}

// normalizeEmpty makes nil and empty slices compare equal: the wire cannot tell them apart.
var normalizeEmpty = cmp.Transformer("bytes", func(b []byte) string { return string(b) })

func TestPropertyEncodeDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := genValue().Draw(t, "value")
		b, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(v)): %v", err)
		}
		if diff := cmp.Diff(v, got, normalizeEmpty); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		again, _ := Encode(got)
		if !bytes.Equal(again, b) {
			t.Fatal("Encode(Decode(b)) != b")
		}
	})
}

// pathWorld is a generated pair of roots plus a way to spell paths under them and outside them.
type pathWorld struct {
	roots   Roots
	sep     string
	outside string // a prefix under neither root
}

func genWorld(t *rapid.T) pathWorld {
	var w pathWorld
	var base string
	if rapid.Bool().Draw(t, "windows") {
		drive := rapid.SampledFrom([]string{"C", "d", "E"}).Draw(t, "drive")
		w.sep = rapid.SampledFrom([]string{`\`, "/"}).Draw(t, "sep")
		base, w.outside = drive+":"+w.sep, "Z:"+w.sep+"sdk"
	} else {
		w.sep, base, w.outside = "/", "/", "/opt/outside"
	}
	src := base + strings.Join(genComponents(t, "src", 0, 3), w.sep)
	if rapid.Bool().Draw(t, "trailing separator") && !strings.HasSuffix(src, w.sep) {
		src += w.sep
	}
	switch rapid.IntRange(0, 3).Draw(t, "build tree") {
	case 0:
		w.roots = Roots{SrcRoot: src}
	case 1:
		w.roots = Roots{SrcRoot: src, BuildTree: strings.TrimSuffix(src, w.sep) + w.sep + "build"}
	case 2:
		w.roots = Roots{SrcRoot: src, BuildTree: base + "bt" + w.sep + "out"}
	default:
		w.roots = Roots{BuildTree: src}
	}
	return w
}

// genComponents draws path components; blanks, '$' and '#' exercise the depfile escapes.
func genComponents(t *rapid.T, label string, minN, maxN int) []string {
	comp := rapid.StringMatching(`[A-Za-z0-9._-]([A-Za-z0-9._ $#-]{0,6}[A-Za-z0-9._-])?`)
	return rapid.SliceOfN(comp, minN, maxN).Draw(t, label)
}

// genPath spells a path under one of the roots (as the root spells itself) or outside both.
func (w pathWorld) genPath(t *rapid.T, label string) string {
	var prefix string
	switch rapid.IntRange(0, 2).Draw(t, label+" under") {
	case 0:
		prefix = w.roots.SrcRoot
	case 1:
		prefix = w.roots.BuildTree
	}
	if prefix == "" {
		prefix = w.outside
	}
	comps := genComponents(t, label, 0, 3)
	if len(comps) == 0 {
		return prefix
	}
	return strings.TrimSuffix(prefix, w.sep) + w.sep + strings.Join(comps, w.sep)
}

// genText builds a text of grammar g whose paths all come from w.
func (w pathWorld) genText(t *rapid.T, g Grammar) []byte {
	var b strings.Builder
	n := rapid.IntRange(0, 5).Draw(t, "lines")
	eol := rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol")
	paths := make([]string, n)
	for i := range paths {
		paths[i] = w.genPath(t, fmt.Sprint("path", i))
	}
	switch g {
	case ShowIncludes:
		for i, p := range paths {
			fmt.Fprintf(&b, "Note: including file:%s%s%sa%d.cpp%s", strings.Repeat(" ", i%3+1), p, eol, i, eol)
		}
	case MsvcDiagnostics:
		for i, p := range paths {
			fmt.Fprintf(&b, "%s(%d,%d): warning C4%03d: message%s", p, i+1, i*2, i, eol)
		}
	case GnuDiagnostics:
		shapes := []string{"%s:%d:3: warning: w%s", "In file included from %s:%d,%s", "                 from %s:%d:%s", "%s: In function ‘f’:%.0d%s"}
		for i, p := range paths {
			fmt.Fprintf(&b, shapes[i%len(shapes)], p, i+1, eol)
		}
	case GccDepfile:
		b.WriteString("out/a.o:")
		for _, p := range paths {
			b.WriteString(" \\" + eol + "  " + string(appendEscapedDepPath(nil, []byte(p))))
		}
		b.WriteString(eol)
		for _, p := range paths {
			b.WriteString(eol + string(appendEscapedDepPath(nil, []byte(p))) + ":" + eol)
		}
	}
	return []byte(b.String())
}

func TestPropertyLocalizeInvertsCanonicalize(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		g := Grammar(rapid.IntRange(0, int(GnuDiagnostics)).Draw(t, "grammar"))
		text := w.genText(t, g)
		canonical := CanonicalizeText(g, text, w.roots)
		back := LocalizeText(g, canonical, w.roots)
		if !bytes.Equal(back, text) {
			t.Fatalf("roots %+v grammar %s\n text:      %q\n canonical: %q\n localized: %q", w.roots, g, text, canonical, back)
		}
		for _, r := range []string{w.roots.SrcRoot, w.roots.BuildTree} {
			if len(r) > 3 && bytes.Contains(canonical, []byte(r+w.sep)) {
				t.Fatalf("canonical text still names root %q: %q", r, canonical)
			}
		}
	})
}

// genNoisyText mixes fragments that stress every grammar's span finder.
func genNoisyText(t *rapid.T, w pathWorld) []byte {
	fragments := []string{"/", `\`, " ", "\t", ":", "::", "\n", "\r\n", "\\\n", "1", "12", "a", "b.h", "(", ")", "(3):", ",",
		"$", "$$", "#", `\#`, `\ `, "Note: including file: ", "In file included from ", "   from ", ": In function f:",
		"<SRCROOT>", "<BUILDTREE>", "\x1b[01m\x1b[K", "C:", w.roots.SrcRoot, w.roots.BuildTree, w.sep}
	parts := rapid.SliceOfN(rapid.SampledFrom(fragments), 0, 40).Draw(t, "fragments")
	return []byte(strings.Join(parts, ""))
}

func TestPropertyCanonicalizeIsIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		g := Grammar(rapid.IntRange(0, int(GnuDiagnostics)).Draw(t, "grammar"))
		text := genNoisyText(t, w)
		once := CanonicalizeText(g, text, w.roots)
		twice := CanonicalizeText(g, once, w.roots)
		if !bytes.Equal(once, twice) {
			t.Fatalf("roots %+v grammar %s\n text:  %q\n once:  %q\n twice: %q", w.roots, g, text, once, twice)
		}
	})
}

func TestPropertyDepfileRewritingKeepsTheRuleStructure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		text := genNoisyText(t, w)
		out := CanonicalizeText(GccDepfile, text, w.roots)
		if want, got := depfileShape(text), depfileShape(out); want != got {
			t.Fatalf("shape changed\n in:  %q %s\n out: %q %s", text, want, out, got)
		}
	})
}

// depfileShape summarises a depfile's rules: per logical line, token counts around the colon.
func depfileShape(text []byte) string {
	var b strings.Builder
	var r depRule
	for pos := 0; pos < len(text); pos = r.end {
		r = scanDepRule(text, pos, r.tokens[:0])
		fmt.Fprintf(&b, "[%v %d/%d]", r.hasColon, r.firstDep, len(r.tokens))
	}
	return b.String()
}

func TestPropertyDepfileEscapingRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		path := rapid.StringMatching(`[a-z/\\ \t$#:]{0,12}[a-z]`).Draw(t, "path")
		esc := appendEscapedDepPath(nil, []byte(path))
		if end := depTokenEnd(append(esc, ' '), 0, true); end != len(esc) {
			t.Fatalf("escaped %q as %q, which tokenizes to %q", path, esc, esc[:end])
		}
		if got := unescapeDepPath(esc); string(got) != path {
			t.Fatalf("unescape(escape(%q)) = %q (escaped %q)", path, got, esc)
		}
	})
}

func TestPropertyManifestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := rapid.SliceOf(rapid.Custom(func(t *rapid.T) ManifestEntry {
			p := rapid.StringMatching(`<SRCROOT>/[a-z/]{0,8}`).Draw(t, "path")
			return ManifestEntry{Path: p, ContentHash: []byte("h:" + p)}
		})).Draw(t, "entries")
		m := Manifest{ToolchainStamp: rapid.SliceOf(rapid.Byte()).Draw(t, "stamp"), ObjectKey: []byte("key"), Entries: entries}
		b, err := EncodeManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeManifest(b)
		if err != nil {
			t.Fatalf("DecodeManifest(EncodeManifest(m)): %v", err)
		}
		shuffled := rapid.Permutation(entries).Draw(t, "shuffled")
		b2, _ := EncodeManifest(Manifest{ToolchainStamp: m.ToolchainStamp, ObjectKey: m.ObjectKey, Entries: shuffled})
		if !bytes.Equal(b, b2) {
			t.Fatal("encoding depends on entry order")
		}
		again, _ := EncodeManifest(got)
		if !bytes.Equal(again, b) {
			t.Fatal("Encode(Decode(b)) != b")
		}
		seen := map[string]bool{}
		for _, e := range entries {
			seen[e.Path] = true
		}
		if len(got.Entries) != len(seen) {
			t.Fatalf("%d distinct paths encoded as %d entries", len(seen), len(got.Entries))
		}
	})
}
