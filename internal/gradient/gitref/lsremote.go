package gitref

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Prefixes of the refs a project can follow.
const (
	HeadsPrefix = "refs/heads/"
	TagsPrefix  = "refs/tags/"
)

// MaxRefs bounds the refs one listing may hold; a larger listing is refused rather than
// matched, so a hostile remote cannot make the server keep a huge table.
const MaxRefs = 100000

// ErrMalformed is returned for ls-remote output that is not lines of "<hex> <tab> <ref>".
var ErrMalformed = errors.New("gitref: malformed ls-remote output")

// Listing is what `git ls-remote --symref` printed: each ref's commit (an annotated tag's
// peeled commit, not the tag object) and the branch HEAD points at ("" when not shown).
type Listing struct {
	Refs          map[string]string // full ref name -> lowercase commit hash
	DefaultBranch string            // branch name HEAD points at, without refs/heads/
}

// ParseLsRemote reads ls-remote output. Lines are "<hash>\t<ref>", "<hash>\t<tag>^{}" (the
// peeled commit of an annotated tag, which wins over the tag object's hash) or
// "ref: <target>\tHEAD" (--symref).
func ParseLsRemote(out []byte) (Listing, error) {
	l := Listing{Refs: map[string]string{}}
	peeled := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		left, ref, ok := strings.Cut(line, "\t")
		if !ok || ref == "" || strings.ContainsAny(ref, " \t") {
			return Listing{}, fmt.Errorf("%w: line %d", ErrMalformed, n)
		}
		if target, ok := strings.CutPrefix(left, "ref: "); ok {
			if ref == "HEAD" {
				l.DefaultBranch = strings.TrimPrefix(target, HeadsPrefix)
			}
			continue
		}
		if !IsCommitHash(left) {
			return Listing{}, fmt.Errorf("%w: line %d: not a hash", ErrMalformed, n)
		}
		hash := strings.ToLower(left)
		if base, ok := strings.CutSuffix(ref, "^{}"); ok {
			l.Refs[base], peeled[base] = hash, true
		} else if !peeled[ref] {
			l.Refs[ref] = hash
		}
		if len(l.Refs) > MaxRefs {
			return Listing{}, fmt.Errorf("gitref: more than %d refs", MaxRefs)
		}
	}
	if err := sc.Err(); err != nil {
		return Listing{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return l, nil
}

// IsCommitHash reports whether s is a full SHA-1 or SHA-256 hex object name.
func IsCommitHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// IsZeroHash reports whether s is the all-zero hash forges send for a deleted ref.
func IsZeroHash(s string) bool { return IsCommitHash(s) && strings.Trim(s, "0") == "" }
