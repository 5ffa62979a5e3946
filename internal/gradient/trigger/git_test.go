package trigger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// fakeGit writes an executable script standing in for git.
func fakeGit(t *testing.T, script string) string {
	path := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A remote that never answers is given up after GitTimeout, one that answers too much after
// MaxGitOutput bytes; neither error shows the credential-bearing URL the Remote gave git.
func TestListRemoteIsBounded(t *testing.T) {
	p := store.Project{Name: "demo", RepoURL: "https://example.org/demo.git"}
	secretURL := func(context.Context, store.Project) (Remote, error) {
		return Remote{URL: "https://user:tok3n@example.org/demo.git"}, nil
	}
	for _, tc := range []struct {
		name, script, want string
	}{
		{"silent", `echo "fatal: could not read from $4" >&2; exec sleep 30`, "no answer within"},
		{"flood", `yes 1111111111111111111111111111111111111111	refs/heads/x`, "larger than the limit"},
		{"refused", `echo "fatal: repository '$4' not found" >&2; exit 128`, "not found"},
	} {
		svc := New(Config{Git: fakeGit(t, tc.script), GitTimeout: 500 * time.Millisecond, MaxGitOutput: 1 << 16, Remote: secretURL})
		start := time.Now()
		_, err := svc.listRemote(t.Context(), p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "tok3n") {
			t.Errorf("%s: %v", tc.name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
	}
}
