package forgestatus

import (
	"strings"
	"testing"
)

// FuzzVerify: the signature check reads an outside header; it never panics, and accepts only
// the one correct signature.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("k"), []byte(`{"event":"evaluation"}`), "sha256=00")
	f.Add([]byte("k"), []byte(""), Sign([]byte("k"), nil))
	f.Fuzz(func(t *testing.T, secret, body []byte, header string) {
		ok := Verify(secret, body, header)
		if ok != (header == Sign(secret, body)) {
			t.Fatalf("Verify(%q) = %v", header, ok)
		}
	})
}

// FuzzTarget: forge names, URLs and repositories come from operators; validation never
// panics, and whatever passes builds a request under the base URL.
func FuzzTarget(f *testing.F) {
	f.Add("github", "https://api.github.com", "acme/app")
	f.Add("gitlab", "https://gl.example/", "grp/sub/app")
	f.Add("forgejo", "http://127.0.0.1:3000", "a/b")
	f.Fuzz(func(t *testing.T, forge, api, repo string) {
		fg, err := ParseForge(forge)
		if err != nil {
			return
		}
		tg := Target{Forge: fg, APIURL: api, Repo: repo}
		if tg.Validate() != nil {
			return
		}
		r, err := Build(tg, "tok", Status{Commit: strings.Repeat("a", 40), State: Pending, Context: "c"})
		if err != nil || !strings.HasPrefix(r.URL, strings.TrimRight(api, "/")+"/") {
			t.Fatalf("%+v: %q %v", tg, r.URL, err)
		}
	})
}

// FuzzDecode: a fake forge reads requests from anyone; Decode never panics, and what it
// accepts names a known forge, a valid commit and a token.
func FuzzDecode(f *testing.F) {
	sha := strings.Repeat("ab", 20)
	f.Add("POST", "/repos/a/b/statuses/"+sha, "Bearer t", "application/json", []byte(`{"state":"success","context":"c"}`))
	f.Add("POST", "/api/v4/projects/a%2Fb/statuses/"+sha, "", "application/x-www-form-urlencoded", []byte("state=failed&name=c"))
	f.Add("POST", "/api/v1/repos/a/b/statuses/"+sha, "token t", "application/json", []byte(`{"state":"warning"}`))
	f.Fuzz(func(t *testing.T, method, path, auth, ctype string, body []byte) {
		h := map[string]string{"Authorization": auth, "Content-Type": ctype, "Private-Token": auth}
		r, err := Decode(method, path, h, body)
		if err != nil {
			return
		}
		if _, perr := ParseForge(string(r.Forge)); perr != nil || ValidateCommit(r.Commit) != nil || r.Token == "" {
			t.Fatalf("accepted %+v", r)
		}
	})
}
