package dashboard

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// unescapeCell undoes escapeCell, so tests can check that nothing is lost.
func unescapeCell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		b.WriteByte(map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r', '\\': '\\'}[s[i]])
	}
	return b.String()
}

func TestEscapeCellTable(t *testing.T) {
	for in, want := range map[string]string{
		"":           "",
		"plain":      "plain",
		"a\tb":       `a\tb`,
		"a\nb\r\n":   `a\nb\r\n`,
		`back\slash`: `back\\slash`,
		`\t literal`: `\\t literal`,
		"ünïcode\t✓": `ünïcode\t✓`,
	} {
		if got := escapeCell(in); got != want {
			t.Errorf("escapeCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkCell: an escaped cell holds no tab, newline or carriage return, and unescapes to the
// text it came from.
func checkCell(t interface{ Fatalf(string, ...any) }, s string) {
	e := escapeCell(s)
	if strings.ContainsAny(e, "\t\n\r") {
		t.Fatalf("escapeCell(%q) = %q keeps a separator", s, e)
	}
	if back := unescapeCell(e); back != s {
		t.Fatalf("escapeCell(%q) = %q unescapes to %q", s, e, back)
	}
}

func TestEscapeCellProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOf(rapid.SampledFrom([]rune{'a', '\\', '\t', '\n', '\r', 't', 'n', 'é'})).Draw(t, "cell")
		checkCell(t, s)
	})
}

// FuzzEscapeCell runs its seed corpus (testdata/fuzz/FuzzEscapeCell) as a unit test.
func FuzzEscapeCell(f *testing.F) {
	f.Add("plain")
	f.Add("a\tb\\n")
	f.Fuzz(func(t *testing.T, s string) { checkCell(t, s) })
}
