package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestParseRef(t *testing.T) {
	hash := strings.Repeat("aB", 20)
	cases := []struct {
		ref, commit, branch string
		ok                  bool
	}{
		{hash, strings.ToLower(hash), "", true},
		{strings.Repeat("c", 64), strings.Repeat("c", 64), "", true},
		{"", "", "main", true},
		{"release/1.2", "", "release/1.2", true},
		{"-upload-pack=evil", "", "", false},
		{"a..b", "", "", false},
		{"main.lock", "", "", false},
		{"main branch", "", "", false},
		{strings.Repeat("a", 39), "", strings.Repeat("a", 39), true}, // a short hash is a branch name
		{"refs/heads/x;rm", "", "", false},
	}
	for _, c := range cases {
		commit, branch, err := parseRef(c.ref, "main")
		if commit != c.commit || branch != c.branch || (err == nil) != c.ok {
			t.Errorf("parseRef(%q) = %q, %q, %v", c.ref, commit, branch, err)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/builds/x?q=1": "/builds/x?q=1", "": "/projects", "//evil.example/": "/projects",
		"/\\evil.example": "/projects", "https://evil.example/": "/projects", "projects": "/projects"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// Properties: a branch parseRef lets through never reads as an option or a revision range,
// and a redirect target safeNext lets through stays on this site.
func TestParsersNeverLetThroughWhatGitOrARedirectMisreads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ref := rapid.String().Draw(t, "ref")
		if _, branch, err := parseRef(ref, "main"); err == nil && branch != "" {
			if strings.HasPrefix(branch, "-") || strings.Contains(branch, "..") || strings.ContainsAny(branch, " \t\n:~^?*[\\") {
				t.Fatalf("branch %q let through", branch)
			}
		}
		next := safeNext(rapid.String().Draw(t, "next"))
		if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
			t.Fatalf("redirect %q leaves the site", next)
		}
	})
}

func FuzzParseRef(f *testing.F) {
	for _, seed := range []string{"", "main", strings.Repeat("a", 40), "-x", "a..b", "feature/x"} {
		f.Add(seed, "/projects")
	}
	f.Fuzz(func(t *testing.T, ref, next string) {
		if commit, branch, err := parseRef(ref, "main"); err == nil {
			if (commit == "") == (branch == "") || strings.HasPrefix(branch, "-") {
				t.Fatalf("parseRef(%q) = %q, %q", ref, commit, branch)
			}
		}
		if n := safeNext(next); !strings.HasPrefix(n, "/") || strings.HasPrefix(n, "//") {
			t.Fatalf("safeNext(%q) = %q", next, n)
		}
	})
}

func TestSameOrigin(t *testing.T) {
	for origin, want := range map[string]bool{"": true, "http://ui.example:8080": true, "null": false,
		"http://evil.example": false, "http://ui.example:8081": false, "::bad": false} {
		r := httptest.NewRequest(http.MethodPost, "http://ui.example:8080/signin", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if got := sameOrigin(r); got != want {
			t.Errorf("Origin %q: %v, want %v", origin, got, want)
		}
	}
}
