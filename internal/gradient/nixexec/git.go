package nixexec

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"

	"github.com/buildfleet/buildfleet/internal/gradient/repocred"
)

// ErrBadCommit: a commit is not a full hexadecimal object name.
var ErrBadCommit = errors.New("nixexec: commit must be a 40 or 64 character hex object name")

var commitPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// CloneRequest says what to check out where.
type CloneRequest struct {
	URL    string
	Commit string
	// Dir is created by Clone and must not exist yet.
	Dir string
	// Credential, when set, is the private repository's deploy key or https token. It is
	// written into a private directory beside Dir for the clone's duration only
	// (gradient-server §13.4).
	Credential repocred.Credential
}

// Clone clones URL into Dir and checks Commit out, fetching the commit by its name when the
// default branches do not contain it. It returns the flake reference of the checkout at that
// commit (gradient-server §8.2: git+file://<dir>?rev=<sha>).
func (n *Nix) Clone(ctx context.Context, req CloneRequest) (string, error) {
	if !commitPattern.MatchString(req.Commit) {
		return "", fmt.Errorf("%w: %q", ErrBadCommit, req.Commit)
	}
	dir, err := filepath.Abs(req.Dir)
	if err != nil {
		return "", fmt.Errorf("nixexec: clone: %w", err)
	}
	env, cleanup, err := repocred.Prepare(filepath.Dir(dir), req.URL, req.Credential)
	if err != nil {
		return "", fmt.Errorf("nixexec: clone: %w", err)
	}
	defer cleanup()
	git := func(dir string, args ...string) error {
		return n.run(ctx, invocation{name: "git", args: args, dir: dir, env: env})
	}
	if err := git("", "clone", "--quiet", "--no-checkout", "--", req.URL, dir); err != nil {
		return "", fmt.Errorf("nixexec: clone %s: %w", redactURL(req.URL), err)
	}
	if git(dir, "cat-file", "-e", req.Commit+"^{commit}") != nil {
		if err := git(dir, "fetch", "--quiet", "origin", req.Commit); err != nil {
			return "", fmt.Errorf("nixexec: fetch commit %s: %w", req.Commit, err)
		}
	}
	if err := git(dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", req.Commit); err != nil {
		return "", fmt.Errorf("nixexec: checkout %s: %w", req.Commit, err)
	}
	return "git+file://" + dir + "?rev=" + req.Commit, nil
}

// redactURL drops what may be a secret from a repository URL for errors: all user info of an
// http(s) URL (a token is often written as its user), the password of any other.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		u.User = url.User("…")
		return u.String()
	}
	return u.Redacted()
}
