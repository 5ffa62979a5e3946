package gitref

import (
	"slices"
	"strings"
)

// Match reports whether name matches the glob pattern (package doc: `*`, `**`, `?`). It
// runs in time proportional to len(pattern)*len(name), whatever the stars (names come from
// remotes).
func Match(pattern, name string) bool {
	toks := tokens(pattern)
	// next[j]: the tokens after the current one match name[j:].
	next := make([]bool, len(name)+1)
	next[len(name)] = true
	cur := make([]bool, len(name)+1)
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i]
		for j := len(name); j >= 0; j-- {
			switch {
			case t == tokAny:
				cur[j] = next[j] || j < len(name) && cur[j+1]
			case t == tokStar:
				cur[j] = next[j] || j < len(name) && name[j] != '/' && cur[j+1]
			case j == len(name):
				cur[j] = false
			case t == tokOne:
				cur[j] = name[j] != '/' && next[j+1]
			default:
				cur[j] = byte(t) == name[j] && next[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// Pattern tokens: a literal byte is itself (0-255), the wildcards are above.
const (
	tokOne  = 256 + iota // ?
	tokStar              // *
	tokAny               // ** (and longer runs of stars)
)

func tokens(pattern string) []int {
	var out []int
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '?':
			out = append(out, tokOne)
		case '*':
			j := i
			for j+1 < len(pattern) && pattern[j+1] == '*' {
				j++
			}
			tok := tokStar
			if j > i {
				tok = tokAny
			}
			out = append(out, tok)
			i = j
		default:
			out = append(out, int(pattern[i]))
		}
	}
	return out
}

// Policy is what a project follows: branches matching any of Branches (none: the default
// branch only) and, with Tags, every tag.
type Policy struct {
	Branches []string
	Tags     bool
}

// Head is one followed ref at its commit. Branch is the branch name, or the full ref name
// for a tag (refs/tags/v1), as evaluations record it.
type Head struct {
	Branch, Commit string
}

// Follows reports whether the policy follows the full ref name; defaultBranch stands in for
// an empty pattern list ("" follows nothing then).
func (p Policy) Follows(ref, defaultBranch string) bool {
	if name, ok := strings.CutPrefix(ref, HeadsPrefix); ok {
		return p.FollowsBranch(name, defaultBranch)
	}
	return p.Tags && strings.HasPrefix(ref, TagsPrefix) && len(ref) > len(TagsPrefix)
}

// FollowsBranch is Follows for a branch name without refs/heads/.
func (p Policy) FollowsBranch(name, defaultBranch string) bool {
	if name == "" {
		return false
	}
	if len(p.Branches) == 0 {
		return defaultBranch != "" && name == defaultBranch
	}
	return slices.ContainsFunc(p.Branches, func(pat string) bool { return Match(pat, name) })
}

// Heads lists the followed refs of a listing, sorted by branch, with the listing's HEAD
// target as the default branch unless defaultBranch names one.
func (p Policy) Heads(l Listing, defaultBranch string) []Head {
	if defaultBranch == "" {
		defaultBranch = l.DefaultBranch
	}
	var out []Head
	for ref, commit := range l.Refs {
		if p.Follows(ref, defaultBranch) {
			out = append(out, Head{Branch: RecordedName(ref), Commit: commit})
		}
	}
	slices.SortFunc(out, func(a, b Head) int { return strings.Compare(a.Branch, b.Branch) })
	return out
}

// RecordedName is how an evaluation records a ref: a branch by its name, anything else
// (tags, pull-request refs) by its full ref name.
func RecordedName(ref string) string {
	if name, ok := strings.CutPrefix(ref, HeadsPrefix); ok {
		return name
	}
	return ref
}

// Resolve finds what `eval start PROJECT BRANCH` names in a listing: a branch, else a tag,
// else a full ref name. ok is false when none exists.
func Resolve(l Listing, name string) (h Head, ok bool) {
	for _, ref := range []string{HeadsPrefix + name, TagsPrefix + name, name} {
		if c, found := l.Refs[ref]; found {
			return Head{Branch: RecordedName(ref), Commit: c}, true
		}
	}
	return Head{}, false
}

// ValidPattern reports whether a branch pattern is acceptable: non-empty, at most 255
// bytes, no spaces, control characters or leading "-", and not a full ref name.
func ValidPattern(p string) bool {
	if p == "" || len(p) > 255 || strings.HasPrefix(p, "-") || strings.HasPrefix(p, "refs/") {
		return false
	}
	return !strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f })
}
