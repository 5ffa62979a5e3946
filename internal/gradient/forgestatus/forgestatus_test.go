package forgestatus

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

// TestBuildDocumentedShapes holds each forge's request to its documented commit status API.
func TestBuildDocumentedShapes(t *testing.T) {
	s := Status{Commit: sha, State: Failure, TargetURL: "http://ci:3000/evaluations/e1", Description: "2 builds failed", Context: "gradient/demo"}
	cases := []struct {
		name, url, body  string
		target           Target
		headerK, headerV string
	}{
		{"github", "https://api.github.com/repos/acme/app/statuses/" + sha,
			`{"state":"failure","target_url":"http://ci:3000/evaluations/e1","description":"2 builds failed","context":"gradient/demo"}`,
			Target{GitHub, "https://api.github.com", "acme/app"}, "Authorization", "Bearer tok"},
		{"gitea", "https://git.example/api/v1/repos/acme/app/statuses/" + sha,
			`{"state":"failure","target_url":"http://ci:3000/evaluations/e1","description":"2 builds failed","context":"gradient/demo"}`,
			Target{Gitea, "https://git.example/", "acme/app"}, "Authorization", "token tok"},
		{"gitlab path", "https://gl.example/api/v4/projects/grp%2Fsub%2Fapp/statuses/" + sha,
			"description=2+builds+failed&name=gradient%2Fdemo&state=failed&target_url=http%3A%2F%2Fci%3A3000%2Fevaluations%2Fe1",
			Target{GitLab, "https://gl.example", "grp/sub/app"}, "PRIVATE-TOKEN", "tok"},
		{"gitlab id", "https://gl.example/api/v4/projects/42/statuses/" + sha,
			"description=2+builds+failed&name=gradient%2Fdemo&state=failed&target_url=http%3A%2F%2Fci%3A3000%2Fevaluations%2Fe1",
			Target{GitLab, "https://gl.example", "42"}, "PRIVATE-TOKEN", "tok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Build(c.target, "tok", s)
			if err != nil {
				t.Fatal(err)
			}
			if r.Method != "POST" || r.URL != c.url || string(r.Body) != c.body || r.Header[c.headerK] != c.headerV {
				t.Errorf("got %s %s %q headers %v", r.Method, r.URL, r.Body, r.Header)
			}
			if _, err := url.Parse(r.URL); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestForgeStateTable(t *testing.T) {
	want := map[Forge][]string{
		GitHub: {"pending", "success", "failure", "error", "error"},
		Gitea:  {"pending", "success", "failure", "error", "error"},
		GitLab: {"pending", "success", "failed", "failed", "canceled"},
	}
	for f, words := range want {
		for i, s := range States {
			if got := ForgeState(f, s); got != words[i] {
				t.Errorf("%s %s: %s, want %s", f, s, got, words[i])
			}
		}
	}
}

func TestBuildRefuses(t *testing.T) {
	good := Target{GitHub, "https://api.github.com", "acme/app"}
	s := Status{Commit: sha, State: Pending, Context: "c"}
	cases := map[string]func() (Request, error){
		"unknown forge": func() (Request, error) { return Build(Target{"bitbucket", good.APIURL, good.Repo}, "t", s) },
		"bad url":       func() (Request, error) { return Build(Target{GitHub, "ftp://x", "a/b"}, "t", s) },
		"url creds":     func() (Request, error) { return Build(Target{GitHub, "https://u:p@x", "a/b"}, "t", s) },
		"repo one part": func() (Request, error) { return Build(Target{GitHub, good.APIURL, "app"}, "t", s) },
		"repo dotdot":   func() (Request, error) { return Build(Target{Gitea, good.APIURL, "../x"}, "t", s) },
		"short commit":  func() (Request, error) { return Build(good, "t", Status{Commit: "abc", State: Pending}) },
		"bad state":     func() (Request, error) { return Build(good, "t", Status{Commit: sha, State: "running"}) },
		"empty token":   func() (Request, error) { return Build(good, "", s) },
		"token newline": func() (Request, error) { return Build(good, "a\nb", s) },
	}
	for name, f := range cases {
		if _, err := f(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestDescriptionCutOnRuneBoundary(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	r, err := Build(Target{GitHub, "https://api.github.com", "a/b"}, "t", Status{Commit: sha, State: Pending, Description: long, Context: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Body), `"description":"`+strings.Repeat("é", 70)+`"`) {
		t.Errorf("body %s", r.Body)
	}
}

func TestWebhookSignature(t *testing.T) {
	secret := []byte("s3cret")
	r, err := WebhookRequest("http://hook.example/x", secret, Event{Kind: "evaluation", Commit: sha, State: Success})
	if err != nil {
		t.Fatal(err)
	}
	sig := r.Header[SignatureHeader]
	if !Verify(secret, r.Body, sig) {
		t.Fatalf("own signature %q does not verify", sig)
	}
	for _, bad := range []string{"", "sha256=", "sha1=" + sig[7:], sig[:len(sig)-1] + "0", strings.ToUpper(sig)} {
		if bad != sig && Verify(secret, r.Body, bad) {
			t.Errorf("%q verified", bad)
		}
	}
	if Verify([]byte("other"), r.Body, sig) {
		t.Error("verified under another secret")
	}
	if _, err := WebhookRequest("http://hook.example/x", nil, Event{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty secret: %v", err)
	}
}

func TestRetry(t *testing.T) {
	r := Retry{Base: time.Second, Cap: 8 * time.Second, MaxAttempts: 5}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 30: 8 * time.Second} {
		if got := r.Delay(n, 0.5); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
	for code, want := range map[int]bool{0: true, 200: false, 400: false, 401: false, 404: false, 408: true, 429: true, 500: true, 503: true} {
		if Retryable(code) != want {
			t.Errorf("Retryable(%d) = %v", code, !want)
		}
	}
}

func TestParseForge(t *testing.T) {
	for in, want := range map[string]Forge{"github": GitHub, "GitHub": GitHub, "forgejo": Gitea, "gitea": Gitea, " gitlab ": GitLab} {
		if got, err := ParseForge(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
}

// What Build makes, Decode reads back the same: the fake forge and the sender agree.
func TestDecodeReadsBuild(t *testing.T) {
	s := Status{Commit: sha, State: Canceled, TargetURL: "http://ci/evaluations/1", Description: "d", Context: "gradient/x"}
	for _, tg := range []Target{{GitHub, "http://h", "a/b"}, {Gitea, "http://h", "a/b"}, {GitLab, "http://h", "g/s/p"}} {
		r, err := Build(tg, "tok", s)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(r.URL)
		h := map[string]string{}
		for k, v := range r.Header {
			h[http.CanonicalHeaderKey(k)] = v
		}
		got, err := Decode(r.Method, u.EscapedPath(), h, r.Body)
		want := Received{Forge: tg.Forge, Repo: tg.Repo, Commit: sha, State: ForgeState(tg.Forge, Canceled),
			TargetURL: s.TargetURL, Description: "d", Context: "gradient/x", Token: "tok"}
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v", tg.Forge, got, err)
		}
	}
	for name, c := range map[string][4]string{
		"get":          {"GET", "/repos/a/b/statuses/" + sha, "Bearer t", `{"state":"success"}`},
		"no token":     {"POST", "/repos/a/b/statuses/" + sha, "", `{"state":"success"}`},
		"wrong scheme": {"POST", "/api/v1/repos/a/b/statuses/" + sha, "Bearer t", `{"state":"success"}`},
		"bad state":    {"POST", "/repos/a/b/statuses/" + sha, "Bearer t", `{"state":"failed"}`},
		"short sha":    {"POST", "/repos/a/b/statuses/abc", "Bearer t", `{"state":"success"}`},
		"other path":   {"POST", "/hook", "Bearer t", `{}`},
	} {
		h := map[string]string{"Authorization": c[2], "Content-Type": "application/json"}
		if _, err := Decode(c[0], c[1], h, []byte(c[3])); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
