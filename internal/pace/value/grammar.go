package value

import "fmt"

// Grammar tags a text region with the syntax that says where its paths are (pace-wire §2.2).
type Grammar uint8

// Grammars (pace-wire §2.2). GnuDiagnostics, tag 3, was added so that a replayed GCC or
// Clang warning names the consumer's checkout rather than the producer's.
const (
	// ShowIncludes: "Note: including file:" lines (MSVC /showIncludes), indentation allowed.
	ShowIncludes Grammar = 0
	// MsvcDiagnostics: a leading "path(line[,col]):" location.
	MsvcDiagnostics Grammar = 1
	// GccDepfile: Make rule syntax as GCC and Clang write it with -MD/-MMD (and -MP).
	GccDepfile Grammar = 2
	// GnuDiagnostics: the leading location of GCC/Clang diagnostic lines: "path:line[:col]:",
	// "In file included from path:line[:col][,:]", "   from path:line[:col][,:]",
	// "path: In function ...:" and "path: At top level:".
	GnuDiagnostics Grammar = 3
)

// UnknownGrammarError names a grammar tag this generation does not define.
type UnknownGrammarError struct{ Grammar Grammar }

func (e *UnknownGrammarError) Error() string {
	return fmt.Sprintf("unknown region grammar %d", uint8(e.Grammar))
}

// Known reports whether g is defined in this generation.
func (g Grammar) Known() bool { return g <= GnuDiagnostics }

func (g Grammar) String() string {
	switch g {
	case ShowIncludes:
		return "show-includes"
	case MsvcDiagnostics:
		return "msvc-diagnostics"
	case GccDepfile:
		return "gcc-depfile"
	case GnuDiagnostics:
		return "gnu-diagnostics"
	}
	return fmt.Sprintf("grammar-%d", uint8(g))
}

// rewrite maps every path span g identifies in text through m. It returns text itself, and
// false, when nothing changed.
func (g Grammar) rewrite(text []byte, m pathMap) ([]byte, bool) {
	switch g {
	case ShowIncludes:
		return rewriteLines(text, m, showIncludesSpan)
	case MsvcDiagnostics:
		return rewriteLines(text, m, msvcDiagnosticSpan)
	case GccDepfile:
		return rewriteDepfile(text, m)
	case GnuDiagnostics:
		return rewriteLines(text, m, gnuDiagnosticSpan)
	}
	return text, false
}

// lineSpan finds the path span of one line (without its '\n' or trailing '\r'); ok is false
// when the line carries no path.
type lineSpan func(line []byte) (start, end int, ok bool)

// rewriteLines applies a line grammar to every line of text.
func rewriteLines(text []byte, m pathMap, span lineSpan) ([]byte, bool) {
	e := editor{src: text}
	for start := 0; start < len(text); {
		end := start
		for end < len(text) && text[end] != '\n' {
			end++
		}
		content := end
		if content > start && text[content-1] == '\r' {
			content--
		}
		if s, t, ok := span(text[start:content]); ok {
			e.rewrite(start+s, start+t, m)
		}
		start = end + 1
	}
	return e.finish()
}
