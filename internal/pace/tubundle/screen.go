package tubundle

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrRejected is what every Screen refusal wraps.
var ErrRejected = errors.New("source rejected")

// Screen is the worker's check of a decoded bundle before it writes or compiles anything: in
// every region, each directive is #define, #undef, #pragma (not GCC dependency, which looks a
// file up), #ident, #sccs, the null directive, `#include "pace-r/NNNNNN"` naming another
// region that nothing else includes, or `#line N` with at most a synthetic file name of this
// bundle. So the compiler opens no file but those the worker wrote, and compiles each
// region at most once.
//
// The regions are lexed as the preprocessor lexes them (line splices, comments, string,
// character and raw string literals), to tell a directive from text in a comment. Where the
// compile's language and standard change the lexing (trigraphs, raw strings, digit
// separators), every reading the text could get is screened, so no directive can hide from
// the screen behind a lexing choice the worker's compiler makes differently.
func Screen(b *Bundle) error {
	included := make([]bool, len(b.Regions))
	for _, f := range b.Forced {
		if included[f] {
			return rejected("region %d is forced twice", f)
		}
		included[f] = true
	}
	for i, reg := range b.Regions {
		// Every reading must find the same #include directives; the first one's marks stay.
		before := append([]bool(nil), included...)
		for n, r := range readingsFor(reg.Text) {
			seen := included
			if n > 0 {
				seen = append([]bool(nil), before...)
			}
			err := lex(reg.Text, r, func(d directive) error { return b.allow(d, seen) })
			if err != nil {
				return fmt.Errorf("%w: region %d: %v", ErrRejected, i, err)
			}
			if n > 0 && !sameMarks(seen, included) {
				return rejected("region %d includes other regions depending on how it is lexed", i)
			}
		}
	}
	return nil
}

func sameMarks(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func rejected(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRejected, fmt.Sprintf(format, a...))
}

// directive is a directive the screen found: its name and the rest of its logical line.
type directive struct {
	name string
	rest []byte
}

// allow judges one directive.
func (b *Bundle) allow(d directive, included []bool) error {
	switch d.name {
	case "", "define", "undef", "ident", "sccs":
		return nil
	case "pragma":
		w1, i := word(d.rest, 0)
		if w2, _ := word(d.rest, i); w1 == "GCC" && (w2 == "dependency" || w2 == "pch_preprocess") {
			return fmt.Errorf("#pragma GCC %s", w2)
		}
		return nil
	case "include":
		n, ok := synthetic6(trimLine(d.rest), `"pace-r/`, `"`)
		switch {
		case !ok || n <= 0 || n >= len(b.Regions):
			return fmt.Errorf("#include %q", printable(d.rest, 64))
		case included[n]:
			return fmt.Errorf("region %d included twice", n)
		}
		included[n] = true
		return nil
	case "line":
		return b.allowLine(trimLine(d.rest))
	}
	return fmt.Errorf("#%s", printable([]byte(d.name), 32))
}

// allowLine accepts `N` or `N "pace-f/NNNNNN/<base>"` naming a file of the bundle.
func (b *Bundle) allowLine(rest []byte) error {
	num, name, _ := bytes.Cut(rest, []byte(" "))
	n, err := strconv.ParseUint(string(num), 10, 31)
	if err != nil || n == 0 || len(num) > 10 || num[0] == '0' {
		return fmt.Errorf("#line %q", printable(rest, 64))
	}
	if len(name) == 0 {
		return nil
	}
	f, ok := synthetic6(name, `"pace-f/`, "/")
	if !ok || f >= len(b.Files) || string(name) != `"`+FileName(f, b.Files[f].Base)+`"` {
		return fmt.Errorf("#line %q", printable(rest, 64))
	}
	return nil
}

// synthetic6 reads prefix, six digits and sep at the start of s.
func synthetic6(s []byte, prefix, sep string) (int, bool) {
	rest, ok := bytes.CutPrefix(s, []byte(prefix))
	if !ok || len(rest) < 6+len(sep) || string(rest[6:6+len(sep)]) != sep {
		return 0, false
	}
	if sep == `"` && len(rest) != 7 {
		return 0, false
	}
	n := 0
	for _, c := range rest[:6] {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// trimLine drops the horizontal space around a directive's rest.
func trimLine(b []byte) []byte { return bytes.Trim(b, " \t\f\v\x00") }
