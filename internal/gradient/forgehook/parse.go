package forgehook

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
)

// Kind is what a delivery asks for.
type Kind uint8

const (
	Ignored     Kind = iota // nothing to evaluate (Event.Reason says why)
	Push                    // a ref moved to Commit
	PullRequest             // a pull/merge request from the same repository has head Commit
)

// Reasons an event is ignored, as counters label them.
const (
	ReasonEvent   = "event"   // an event the server does not act on (ping, issues, closed …)
	ReasonDeleted = "deleted" // a push deleting its ref
	ReasonFork    = "fork"    // a pull request from another repository
)

// ErrMalformed is returned for a verified body that does not hold what its event promises.
var ErrMalformed = errors.New("forgehook: malformed delivery")

// Event is a verified delivery read.
type Event struct {
	Kind Kind
	// Ref is the full ref name: refs/heads/…, refs/tags/…, or the forge's ref of a pull
	// request's head (refs/pull/N/head, refs/merge-requests/N/head).
	Ref    string
	Commit string // lowercase hex
	// BaseBranch is a pull request's target branch: a project evaluates a request when it
	// follows the branch it would merge into.
	BaseBranch string
	// DefaultBranch is the repository's default branch when the payload names it.
	DefaultBranch string
	Reason        string // with Ignored
	Name          string // the forge's event name, for logs
}

// Parse reads a delivery Verify accepted.
func Parse(f Forge, h http.Header, body []byte) (Event, error) {
	switch f {
	case GitHub:
		return parseGitHub(h.Get("X-GitHub-Event"), body)
	case Gitea:
		name := h.Get("X-Gitea-Event")
		if name == "" {
			name = h.Get("X-Forgejo-Event")
		}
		return parseGitea(name, body)
	case GitLab:
		return parseGitLab(h.Get("X-Gitlab-Event"), body)
	}
	return Event{}, fmt.Errorf("forgehook: unknown forge %q", f)
}

func ignored(name, reason string) Event { return Event{Kind: Ignored, Name: name, Reason: reason} }

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return nil
}

// push finishes a push event: the ref moved to after, or was deleted.
func push(name, ref, after string, deleted bool, defaultBranch string) (Event, error) {
	if deleted || after == "" || gitref.IsZeroHash(after) {
		return ignored(name, ReasonDeleted), nil
	}
	if !strings.HasPrefix(ref, "refs/") || !gitref.IsCommitHash(after) {
		return Event{}, fmt.Errorf("%w: push of %q to %q", ErrMalformed, ref, after)
	}
	return Event{Kind: Push, Name: name, Ref: ref, Commit: strings.ToLower(after), DefaultBranch: defaultBranch}, nil
}

// pullRequest finishes a pull request from the same repository.
func pullRequest(name string, number int64, refPrefix, head, base, defaultBranch string) (Event, error) {
	if number <= 0 || base == "" || !gitref.IsCommitHash(head) {
		return Event{}, fmt.Errorf("%w: pull request %d at %q into %q", ErrMalformed, number, head, base)
	}
	return Event{Kind: PullRequest, Name: name, Ref: refPrefix + strconv.FormatInt(number, 10) + "/head",
		Commit: strings.ToLower(head), BaseBranch: base, DefaultBranch: defaultBranch}, nil
}
