package gitref

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const (
	c1 = "1111111111111111111111111111111111111111"
	c2 = "2222222222222222222222222222222222222222"
	c3 = "3333333333333333333333333333333333333333"
)

// sample is what `git ls-remote --symref` prints for a repository with two branches, a
// lightweight tag and an annotated one.
var sample = "ref: refs/heads/main\tHEAD\n" + c1 + "\tHEAD\n" + c1 + "\trefs/heads/main\n" +
	c2 + "\trefs/heads/release/1.0\n" + c2 + "\trefs/tags/light\n" +
	c3 + "\trefs/tags/v1\n" + strings.ToUpper(c1) + "\trefs/tags/v1^{}\n"

func TestParseLsRemote(t *testing.T) {
	l, err := ParseLsRemote([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if l.DefaultBranch != "main" {
		t.Errorf("default branch %q, want main", l.DefaultBranch)
	}
	want := map[string]string{"HEAD": c1, "refs/heads/main": c1, "refs/heads/release/1.0": c2,
		"refs/tags/light": c2, "refs/tags/v1": c1}
	for ref, c := range want {
		if l.Refs[ref] != c {
			t.Errorf("%s = %q, want %q", ref, l.Refs[ref], c)
		}
	}
	if len(l.Refs) != len(want) {
		t.Errorf("refs %v", l.Refs)
	}
}

func TestParseLsRemoteRefusesMalformed(t *testing.T) {
	for _, in := range []string{"nothash\trefs/heads/main\n", c1 + " refs/heads/main\n", c1 + "\t\n",
		c1[:39] + "\trefs/heads/x\n", c1 + "\trefs/heads/a b\n"} {
		if _, err := ParseLsRemote([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLsRemote(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"main", "main", true}, {"main", "mainline", false}, {"release/*", "release/1.0", true},
		{"release/*", "release/1.0/hotfix", false}, {"release/**", "release/1.0/hotfix", true},
		{"release/*", "release/", true}, {"*", "feature/x", false}, {"**", "feature/x", true},
		{"v?", "v1", true}, {"v?", "v10", false}, {"?", "/", false}, {"feat-*-x", "feat-abc-x", true},
		{"a**b", "a/x/b", true}, {"", "", true}, {"", "a", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestPolicyHeads(t *testing.T) {
	l, _ := ParseLsRemote([]byte(sample))
	for _, tc := range []struct {
		name   string
		p      Policy
		dflt   string
		branch []string
	}{
		{"default branch from HEAD", Policy{}, "", []string{"main"}},
		{"configured default", Policy{}, "release/1.0", []string{"release/1.0"}},
		{"glob", Policy{Branches: []string{"release/*"}}, "", []string{"release/1.0"}},
		{"tags", Policy{Branches: []string{"main"}, Tags: true}, "", []string{"main", "refs/tags/light", "refs/tags/v1"}},
	} {
		var got []string
		for _, h := range tc.p.Heads(l, tc.dflt) {
			got = append(got, h.Branch)
		}
		if !slices.Equal(got, tc.branch) {
			t.Errorf("%s: heads %v, want %v", tc.name, got, tc.branch)
		}
	}
}

func TestResolve(t *testing.T) {
	l, _ := ParseLsRemote([]byte(sample))
	if h, ok := Resolve(l, "release/1.0"); !ok || h != (Head{"release/1.0", c2}) {
		t.Errorf("branch: %v %v", h, ok)
	}
	if h, ok := Resolve(l, "v1"); !ok || h != (Head{"refs/tags/v1", c1}) {
		t.Errorf("tag: %v %v", h, ok)
	}
	if _, ok := Resolve(l, "nope"); ok {
		t.Error("resolved a missing branch")
	}
}

// A literal pattern (no wildcard characters) matches exactly itself; `**` matches anything;
// a pattern matches a name built by filling its wildcards.
func TestMatchProperties(t *testing.T) {
	segment := rapid.StringMatching(`[a-z0-9.-]{1,8}`)
	rapid.Check(t, func(t *rapid.T) {
		name := strings.Join(rapid.SliceOfN(segment, 1, 4).Draw(t, "segments"), "/")
		other := strings.Join(rapid.SliceOfN(segment, 1, 4).Draw(t, "other"), "/")
		if !Match(name, name) || Match(name, other) != (name == other) {
			t.Fatalf("literal %q against %q", name, other)
		}
		if !Match("**", name) {
			t.Fatalf("** does not match %q", name)
		}
		parts := strings.Split(name, "/")
		i := rapid.IntRange(0, len(parts)-1).Draw(t, "star")
		globbed := slices.Clone(parts)
		globbed[i] = "*"
		if !Match(strings.Join(globbed, "/"), name) {
			t.Fatalf("%q does not match %q", strings.Join(globbed, "/"), name)
		}
	})
}

// Every ref written into a listing reads back with its hash.
func TestParseLsRemoteRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		refs := rapid.MapOfN(rapid.StringMatching(`refs/(heads|tags)/[a-z0-9/._-]{1,20}`),
			rapid.StringMatching(`[0-9a-f]{40}`), 0, 20).Draw(t, "refs")
		var b strings.Builder
		for ref, c := range refs {
			b.WriteString(c + "\t" + ref + "\n")
		}
		l, err := ParseLsRemote([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Refs) != len(refs) {
			t.Fatalf("%d refs, want %d", len(l.Refs), len(refs))
		}
		for ref, c := range refs {
			if l.Refs[ref] != c {
				t.Fatalf("%s = %q, want %q", ref, l.Refs[ref], c)
			}
		}
	})
}
