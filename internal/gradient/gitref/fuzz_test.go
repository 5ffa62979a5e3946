package gitref

import (
	"testing"
)

// FuzzParseLsRemote: any output either is refused or yields only full hashes, and matching
// its refs never panics.
func FuzzParseLsRemote(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("ref: refs/heads/trunk\tHEAD\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		l, err := ParseLsRemote(out)
		if err != nil {
			return
		}
		for ref, c := range l.Refs {
			if !IsCommitHash(c) || ref == "" {
				t.Fatalf("ref %q -> %q", ref, c)
			}
		}
		_ = Policy{Branches: []string{"*", "release/**"}, Tags: true}.Heads(l, "")
	})
}

// FuzzMatch: Match terminates on any input and a pattern always matches itself when it
// holds no wildcard characters.
func FuzzMatch(f *testing.F) {
	f.Add("release/*", "release/1.0")
	f.Add("**/x?", "a/b/xy")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 512 || len(name) > 512 {
			return
		}
		Match(pattern, name)
		if !containsAny(pattern, "*?") && !Match(pattern, pattern) {
			t.Fatalf("literal %q does not match itself", pattern)
		}
	})
}

func containsAny(s, chars string) bool {
	for i := range len(s) {
		for j := range len(chars) {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}
