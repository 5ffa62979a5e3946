package api

import (
	"net/url"
	"strings"
	"unicode"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/google/uuid"
)

// Input limits: generous for real use, small enough that nothing unbounded reaches the store.
const (
	maxNameLen     = 100
	maxURLLen      = 2048
	maxBranchLen   = 255
	maxTextLen     = 200
	maxWildcards   = 64
	maxWildcardLen = 1024
	maxReasonLen   = 1000
)

// checkName admits names of projects and caches: a letter or digit, then letters, digits,
// '.', '_' or '-'. A name may not parse as a UUID, so "ID or name" is never ambiguous.
func checkName(what, name string) error {
	if name == "" || len(name) > maxNameLen {
		return badRequest("%s name must be 1 to %d characters", what, maxNameLen)
	}
	for i, c := range name {
		ok := c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c) || (i > 0 && strings.ContainsRune("._-", c)))
		if !ok {
			return badRequest("%s name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", what, name)
		}
	}
	if uuid.Validate(name) == nil {
		return badRequest("%s name %q looks like an ID; pick another", what, name)
	}
	return nil
}

// checkRepoURL admits a git URL (scheme://host/path or scp-like user@host:path) or a local
// path. Never one starting with '-', which git would read as an option.
func checkRepoURL(s string) error {
	if s == "" || len(s) > maxURLLen || hasSpaceOrControl(s) || strings.HasPrefix(s, "-") {
		return badRequest("repo_url must be 1 to %d characters without spaces, not starting with '-'", maxURLLen)
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Scheme != "file") {
			return badRequest("repo_url %q is not a valid URL", s)
		}
	}
	return nil
}

// checkBranch admits an empty branch (the repository's default) or a plausible git ref name.
func checkBranch(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > maxBranchLen || hasSpaceOrControl(s) || strings.HasPrefix(s, "-") ||
		strings.HasPrefix(s, "/") || strings.Contains(s, "..") || strings.ContainsAny(s, "~^:?*[\\") {
		return badRequest("branch %q is not a valid git branch name", s)
	}
	return nil
}

// checkWildcards parses the patterns the worker will evaluate (gradient-server §6.2), so a
// bad pattern fails here rather than in an evaluation.
func checkWildcards(ws []string) error {
	if len(ws) > maxWildcards {
		return badRequest("at most %d wildcards", maxWildcards)
	}
	for _, w := range ws {
		if len(w) > maxWildcardLen {
			return badRequest("a wildcard is longer than %d characters", maxWildcardLen)
		}
	}
	if _, err := nixexec.ParseWildcards(ws); err != nil {
		return badRequest("wildcards: %v", err)
	}
	return nil
}

// canonicalCommit admits a full git commit hash (SHA-1 or SHA-256), returned in lowercase.
func canonicalCommit(s string) (string, error) {
	lower := strings.ToLower(s)
	if (len(lower) != 40 && len(lower) != 64) || strings.Trim(lower, "0123456789abcdef") != "" {
		return "", badRequest("commit must be a full 40- or 64-digit hex commit hash")
	}
	return lower, nil
}

// canonicalWorkerID admits a UUID in any form uuid.Parse reads and returns its canonical
// spelling, the one the worker itself sends (worker.LoadWorkerID).
func canonicalWorkerID(s string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil || len(s) > 64 {
		return "", badRequest("worker ID %q is not a UUID", s)
	}
	return id.String(), nil
}

// checkDialURL admits the URL of a server-dialed worker: ws:// or wss:// with a host.
func checkDialURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > maxURLLen || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return badRequest("url %q must be a ws:// or wss:// URL with a host", s)
	}
	return nil
}

// checkText admits a short free-form label (owner, display name, reason).
func checkText(what, s string, required bool, max int) error {
	if required && strings.TrimSpace(s) == "" {
		return badRequest("%s is required", what)
	}
	if len(s) > max || strings.ContainsFunc(s, unicode.IsControl) {
		return badRequest("%s must be at most %d characters without control characters", what, max)
	}
	return nil
}

func hasSpaceOrControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}
