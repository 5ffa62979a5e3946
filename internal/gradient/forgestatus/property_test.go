package forgestatus

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The state mapping is total: every state gives every forge a word its API documents.
func TestPropertyForgeStateTotal(t *testing.T) {
	documented := map[Forge][]string{
		GitHub: {"pending", "success", "failure", "error"},
		Gitea:  {"pending", "success", "failure", "error", "warning"},
		GitLab: {"pending", "running", "success", "failed", "canceled"},
	}
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(Forges).Draw(t, "forge")
		s := rapid.SampledFrom(States).Draw(t, "state")
		w := ForgeState(f, s)
		ok := false
		for _, d := range documented[f] {
			ok = ok || d == w
		}
		if !ok {
			t.Fatalf("%s %s -> %q, not documented", f, s, w)
		}
	})
}

// Every signature verifies under its secret and body, and fails for any other body.
func TestPropertySignatureVerifies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secret := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "secret")
		body := rapid.SliceOf(rapid.Byte()).Draw(t, "body")
		sig := Sign(secret, body)
		if !Verify(secret, body, sig) {
			t.Fatal("own signature does not verify")
		}
		other := append(append([]byte(nil), body...), rapid.Byte().Draw(t, "extra"))
		if Verify(secret, other, sig) {
			t.Fatal("verified another body")
		}
	})
}

// A built request always targets the forge's status path for that commit under the base URL,
// and carries the token in the forge's header only.
func TestPropertyBuildShape(t *testing.T) {
	seg := rapid.StringMatching(`[A-Za-z0-9_.-]{1,12}`).Filter(func(s string) bool { return s != "." && s != ".." })
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(Forges).Draw(t, "forge")
		tg := Target{Forge: f, APIURL: "https://" + rapid.StringMatching(`[a-z]{1,10}\.example`).Draw(t, "host"),
			Repo: seg.Draw(t, "owner") + "/" + seg.Draw(t, "repo")}
		commit := rapid.StringMatching(`[0-9a-f]{40}`).Draw(t, "sha")
		tok := rapid.StringMatching(`[A-Za-z0-9_]{1,40}`).Draw(t, "token")
		r, err := Build(tg, tok, Status{Commit: commit, State: rapid.SampledFrom(States).Draw(t, "state"),
			Description: rapid.String().Draw(t, "desc"), Context: rapid.String().Draw(t, "ctx")})
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(r.URL)
		if err != nil || !strings.HasPrefix(r.URL, tg.APIURL+"/") || !strings.HasSuffix(u.Path, "/statuses/"+commit) {
			t.Fatalf("url %q: %v", r.URL, err)
		}
		auth := map[Forge]string{GitHub: r.Header["Authorization"], Gitea: r.Header["Authorization"], GitLab: r.Header["PRIVATE-TOKEN"]}[f]
		if !strings.HasSuffix(auth, tok) {
			t.Fatalf("token not in the forge's header: %v", r.Header)
		}
		if strings.Contains(r.URL, "?") {
			t.Fatalf("query in %q", r.URL)
		}
	})
}

// Delays grow, stay within jitter of the capped doubling, and never exceed 1.5 × Cap.
func TestPropertyRetryDelayBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := Retry{Base: time.Duration(rapid.Int64Range(1, 1e10).Draw(t, "base")), MaxAttempts: 8}
		r.Cap = r.Base * time.Duration(rapid.Int64Range(1, 1000).Draw(t, "capx"))
		n := rapid.IntRange(1, 100).Draw(t, "n")
		d := r.Delay(n, rapid.Float64Range(0, 1).Draw(t, "j"))
		if d < r.Base/2 || d > r.Cap+r.Cap/2 {
			t.Fatalf("Delay(%d) = %v outside [%v, %v]", n, d, r.Base/2, r.Cap+r.Cap/2)
		}
	})
}
