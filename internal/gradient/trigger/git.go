package trigger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/gitref"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Remote is how git reaches a project's repository: the URL it is given and the variables
// added to its environment. Cleanup, when set, runs once git has exited.
type Remote struct {
	URL     string
	Env     []string
	Cleanup func()
}

// RemoteFunc builds a project's Remote. It is where a private repository's credential
// plugs in (a deploy key through GIT_SSH_COMMAND, a token through a credential helper);
// PublicRemote, the default, uses none.
type RemoteFunc func(ctx context.Context, p store.Project) (Remote, error)

// PublicRemote is the project's repository URL with no credential.
func PublicRemote(_ context.Context, p store.Project) (Remote, error) {
	return Remote{URL: p.RepoURL}, nil
}

// errTooMuchOutput ends a listing past Config.MaxGitOutput.
var errTooMuchOutput = errors.New("listing larger than the limit")

// capped is a buffer that refuses to grow past its limit, and then calls full (which ends
// the process: a refused write alone would leave it blocked on a full pipe).
type capped struct {
	buf      bytes.Buffer // not embedded: its ReadFrom would let io.Copy bypass Write
	limit    int
	full     func()
	overflow bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.limit {
		if !c.overflow && c.full != nil {
			c.full()
		}
		c.overflow = true
		return 0, errTooMuchOutput
	}
	return c.buf.Write(p)
}

// listRemote runs `git ls-remote --symref` for the project's branches, tags and HEAD, within
// GitTimeout and MaxGitOutput, and parses what it printed. Errors never carry the Remote's
// URL (it may hold a credential), only the project's.
func (s *Service) listRemote(ctx context.Context, p store.Project) (gitref.Listing, error) {
	remote, err := s.cfg.Remote(ctx, p)
	if err != nil {
		return gitref.Listing{}, fmt.Errorf("reaching %s: %w", p.RepoURL, err)
	}
	if remote.Cleanup != nil {
		defer remote.Cleanup()
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.GitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.cfg.Git, "ls-remote", "--symref", "--", remote.URL, "HEAD", "refs/heads/*", "refs/tags/*")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_SSH_COMMAND=ssh -o BatchMode=yes", "LC_ALL=C")
	cmd.Env = append(cmd.Env, remote.Env...)
	// Its own process group, so a timeout also ends the ssh or https helper git started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &capped{limit: s.cfg.MaxGitOutput, full: cancel}
	stderr := &capped{limit: 4096}
	cmd.Stdout, cmd.Stderr = out, stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(strings.ReplaceAll(stderr.buf.String(), remote.URL, p.RepoURL))
		switch {
		case out.overflow:
			msg = fmt.Sprintf("%v (%d bytes)", errTooMuchOutput, s.cfg.MaxGitOutput)
		case ctx.Err() != nil:
			msg = fmt.Sprintf("no answer within %s", s.cfg.GitTimeout)
		}
		return gitref.Listing{}, fmt.Errorf("git ls-remote %s: %w: %s", p.RepoURL, err, gitMessage(msg))
	}
	l, err := gitref.ParseLsRemote(out.buf.Bytes())
	if err != nil {
		return l, fmt.Errorf("git ls-remote %s: %w", p.RepoURL, err)
	}
	return l, nil
}

// gitMessage keeps what git said that names the cause (ssh's "Permission denied
// (publickey)" comes before git's own fatal line), without the advice git appends to every
// failed remote, on one short line.
func gitMessage(s string) string {
	var kept []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Please make sure you have the correct access rights") || l == "and the repository exists." {
			continue
		}
		kept = append(kept, l)
	}
	s = strings.Join(kept, "; ")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
