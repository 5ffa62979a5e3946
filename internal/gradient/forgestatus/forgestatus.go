package forgestatus

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Forge names a forge's commit status API.
type Forge string

// The forges whose APIs are built here (gradient-server §12.1).
const (
	GitHub Forge = "github"
	Gitea  Forge = "gitea" // also Forgejo, which keeps Gitea's API
	GitLab Forge = "gitlab"
)

// Forges lists every supported forge.
var Forges = []Forge{GitHub, Gitea, GitLab}

// ErrInvalid marks a status or configuration the core refuses.
var ErrInvalid = errors.New("invalid")

// ParseForge reads a forge name as an operator types it ("forgejo" is Gitea's API).
func ParseForge(s string) (Forge, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "github":
		return GitHub, nil
	case "gitea", "forgejo":
		return Gitea, nil
	case "gitlab":
		return GitLab, nil
	}
	return "", fmt.Errorf("forge %q: want github, gitea, forgejo or gitlab: %w", s, ErrInvalid)
}

// State is gradient's own status vocabulary, mapped to each forge's by ForgeState.
type State string

// States, total over evaluation and build outcomes (gradient-server §12.2).
const (
	Pending  State = "pending"
	Success  State = "success"
	Failure  State = "failure"
	Error    State = "error"
	Canceled State = "canceled"
)

// States lists every State.
var States = []State{Pending, Success, Failure, Error, Canceled}

// ParseState reads a stored State.
func ParseState(s string) (State, error) {
	for _, st := range States {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("state %q: %w", s, ErrInvalid)
}

// ForgeState is the state word forge f's API takes for s. GitHub and Gitea know pending,
// success, failure and error (a canceled run is an error there); GitLab knows pending,
// running, success, failed and canceled (an error is failed there).
func ForgeState(f Forge, s State) string {
	if f == GitLab {
		switch s {
		case Failure, Error:
			return "failed"
		case Canceled:
			return "canceled"
		}
		return string(s)
	}
	if s == Canceled {
		return string(Error)
	}
	return string(s)
}

// Target is where a project's statuses go: the forge, its API base URL and the repository.
type Target struct {
	Forge Forge
	// APIURL is the API's base: https://api.github.com for GitHub, the instance's root
	// (https://gitea.example) for Gitea and GitLab; the API path is appended.
	APIURL string
	// Repo is OWNER/REPO (GitHub, Gitea) or GitLab's numeric project id or full path
	// (group/subgroup/project).
	Repo string
}

// Validate checks a target before it is stored: a known forge, an http(s) base URL without
// query or fragment, and a repository of the form the forge addresses.
func (t Target) Validate() error {
	if _, err := ParseForge(string(t.Forge)); err != nil {
		return err
	}
	if err := ValidateURL(t.APIURL); err != nil {
		return fmt.Errorf("api url: %w", err)
	}
	return validateRepo(t.Forge, t.Repo)
}

// ValidateURL accepts an absolute http or https URL with a host and no query or fragment.
func ValidateURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %w", raw, ErrInvalid)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: want http(s)://host[/path] without credentials, query or fragment: %w", raw, ErrInvalid)
	}
	return nil
}

func validateRepo(f Forge, repo string) error {
	parts := strings.Split(repo, "/")
	want := 2
	if f == GitLab {
		if len(parts) == 1 && isDigits(repo) {
			return nil
		}
		want = max(2, len(parts))
	}
	if len(parts) != want {
		return fmt.Errorf("repo %q: want OWNER/REPO: %w", repo, ErrInvalid)
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "?#%\\ \t\r\n") {
			return fmt.Errorf("repo %q: bad segment %q: %w", repo, p, ErrInvalid)
		}
	}
	return nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ValidateCommit accepts a full hexadecimal commit id (40 for SHA-1, 64 for SHA-256).
func ValidateCommit(sha string) error {
	if len(sha) != 40 && len(sha) != 64 {
		return fmt.Errorf("commit %q: want 40 or 64 hex digits: %w", sha, ErrInvalid)
	}
	for _, r := range sha {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return fmt.Errorf("commit %q: want lower-case hex: %w", sha, ErrInvalid)
		}
	}
	return nil
}
