package forgehook

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func eventHeader(f Forge, name string) http.Header {
	h := http.Header{}
	switch f {
	case GitHub:
		h.Set("X-GitHub-Event", name)
	case Gitea:
		h.Set("X-Gitea-Event", name)
	case GitLab:
		h.Set("X-Gitlab-Event", name)
	}
	return h
}

func TestParseSamples(t *testing.T) {
	for _, tc := range []struct {
		file  string
		forge Forge
		event string
		want  Event
	}{
		{"github_push.json", GitHub, "push", Event{Kind: Push, Ref: "refs/heads/main",
			Commit: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", DefaultBranch: "main"}},
		{"github_push_deleted.json", GitHub, "push", Event{Kind: Ignored, Reason: ReasonDeleted}},
		{"github_pull_request.json", GitHub, "pull_request", Event{Kind: PullRequest, Ref: "refs/pull/42/head",
			Commit: "a10867b14bb761a232cd80139fbd4c0d33264240", BaseBranch: "main", DefaultBranch: "main"}},
		{"github_pull_request_fork.json", GitHub, "pull_request", Event{Kind: Ignored, Reason: ReasonFork}},
		{"github_ping.json", GitHub, "ping", Event{Kind: Ignored, Reason: ReasonEvent}},
		{"gitea_push.json", Gitea, "push", Event{Kind: Push, Ref: "refs/heads/release/1.0",
			Commit: "e8b2a8f0cd0b1e5a1a7dd0a7a59a0ed27c57ec09", DefaultBranch: "main"}},
		{"gitea_pull_request.json", Gitea, "pull_request", Event{Kind: PullRequest, Ref: "refs/pull/5/head",
			Commit: "9f1e0d2c3b4a59687766554433221100ffeeddcc", BaseBranch: "main", DefaultBranch: "main"}},
		{"github_pull_request.json", Gitea, "pull_request", Event{Kind: Ignored, Reason: ReasonEvent}}, // "synchronize" is GitHub's word
		{"gitlab_push.json", GitLab, "Push Hook", Event{Kind: Push, Ref: "refs/heads/main",
			Commit: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", DefaultBranch: "main"}},
		{"gitlab_push_deleted.json", GitLab, "Push Hook", Event{Kind: Ignored, Reason: ReasonDeleted}},
		{"gitlab_tag_push.json", GitLab, "Tag Push Hook", Event{Kind: Push, Ref: "refs/tags/v1.0.0",
			Commit: "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7", DefaultBranch: "main"}},
		{"gitlab_merge_request.json", GitLab, "Merge Request Hook", Event{Kind: PullRequest, Ref: "refs/merge-requests/7/head",
			Commit: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", BaseBranch: "main", DefaultBranch: "main"}},
		{"gitlab_merge_request_fork.json", GitLab, "Merge Request Hook", Event{Kind: Ignored, Reason: ReasonFork}},
		{"gitlab_push.json", GitLab, "Issue Hook", Event{Kind: Ignored, Reason: ReasonEvent}},
	} {
		got, err := Parse(tc.forge, eventHeader(tc.forge, tc.event), sample(t, tc.file))
		if err != nil {
			t.Errorf("%s as %s %s: %v", tc.file, tc.forge, tc.event, err)
			continue
		}
		tc.want.Name = tc.event
		if got != tc.want {
			t.Errorf("%s as %s %s:\n got %+v\nwant %+v", tc.file, tc.forge, tc.event, got, tc.want)
		}
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for _, tc := range []struct {
		forge       Forge
		event, body string
	}{
		{GitHub, "push", `{"ref": "refs/heads/main", "after": "abc"}`},
		{GitHub, "push", `{"ref": "main", "after": "6113728f27ae82c7b1a177c8d03f9e96e0adf246"}`},
		{GitHub, "push", `not json`},
		{Gitea, "pull_request", `{"action": "opened", "number": 0, "pull_request": {"head": {"sha": "6113728f27ae82c7b1a177c8d03f9e96e0adf246", "repo": {"id": 1}}, "base": {"ref": "main", "repo": {"id": 1}}}}`},
		{GitLab, "Merge Request Hook", `{"object_attributes": {"action": "open", "iid": 1, "source_project_id": 1, "target_project_id": 1, "target_branch": "main", "last_commit": {"id": "zz"}}}`},
	} {
		if _, err := Parse(tc.forge, eventHeader(tc.forge, tc.event), []byte(tc.body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s %s %s: %v, want ErrMalformed", tc.forge, tc.event, tc.body, err)
		}
	}
}

func TestVerify(t *testing.T) {
	secret, body := []byte("s3cret"), sample(t, "github_push.json")
	for _, f := range Forges {
		if err := Verify(f, secret, SignatureHeaders(f, secret, body), body); err != nil {
			t.Errorf("%s: a correctly signed delivery: %v", f, err)
		}
		if err := Verify(f, []byte("other"), SignatureHeaders(f, secret, body), body); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: wrong secret: %v", f, err)
		}
		if err := Verify(f, secret, http.Header{}, body); !errors.Is(err, ErrMissingSignature) {
			t.Errorf("%s: no header: %v", f, err)
		}
		if err := Verify(f, nil, SignatureHeaders(f, nil, body), body); !errors.Is(err, ErrNoSecret) {
			t.Errorf("%s: no secret configured: %v", f, err)
		}
		if HasSignature(f, http.Header{}) || !HasSignature(f, SignatureHeaders(f, secret, body)) {
			t.Errorf("%s: HasSignature", f)
		}
	}
	for _, bad := range []string{"sha1=" + string(make([]byte, 40)), "sha256=zz", "sha256=00", ""} {
		h := http.Header{"X-Hub-Signature-256": {bad}}
		if err := Verify(GitHub, secret, h, body); err == nil {
			t.Errorf("GitHub signature %q verified", bad)
		}
	}
	forgejo := http.Header{"X-Forgejo-Signature": SignatureHeaders(Gitea, secret, body)["X-Gitea-Signature"]}
	if err := Verify(Gitea, secret, forgejo, body); err != nil {
		t.Errorf("Forgejo's header: %v", err)
	}
}

// A delivery verifies under the secret it was signed with and under no other; changing any
// byte of an HMAC-signed body breaks it.
func TestVerifyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(Forges).Draw(t, "forge")
		secret := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "secret")
		other := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "other")
		body := rapid.SliceOfN(rapid.Byte(), 1, 512).Draw(t, "body")
		h := SignatureHeaders(f, secret, body)
		if err := Verify(f, secret, h, body); err != nil {
			t.Fatalf("signed delivery refused: %v", err)
		}
		if err := Verify(f, other, h, body); (err == nil) != (string(other) == string(secret)) {
			t.Fatalf("secret %x verified a delivery signed with %x: %v", other, secret, err)
		}
		if f != GitLab {
			i := rapid.IntRange(0, len(body)-1).Draw(t, "flip")
			changed := append([]byte(nil), body...)
			changed[i] ^= 0x01
			if Verify(f, secret, h, changed) == nil {
				t.Fatalf("a changed body verified")
			}
		}
	})
}
