package tubundle

import "bytes"

// reading is one way the preprocessor may lex a text, by the language and standard.
type reading struct {
	trigraphs  bool // ISO modes: ??/ is a backslash, ??= a '#', ...
	raw        bool // C++11 and GNU C: R"delim(...)delim"
	separators bool // C++14: 1'000
}

// readingsFor lists the readings a region's text could get, skipping a choice the text gives
// no occasion to tell apart: a trigraph, a raw string's R" after no identifier (or after a
// prefix), a quote inside a pp-number.
func readingsFor(text []byte) []reading {
	joined := spliced(text) // a splice may join what the raw-string and quote triggers look for
	out := []reading{{}}
	for _, on := range []struct {
		present bool
		set     func(*reading)
	}{
		{hasTrigraph(text), func(r *reading) { r.trigraphs = true }},
		{hasRawString(joined), func(r *reading) { r.raw = true }},
		{hasDigitQuote(joined), func(r *reading) { r.separators = true }},
	} {
		if !on.present {
			continue
		}
		for _, r := range out {
			on.set(&r)
			out = append(out, r)
		}
	}
	return out
}

func hasTrigraph(t []byte) bool {
	for i := bytes.Index(t, []byte("??")); i >= 0 && i+2 < len(t); {
		if _, ok := trigraphs[t[i+2]]; ok {
			return true
		}
		j := bytes.Index(t[i+1:], []byte("??"))
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func hasRawString(t []byte) bool {
	for i := bytes.Index(t, []byte(`R"`)); i >= 0; {
		start := i
		for start > 0 && isIdent(t[start-1]) {
			start--
		}
		if isRawPrefix(t[start : i+1]) {
			return true
		}
		j := bytes.Index(t[i+2:], []byte(`R"`))
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// hasDigitQuote: a quote whose run of pp-number characters before it starts with a digit.
func hasDigitQuote(t []byte) bool {
	for i := bytes.IndexByte(t, '\''); i >= 0; {
		start := i
		for start > 0 && (isIdent(t[start-1]) || t[start-1] == '.' || t[start-1] == '\'') {
			start--
		}
		if start < i && (isDigit(t[start]) || t[start] == '.' && start+1 < i && isDigit(t[start+1])) {
			return true
		}
		j := bytes.IndexByte(t[i+1:], '\'')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// spliced is text without its line splices, backslash or trigraph ones, for the triggers;
// text itself when it has none.
func spliced(text []byte) []byte {
	if bytes.IndexByte(text, '\\') < 0 && !bytes.Contains(text, []byte("??/")) {
		return text
	}
	l := &lexer{t: text, r: reading{trigraphs: true}}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		if w := l.splice(i); w > 0 {
			i += w
			continue
		}
		out = append(out, text[i])
		i++
	}
	return out
}

var trigraphs = map[byte]byte{'=': '#', '/': '\\', '\'': '^', '(': '[', ')': ']', '!': '|', '<': '{', '>': '}', '-': '~'}

// lexer walks a text under one reading.
type lexer struct {
	t []byte
	r reading
}

// at is the character at i after trigraph replacement, and how many bytes it takes.
func (l *lexer) at(i int) (byte, int) {
	if i >= len(l.t) {
		return 0, 0
	}
	if l.r.trigraphs && l.t[i] == '?' && i+2 < len(l.t) && l.t[i+1] == '?' {
		if c, ok := trigraphs[l.t[i+2]]; ok {
			return c, 3
		}
	}
	return l.t[i], 1
}

// splice is the width of a line splice at i (a backslash, horizontal space, a line break),
// 0 when there is none.
func (l *lexer) splice(i int) int {
	c, w := l.at(i)
	if c != '\\' {
		return 0
	}
	j := i + w
	for j < len(l.t) && isHSpace(l.t[j]) {
		j++
	}
	switch {
	case j+1 < len(l.t) && l.t[j] == '\r' && l.t[j+1] == '\n':
		return j + 2 - i
	case j < len(l.t) && (l.t[j] == '\n' || l.t[j] == '\r'):
		return j + 1 - i
	}
	return 0
}

// next is the character at i after splices, its position and the position after it.
func (l *lexer) next(i int) (c byte, at, after int) {
	for {
		if w := l.splice(i); w > 0 {
			i += w
			continue
		}
		c, w := l.at(i)
		return c, i, i + w
	}
}

func isBreak(c byte) bool { return c == '\n' || c == '\r' }

// lex calls visit for every directive of text under reading r.
func lex(text []byte, r reading, visit func(directive) error) error {
	l := &lexer{t: text, r: r}
	lineStart := true
	for i := 0; i < len(text); {
		c, at, after := l.next(i)
		if at >= len(text) {
			return nil
		}
		var c2 byte
		var after2 int
		if c == '/' || c == '%' {
			c2, _, after2 = l.next(after)
		}
		switch {
		case isBreak(c):
			lineStart, i = true, after
		case c == '/' && c2 == '*':
			i = l.blockComment(after2)
		case c == '/' && c2 == '/':
			i = l.lineEnd(after2)
		case lineStart && (isHSpace(c) || c == 0):
			i = after
		case lineStart && c == '#' || lineStart && c == '%' && c2 == ':':
			lineStart = false
			if c == '%' {
				after = after2
			}
			d, end, ok := l.directive(after)
			if ok {
				if err := visit(d); err != nil {
					return err
				}
			}
			i = end
		default:
			lineStart = false
			i = l.token(c, at, after)
		}
	}
	return nil
}

// token skips one token that is not a comment or a directive, and returns where the next
// starts: literals whole, pp-numbers with their digit separators, identifiers whole (a raw
// string's prefix among them).
func (l *lexer) token(c byte, at, after int) int {
	switch {
	case c == '"' || c == '\'':
		return l.quoted(c, after)
	case c >= '0' && c <= '9' || c == '.' && l.digitAt(after):
		return l.number(after)
	case isIdent(c):
		end := after
		for {
			for end < len(l.t) && isIdent(l.t[end]) {
				end++ // the common case: no splice, no trigraph inside the identifier
			}
			c, _, a := l.next(end)
			if !isIdent(c) || end >= len(l.t) {
				break
			}
			end = a
		}
		if q, _, a := l.next(end); q == '"' && l.r.raw && isRawPrefix(l.t[at:end]) {
			return l.rawString(a)
		}
		return end
	}
	return after
}

func (l *lexer) digitAt(i int) bool {
	c, _, _ := l.next(i)
	return c >= '0' && c <= '9'
}

func isRawPrefix(p []byte) bool {
	switch string(p) {
	case "R", "u8R", "uR", "UR", "LR":
		return true
	}
	return false
}

// number skips a pp-number's rest: identifier characters, '.', signed exponents and, with
// digit separators, a quote followed by an identifier character.
func (l *lexer) number(i int) int {
	for {
		c, _, after := l.next(i)
		c2, _, after2 := l.next(after)
		switch {
		case i >= len(l.t):
			return i
		case (c == 'e' || c == 'E' || c == 'p' || c == 'P') && (c2 == '+' || c2 == '-'):
			i = after2
		case isIdent(c) || c == '.':
			i = after
		case c == '\'' && l.r.separators && isIdent(c2):
			i = after
		default:
			return i
		}
	}
}

// quoted skips a string or character literal; an unterminated one ends at the line break.
func (l *lexer) quoted(q byte, i int) int {
	stops := "\\\n\r" + string(q)
	for i < len(l.t) {
		if j := bytes.IndexAny(l.t[i:], stops); j > 0 && !l.r.trigraphs {
			i += j // the plain characters of the literal
		}
		c, at, after := l.next(i)
		switch {
		case at >= len(l.t) || isBreak(c):
			return at
		case c == '\\':
			_, _, i = l.next(after)
		case c == q:
			return after
		default:
			i = after
		}
	}
	return i
}

// rawString skips R"delim( ... )delim" from after the opening quote; inside it neither
// splices nor trigraphs apply. A malformed delimiter ends it as the preprocessor would not
// know to, at the line break, which keeps the following lines under the screen.
func (l *lexer) rawString(i int) int {
	open := bytes.IndexByte(l.t[i:], '(')
	if open < 0 || open > 16 || bytes.ContainsAny(l.t[i:i+open], " ()\\\t\v\f\n\r") {
		return l.quoted('"', i)
	}
	closing := append(append([]byte{')'}, l.t[i:i+open]...), '"')
	end := bytes.Index(l.t[i+open+1:], closing)
	if end < 0 {
		return len(l.t)
	}
	return i + open + 1 + end + len(closing)
}

// blockComment skips to after the comment's end; splices and trigraphs apply inside.
func (l *lexer) blockComment(i int) int {
	for i < len(l.t) {
		if j := bytes.IndexByte(l.t[i:], '*'); j > 0 && !l.r.trigraphs {
			i += j // nothing before the next '*' can end the comment
		}
		c, _, after := l.next(i)
		if c2, _, after2 := l.next(after); c == '*' && c2 == '/' {
			return after2
		}
		i = after
	}
	return len(l.t)
}

// lineEnd is the position of the line break that ends the logical line holding i.
func (l *lexer) lineEnd(i int) int {
	for i < len(l.t) {
		if j := bytes.IndexAny(l.t[i:], "\\\n\r"); j > 0 && !l.r.trigraphs {
			i += j
		}
		c, at, after := l.next(i)
		if at >= len(l.t) || isBreak(c) {
			return at
		}
		i = after
	}
	return len(l.t)
}

// directive reads the directive whose introducer ends at i: its name, then its rest, spliced,
// up to the line break (comments kept; one spanning lines is read whole). It returns where
// lexing goes on: right after the name, for the rest holds literals and comments too.
func (l *lexer) directive(i int) (directive, int, bool) {
	c, _, after := l.next(i)
	if c == '#' || c == '%' && l.t[min(after, len(l.t)-1)] == ':' {
		return directive{}, after, false // ## or %:%: : a paste, not a directive
	}
	i = l.skipSpace(i)
	var name []byte
	for {
		c, at, after := l.next(i)
		if at >= len(l.t) || !isIdent(c) {
			if at < len(l.t) && (c >= 0x80 || c == '$' || c == '\\') {
				name = append(name, '?') // an identifier that goes on: no name the screen knows
			}
			i = at
			break
		}
		name, i = append(name, c), after
	}
	var rest []byte
	for j := i; j < len(l.t); {
		c, at, after := l.next(j)
		c2, _, _ := l.next(after)
		if at >= len(l.t) || isBreak(c) {
			break
		}
		if c == '/' && c2 == '*' {
			end := l.blockComment(after + 1)
			rest, j = append(rest, l.t[at:end]...), end
			continue
		}
		rest, j = append(rest, c), after
	}
	return directive{name: string(name), rest: rest}, i, true
}

// skipSpace skips horizontal space and block comments within a directive.
func (l *lexer) skipSpace(i int) int {
	for i < len(l.t) {
		c, at, after := l.next(i)
		c2, _, after2 := l.next(after)
		switch {
		case isHSpace(c) || c == 0:
			i = after
		case c == '/' && c2 == '*':
			i = l.blockComment(after2)
		default:
			return at
		}
	}
	return i
}
