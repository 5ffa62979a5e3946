package trigger

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// ErrNoSuchRef is Resolve's answer for a name the repository has no branch or tag of.
var ErrNoSuchRef = errors.New("no such branch or tag in the repository")

// Resolve finds the commit a branch (else a tag) of the project's repository points at, with
// one ls-remote: `admin eval start PROJECT BRANCH`. It returns the recorded branch name.
func (s *Service) Resolve(ctx context.Context, p store.Project, name string) (branch, commit string, err error) {
	l, err := s.listRemote(ctx, p)
	if err != nil {
		return "", "", err
	}
	h, ok := gitref.Resolve(l, name)
	if !ok {
		return "", "", noSuchRef(name)
	}
	return h.Branch, h.Commit, nil
}

// noSuchRef is ErrNoSuchRef for a name; Unresolved tells the API it is the caller's
// mistake, not the repository's failure.
type noSuchRef string

func (n noSuchRef) Error() string      { return fmt.Sprintf("%q: %v", string(n), ErrNoSuchRef) }
func (noSuchRef) Is(target error) bool { return target == ErrNoSuchRef }
func (noSuchRef) Unresolved() bool     { return true }
