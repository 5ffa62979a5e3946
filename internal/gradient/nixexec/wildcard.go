package nixexec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadWildcard: a wildcard pattern does not parse.
var ErrBadWildcard = errors.New("nixexec: bad wildcard")

// Segment kinds of a pattern.
const (
	// AnyRecurse ("*") matches any attribute name; at the end of a pattern an attribute set
	// that is not a derivation is entered one more level (gradient-server §6.2).
	AnyRecurse = "*"
	// AnyFlat ("#") matches any attribute name without entering sets.
	AnyFlat = "#"
)

// Pattern is one attribute pattern of a wildcard: segments of names, "*" or "#". A quoted
// "*" or "#" is a literal attribute name; Literal marks those segments.
type Pattern struct {
	Exclude  bool
	Segments []string
	Literal  []bool
}

// String writes the pattern back in wildcard syntax.
func (p Pattern) String() string {
	parts := make([]string, len(p.Segments))
	for i, s := range p.Segments {
		wild := !p.Literal[i] && (s == AnyRecurse || s == AnyFlat)
		parts[i] = s
		if !wild && !plainName(s) {
			parts[i] = AttrName(s)
		}
	}
	out := strings.Join(parts, ".")
	if p.Exclude {
		return "!" + out
	}
	return out
}

// ParseWildcards parses the wildcards of a flake job: each string is a comma-separated list
// of patterns; a pattern is dot-separated segments, a leading "!" excludes what it matches,
// and a segment in double quotes is a literal attribute name (which may contain dots).
// Empty items are skipped; a wildcard without any include pattern is an error.
func ParseWildcards(wildcards []string) ([]Pattern, error) {
	var out []Pattern
	includes := 0
	for _, w := range wildcards {
		items, err := splitOutsideQuotes(w, ',')
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			p, err := parsePattern(item)
			if err != nil {
				return nil, err
			}
			if !p.Exclude {
				includes++
			}
			out = append(out, p)
		}
	}
	if includes == 0 {
		return nil, fmt.Errorf("%w: no attribute pattern to include in %q", ErrBadWildcard, wildcards)
	}
	return out, nil
}

func parsePattern(item string) (Pattern, error) {
	var p Pattern
	if rest, ok := strings.CutPrefix(item, "!"); ok {
		p.Exclude, item = true, strings.TrimSpace(rest)
	}
	segs, err := splitOutsideQuotes(item, '.')
	if err != nil {
		return p, err
	}
	for _, s := range segs {
		s = strings.TrimSpace(s)
		literal := false
		if strings.HasPrefix(s, `"`) {
			u, err := strconv.Unquote(s)
			if err != nil {
				return p, fmt.Errorf("%w: bad quoted name %s in %q", ErrBadWildcard, s, item)
			}
			// Quoting matters only for the wildcard tokens; any other name is a name.
			s, literal = u, u == AnyRecurse || u == AnyFlat
		}
		if s == "" {
			return p, fmt.Errorf("%w: empty attribute name in %q", ErrBadWildcard, item)
		}
		if strings.ContainsFunc(s, isControl) {
			return p, fmt.Errorf("%w: control character in %q", ErrBadWildcard, item)
		}
		p.Segments = append(p.Segments, s)
		p.Literal = append(p.Literal, literal)
	}
	return p, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// splitOutsideQuotes splits s at sep, except inside double quotes (with backslash escapes).
func splitOutsideQuotes(s string, sep byte) ([]string, error) {
	var parts []string
	start, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	if inQuote {
		return nil, fmt.Errorf("%w: unterminated quote in %q", ErrBadWildcard, s)
	}
	return append(parts, s[start:]), nil
}

// AttrPath writes an attribute path the way Nix does: names joined by dots, quoted where a
// name is not a plain identifier.
func AttrPath(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n
		if !plainName(n) {
			parts[i] = AttrName(n)
		}
	}
	return strings.Join(parts, ".")
}

// AttrName quotes one attribute name.
func AttrName(n string) string { return strconv.Quote(n) }

// plainName reports whether n needs no quotes in an attribute path: Nix's identifier
// characters, not starting with a digit or dash, and not a wildcard token.
func plainName(n string) bool {
	if n == "" || n == AnyRecurse || n == AnyFlat {
		return false
	}
	for i, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case (r >= '0' && r <= '9') || r == '-' || r == '\'':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
