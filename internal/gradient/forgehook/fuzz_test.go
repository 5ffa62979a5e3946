package forgehook

import (
	"net/http"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
)

var fuzzEvents = map[Forge][]string{
	GitHub: {"push", "pull_request", "ping"},
	Gitea:  {"push", "pull_request"},
	GitLab: {"Push Hook", "Tag Push Hook", "Merge Request Hook"},
}

// FuzzParse: no body panics the parser, and whatever it reads as something to evaluate has a
// full commit hash and a ref under refs/.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"github_push.json", "github_pull_request.json", "gitea_push.json",
		"gitea_pull_request.json", "gitlab_push.json", "gitlab_merge_request.json"} {
		f.Add(uint8(0), uint8(0), sample(f, name))
	}
	f.Fuzz(func(t *testing.T, forge, event uint8, body []byte) {
		fg := Forges[int(forge)%len(Forges)]
		names := fuzzEvents[fg]
		e, err := Parse(fg, eventHeader(fg, names[int(event)%len(names)]), body)
		if err != nil || e.Kind == Ignored {
			return
		}
		if !gitref.IsCommitHash(e.Commit) || !strings.HasPrefix(e.Ref, "refs/") {
			t.Fatalf("event %+v", e)
		}
		if e.Kind == PullRequest && e.BaseBranch == "" {
			t.Fatalf("pull request without a base: %+v", e)
		}
	})
}

// FuzzVerify: arbitrary headers and bodies never verify under a secret they were not signed
// with, and never panic.
func FuzzVerify(f *testing.F) {
	f.Add(uint8(0), "sha256=00", []byte("{}"))
	f.Add(uint8(1), "6113728f27ae82c7b1a177c8d03f9e96e0adf246", []byte("{}"))
	f.Add(uint8(2), "s3cret", []byte("{}"))
	f.Fuzz(func(t *testing.T, forge uint8, sig string, body []byte) {
		fg := Forges[int(forge)%len(Forges)]
		h := http.Header{}
		for _, name := range []string{"X-Hub-Signature-256", "X-Gitea-Signature", "X-Gitlab-Token"} {
			h.Set(name, sig)
		}
		if Verify(fg, []byte("the real secret"), h, body) == nil && !(fg == GitLab && sig == "the real secret") {
			t.Fatalf("%s verified signature %q", fg, sig)
		}
	})
}
