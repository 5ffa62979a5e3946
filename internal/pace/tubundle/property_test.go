package tubundle

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

var genBase = rapid.StringMatching(`[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,12}`)

func genFile(t *rapid.T, label string) File {
	f := File{Base: genBase.Draw(t, label+".base"), Debug: rapid.String().Filter(validName).Draw(t, label+".debug")}
	f.Macro = rapid.SampledFrom([]string{f.Debug, "./" + f.Base}).Draw(t, label+".macro")
	if f.HasContent = rapid.Bool().Draw(t, label+".read"); f.HasContent {
		f.Content = rapid.SliceOf(rapid.Byte()).Draw(t, label+".content")
	}
	return f
}

func genBundle(t *rapid.T) *Bundle {
	b := &Bundle{Locale: rapid.SampledFrom([]string{LocaleC, LocaleCUTF8}).Draw(t, "locale"), Source: genFile(t, "source")}
	b.Source.Content, b.Source.HasContent = nil, false
	for i := range rapid.IntRange(0, 5).Draw(t, "files") {
		b.Files = append(b.Files, genFile(t, fmt.Sprint("file", i)))
	}
	n := rapid.IntRange(1, 6).Draw(t, "regions")
	for i := range n {
		b.Regions = append(b.Regions, Region{System: i > 0 && rapid.Bool().Draw(t, "system"), Text: rapid.SliceOf(rapid.Byte()).Draw(t, "text")})
	}
	if n > 1 {
		b.Forced = rapid.SliceOfN(rapid.IntRange(1, n-1), 0, 3).Draw(t, "forced")
	}
	return b
}

func TestPropertyEncodeDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBundle(t)
		enc := Encode(nil, b)
		if len(enc) != encodedSize(b) {
			t.Fatalf("encoded %d bytes, sized %d", len(enc), encodedSize(b))
		}
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(b)): %v", err)
		}
		if diff := cmp.Diff(b, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// safeLines are lines a region may hold in any number and order: code, comments (some over
// lines), literals, allowed directives, text that looks like a directive only inside them.
var safeLines = []string{
	"int a = 1;", "  x = y /* c */ + 2;", "/* a\n#include \"x\"\n   b */", "// #include \"x\"",
	"const char *s = \"#if /* not a comment\";", "char c = '\\'';", "#define M(a) #a \\\n  a ## a",
	"#undef M", "#pragma GCC diagnostic ignored \"-Wx\"", "#  pragma once", "#ident \"v\"", "#line 9",
	"#line 3 \"pace-f/000000/m.c\"", "%:define D 1", "\t#\t", "long l = 1000000;",
}

// disguises are ways to spell an #include of a file the worker did not write.
var disguises = []string{
	"#include \"x\"", "  #  include \"x\"", "/* c */ #include \"x\"", "%:include \"x\"",
	"#inc\\\nlude \"x\"", "\x00#include <x>", "#include_next <x>", "# 1 \"/etc/passwd\"",
	"#line 1 \"/etc/passwd\"", "#pragma GCC dependency \"x\"", "#if __has_include(\"x\")\n#endif",
	"??=include \"x\"", "/*\n*/ #include \"x\"",
}

func TestPropertyScreenAcceptsSafeText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOf(rapid.SampledFrom(safeLines)).Draw(t, "lines")
		b := bundleOf(strings.Join(lines, "\n") + "\n")
		if err := Screen(b); err != nil {
			t.Fatalf("Screen(%q): %v", b.Regions[0].Text, err)
		}
	})
}

func TestPropertyScreenFindsEveryDisguise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOf(rapid.SampledFrom(safeLines)).Draw(t, "lines")
		at := rapid.IntRange(0, len(lines)).Draw(t, "at")
		bad := rapid.SampledFrom(disguises).Draw(t, "disguise")
		lines = append(lines[:at], append([]string{bad}, lines[at:]...)...)
		text := strings.Join(lines, "\n") + "\n"
		if err := Screen(bundleOf(text)); !errors.Is(err, ErrRejected) {
			t.Fatalf("Screen(%q) = %v, want a rejection", text, err)
		}
	})
}

func TestPropertyLocalizeMapsEveryName(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := genBundle(t)
		if len(b.Files) == 0 {
			return
		}
		names := make([]string, len(b.Files))
		for i := range names {
			names[i] = rapid.StringMatching(`[a-z./]{1,20}`).Draw(t, "name")
		}
		built := &Built{Bundle: b, Names: names}
		var got, want strings.Builder
		for range rapid.IntRange(0, 6).Draw(t, "diagnostics") {
			i := rapid.IntRange(0, len(names)-1).Draw(t, "file")
			text := rapid.StringMatching(`:[0-9]{1,3}:[0-9]: [a-z ]{0,20}\n`).Draw(t, "text")
			got.WriteString(FileName(i, b.Files[i].Base) + text)
			want.WriteString(names[i] + text)
		}
		out, ok, why := Localize([]byte(got.String()), built)
		if !ok || string(out) != want.String() {
			t.Fatalf("Localize(%q) = %q, %v (%s); want %q", got.String(), out, ok, why, want.String())
		}
	})
}
