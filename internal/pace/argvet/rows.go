package argvet

import "strings"

// matchKind says how a row's spelling is compared with an argument stripped of its introducer.
type matchKind uint8

const (
	// bare rows match the whole argument exactly.
	bare matchKind = iota + 1
	// prefix rows match a spelling followed by a non-empty remainder. Separators never reach
	// a row (they are refused before), so a prefix row cannot admit a path.
	prefix
	// valued rows spell a whole option name ending in '=' (or ':'); the value after it must
	// satisfy the row's check. This is how -f options with values stay enumerated: the option
	// name is exact and only its value varies, within a closed shape.
	valued
)

// row is one allowlist entry.
type row struct {
	spelling string
	kind     matchKind
	value    func(string) bool // valued rows only
}

// allowTable is a family's allowlist, indexed for lookup.
type allowTable struct {
	exact  map[string]struct{}
	others []row // prefix and valued rows
}

func newAllowTable(groups ...[]row) allowTable {
	t := allowTable{exact: make(map[string]struct{})}
	for _, g := range groups {
		for _, r := range g {
			if r.kind == bare {
				t.exact[r.spelling] = struct{}{}
				continue
			}
			t.others = append(t.others, r)
		}
	}
	return t
}

// allows reports whether stripped (an argument without its introducer) matches a row.
func (t *allowTable) allows(stripped string) bool {
	if _, ok := t.exact[stripped]; ok {
		return true
	}
	for _, r := range t.others {
		rest, ok := strings.CutPrefix(stripped, r.spelling)
		if !ok || rest == "" {
			continue
		}
		if r.kind == prefix || r.value(rest) {
			return true
		}
	}
	return false
}

// Row constructors keep the tables readable.

func exact(spellings ...string) []row {
	rows := make([]row, len(spellings))
	for i, s := range spellings {
		rows[i] = row{spelling: s, kind: bare}
	}
	return rows
}

func prefixes(spellings ...string) []row {
	rows := make([]row, len(spellings))
	for i, s := range spellings {
		rows[i] = row{spelling: s, kind: prefix}
	}
	return rows
}

func withValue(spelling string, check func(string) bool) row {
	return row{spelling: spelling, kind: valued, value: check}
}

// Value checks for valued rows.

// isUint accepts a decimal number of at most 9 digits.
func isUint(v string) bool {
	if v == "" || len(v) > 9 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// oneOf accepts exactly one of the listed values.
func oneOf(values ...string) func(string) bool {
	set := make(map[string]struct{}, len(values))
	for _, v := range values {
		set[v] = struct{}{}
	}
	return func(v string) bool { _, ok := set[v]; return ok }
}

// listOf accepts a comma-separated, non-empty list whose every item item accepts.
func listOf(item func(string) bool) func(string) bool {
	return func(v string) bool {
		for _, part := range strings.Split(v, ",") {
			if !item(part) {
				return false
			}
		}
		return true
	}
}

// either accepts what any of checks accepts.
func either(checks ...func(string) bool) func(string) bool {
	return func(v string) bool {
		for _, c := range checks {
			if c(v) {
				return true
			}
		}
		return false
	}
}

// isWord accepts 1..64 characters from [A-Za-z0-9_.+-]: an identifier-like value such as a
// charset name, a random seed or a version, never a path.
func isWord(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.+-", c) >= 0) {
			return false
		}
	}
	return true
}

// isParam accepts NAME=NUMBER (or NAME=WORD), the shape of --param.
func isParam(v string) bool {
	name, val, ok := strings.Cut(v, "=")
	return ok && isWord(name) && isWord(val)
}
