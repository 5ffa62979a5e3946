package nixexec

import (
	"cmp"
	"errors"
	"os/exec"
	"strings"
)

// Problem is something wrong with this machine's Nix set-up rather than with a job: no build
// users, no writable store, no shell in the sandbox, a full disk, nix missing. A job that hits
// one is the worker's failure, not the job's (gradient-server §6.4.1).
type Problem struct {
	What string // what is wrong, in the words Nix used where it said
	Fix  string // how an operator fixes it
}

func (p *Problem) Error() string {
	if p.Fix == "" {
		return p.What
	}
	return p.What + " (fix: " + p.Fix + ")"
}

// setupFailure is one recognisable sign of a broken set-up in nix's (or the system's) own
// words, with the fix an operator applies.
type setupFailure struct {
	signs []string // every one must appear in the message
	fix   string
}

// setupFailures is an allowlist: a message is the machine's fault only when it matches one of
// these; anything else stays the job's failure.
var setupFailures = []setupFailure{
	{[]string{"specified in 'build-users-group' does not exist"},
		"create Nix's build users as its installer does (groupadd -r nixbld; useradd -r -g nixbld -G nixbld -d /var/empty -s /usr/sbin/nologin nixbld1 …), or run single-user with build-users-group = (empty) in nix.conf"},
	{[]string{"No space left on device"}, "free disk space under /nix (nix-collect-garbage -d) and the worker's base directory"},
	{[]string{"Read-only file system"}, "the Nix store is mounted read-only: remount it read-write or run the worker through nix-daemon"},
	{[]string{"/nix/", "Permission denied"},
		"this user cannot write the Nix store: run the worker as the store's owner, or through the daemon (NIX_REMOTE=daemon)"},
	{[]string{"cannot connect to socket at '/nix/var/nix/daemon-socket"}, "start nix-daemon, or run single-user without NIX_REMOTE=daemon"},
	{[]string{"cloning builder process: Operation not permitted"},
		"the build sandbox cannot start here (user namespaces refused): allow them, run as root, or set sandbox = false"},
	{[]string{"unable to start build process"}, "the build process cannot start: check the sandbox settings and the build users"},
	{[]string{"all build users are currently in use"}, "add build users (nixbldN) or lower max-jobs"},
}

// noSandboxShell is what nix's build child reports when the sandbox has no /bin/sh: the
// builder never started.
var noSandboxShell = Problem{What: "the build sandbox has no /bin/sh",
	Fix: "install busybox-static and set sandbox-paths = /bin/sh=/bin/busybox in nix.conf"}

// Environmental reports whether err is a set-up problem of this machine, and which. It looks
// at nix's own message (a *CommandError or *BuildError in the chain) and at a nix or git
// binary that could not be started at all.
//
// A build that failed or timed out (nix-store exit 100 or 101) is the builder's: the message
// then holds the builder's own output, which must not be read as nix's words. The one
// exception is a sandbox without /bin/sh, which nix's child reports in a framed error (NUL
// separated, before the builder could run) that plain builder output does not produce.
func Environmental(err error) (*Problem, bool) {
	if err == nil {
		return nil, false
	}
	var p *Problem
	if errors.As(err, &p) {
		return p, true
	}
	if errors.Is(err, exec.ErrNotFound) {
		return &Problem{What: err.Error(), Fix: "install nix and git (apt-get install nix-bin git)"}, true
	}
	var be *BuildError
	if errors.As(err, &be) && be.Kind != Transient {
		if strings.Contains(be.Message, "\x00Error\x00") && strings.Contains(be.Message, "executing '/bin/sh': No such file or directory") {
			p := noSandboxShell
			return &p, true
		}
		return nil, false
	}
	return recognise(messageOf(err))
}

// recognise matches a message against the allowlist; What is the line that matched.
func recognise(msg string) (*Problem, bool) {
	for _, f := range setupFailures {
		if containsAll(msg, f.signs) {
			return &Problem{What: lineWith(msg, f.signs[len(f.signs)-1]), Fix: f.fix}, true
		}
	}
	return nil, false
}

func messageOf(err error) string {
	var ce *CommandError
	if errors.As(err, &ce) {
		return ce.Stderr
	}
	var be *BuildError
	if errors.As(err, &be) {
		return be.Message
	}
	return err.Error()
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// lineWith is the line of msg holding sign — nix's error rather than its warning when it
// printed both — without the "error: " or "warning: " prefix, and with control bytes (nix
// frames some errors with NULs) turned into single spaces.
func lineWith(msg, sign string) string {
	found := ""
	for line := range strings.Lines(msg) {
		line = oneLine(line)
		if !strings.Contains(line, sign) {
			continue
		}
		if rest, isError := strings.CutPrefix(line, "error: "); isError {
			return rest
		}
		if found == "" {
			found = strings.TrimPrefix(line, "warning: ")
		}
	}
	return cmp.Or(found, oneLine(msg))
}

func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }), " ")
}
