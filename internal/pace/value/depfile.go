package value

// Depfile grammar (pace-wire §2.2, GccDepfile): Make rules as GCC and Clang write them.
//
//	targets: dependencies \
//	  more dependencies
//	header.h:            <- -MP phony rule
//
// Targets sit before the rule colon (a ':' followed by a blank, a line end or the end of the
// text, so the drive colon of "C:\x.o" is not one). Escapes follow GCC's and Clang's writers: a
// blank preceded by 2N+1 backslashes is N backslashes and a blank inside the name, "\#" is '#',
// "$$" is '$', a backslash-newline continues the logical line.
//
// Rewriting: the targets of the first rule are the build system's own output names and are never
// touched. Every dependency is a path and is rewritten. A later rule without dependencies is an
// -MP phony rule, whose targets are the dependency headers themselves; those are rewritten too,
// so that they keep naming the same files as the dependency list above them. A rewritten path
// is re-escaped in the compilers' own style; every byte outside rewritten paths survives.

// span is a half-open byte range.
type span struct{ start, end int }

// depRule is one logical line of a depfile.
type depRule struct {
	end       int    // index after the line's newline (or len(text))
	tokens    []span // targets then dependencies
	firstDep  int    // index into tokens of the first dependency
	hasColon  bool
	isComment bool
}

func rewriteDepfile(text []byte, m pathMap) ([]byte, bool) {
	e := editor{src: text}
	var rule depRule
	seenRule := false
	escaped := escapedPathMap(m)
	for pos := 0; pos < len(text); pos = rule.end {
		rule = scanDepRule(text, pos, rule.tokens[:0])
		if !rule.hasColon {
			continue // a comment, a blank line or something that is not a rule: verbatim
		}
		rewriteFrom := rule.firstDep
		if seenRule && rule.firstDep == len(rule.tokens) {
			rewriteFrom = 0 // -MP phony rule: its targets are dependency paths
		}
		seenRule = true
		for _, t := range rule.tokens[rewriteFrom:] {
			e.rewrite(t.start, t.end, escaped)
		}
	}
	return e.finish()
}

// escapedPathMap lifts a path map to Make-escaped tokens.
func escapedPathMap(m pathMap) pathMap {
	return func(raw []byte) ([]byte, bool) {
		mapped, ok := m(unescapeDepPath(raw))
		if !ok {
			return nil, false
		}
		return appendEscapedDepPath(nil, mapped), true
	}
}

// scanDepRule splits the logical line starting at start into tokens.
func scanDepRule(text []byte, start int, tokens []span) depRule {
	r := depRule{tokens: tokens}
	if j := skipBlanks(text, start); j < len(text) && text[j] == '#' {
		r.isComment = true
		r.end = lineEnd(text, j)
		return r
	}
	for i := start; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			r.end = i + 1
			r.firstDep = r.depStart()
			return r
		case c == '\\' && continuationLen(text, i) > 0:
			i += continuationLen(text, i)
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == ':' && !r.hasColon && isRuleColon(text, i):
			r.hasColon = true
			r.firstDep = len(r.tokens)
			i++
		default:
			end := depTokenEnd(text, i, r.hasColon)
			r.tokens = append(r.tokens, span{i, end})
			i = end
		}
	}
	r.end = len(text)
	r.firstDep = r.depStart()
	return r
}

func (r *depRule) depStart() int {
	if r.hasColon {
		return r.firstDep
	}
	return len(r.tokens)
}

func lineEnd(text []byte, i int) int {
	for i < len(text) && text[i] != '\n' {
		i++
	}
	if i < len(text) {
		i++
	}
	return i
}

// continuationLen is the length of a backslash-newline (or backslash-CRLF) at i, or 0.
func continuationLen(text []byte, i int) int {
	switch {
	case i+1 < len(text) && text[i+1] == '\n':
		return 2
	case i+2 < len(text) && text[i+1] == '\r' && text[i+2] == '\n':
		return 3
	}
	return 0
}

// isRuleColon reports whether the ':' at i separates targets from dependencies.
func isRuleColon(text []byte, i int) bool {
	if i+1 >= len(text) {
		return true
	}
	switch text[i+1] {
	case ' ', '\t', '\r', '\n':
		return true
	case '\\':
		return continuationLen(text, i+1) > 0
	}
	return false
}

// depTokenEnd returns the end of the token that starts at i.
func depTokenEnd(text []byte, i int, afterColon bool) int {
	j := i
	for j < len(text) {
		switch c := text[j]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			return j
		case c == ':' && !afterColon && j > i && isRuleColon(text, j):
			return j
		case c == '\\':
			k := backslashRun(text, j)
			after := j + k
			if after < len(text) {
				switch d := text[after]; {
				case d == ' ' || d == '\t':
					if k%2 == 0 {
						return after // N literal backslashes end the name
					}
					j = after + 1 // an escaped blank belongs to the name
					continue
				case continuationLen(text, after-1) > 0:
					return after - 1 // the last backslash starts a continuation
				}
			}
			j = after
		default:
			j++
		}
	}
	return j
}

func backslashRun(b []byte, i int) int {
	k := 0
	for i+k < len(b) && b[i+k] == '\\' {
		k++
	}
	return k
}

// unescapeDepPath turns a raw token into the path it names.
func unescapeDepPath(raw []byte) []byte {
	if !needsDepUnescape(raw) {
		return raw
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			k := backslashRun(raw, i)
			after := i + k
			switch {
			case after < len(raw) && (raw[after] == ' ' || raw[after] == '\t'):
				out = appendBackslashes(out, k/2)
				out = append(out, raw[after])
				after++
			case after < len(raw) && raw[after] == '#':
				out = appendBackslashes(out, k-1)
				out = append(out, '#')
				after++
			default:
				out = appendBackslashes(out, k)
			}
			i = after
		case c == '$' && i+1 < len(raw) && raw[i+1] == '$':
			out = append(out, '$')
			i += 2
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

func needsDepUnescape(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' || c == '$' {
			return true
		}
	}
	return false
}

func appendBackslashes(b []byte, n int) []byte {
	for range n {
		b = append(b, '\\')
	}
	return b
}

// appendEscapedDepPath writes path the way GCC and Clang do: a blank gets a backslash and the
// backslashes right before it are doubled, '#' becomes "\#", '$' becomes "$$".
func appendEscapedDepPath(dst, path []byte) []byte {
	run := 0
	for _, c := range path {
		switch c {
		case ' ', '\t':
			dst = appendBackslashes(dst, run+1)
		case '#':
			dst = append(dst, '\\')
		case '$':
			dst = append(dst, '$')
		}
		dst = append(dst, c)
		if c == '\\' {
			run++
		} else {
			run = 0
		}
	}
	return dst
}

// DepfileDependencies lists the dependency paths of a depfile's first rule, unescaped, in order
// and without duplicates: what pace-cc keys, records in a manifest and checks before a replay.
// Later (-MP phony) rules only repeat them.
func DepfileDependencies(text []byte) []string { return dependencies(text, true) }

// RulesDependencies lists the dependency paths of every rule, unescaped, in order and without
// duplicates: a dependency listing over several sources prints one rule each.
func RulesDependencies(text []byte) []string { return dependencies(text, false) }

func dependencies(text []byte, firstRuleOnly bool) []string {
	var out []string
	seen := map[string]bool{}
	var rule depRule
	for pos := 0; pos < len(text); pos = rule.end {
		rule = scanDepRule(text, pos, rule.tokens[:0])
		if !rule.hasColon {
			continue
		}
		for _, t := range rule.tokens[rule.firstDep:] {
			p := string(unescapeDepPath(text[t.start:t.end]))
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		if firstRuleOnly {
			break
		}
	}
	return out
}
