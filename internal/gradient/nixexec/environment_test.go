package nixexec

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

func TestEnvironmental(t *testing.T) {
	framedNoShell := "building '/nix/store/x-probe.drv'...\n\x01\n\x05\x00\x00\x00\x00\x00\x00\x00Error\x00\x00\x00" +
		"D\x00\x00\x00\x00\x00\x00\x00executing '/bin/sh': No such file or directory\x00\x00\x00\n" +
		"error: builder for '/nix/store/x-probe.drv' failed with exit code 1"
	for _, tc := range []struct {
		name    string
		err     error
		want    bool
		what    string // a part of Problem.What
		fixPart string
	}{
		{"nil", nil, false, "", ""},
		{"no build users", &CommandError{Command: "nix-store --realise", ExitCode: 1,
			Stderr: "warning: the group 'nixbld' specified in 'build-users-group' does not exist\nerror: the group 'nixbld' specified in 'build-users-group' does not exist\n"},
			true, "the group 'nixbld' specified in 'build-users-group' does not exist", "build users"},
		{"same as a transient build error", &BuildError{Kind: Transient, ExitCode: 1,
			Message: "error: the group 'nixbld' specified in 'build-users-group' does not exist"}, true, "does not exist", "nixbld"},
		{"disk full", fmt.Errorf("job: %w", &CommandError{ExitCode: 1, Stderr: "error: writing to file: No space left on device"}),
			true, "No space left on device", "free disk space"},
		{"store not writable", &CommandError{ExitCode: 1, Stderr: "error: opening lock file '/nix/var/nix/db/big-lock': Permission denied"},
			true, "big-lock': Permission denied", "write the Nix store"},
		{"permission denied elsewhere is the job's", &CommandError{ExitCode: 128, Stderr: "fatal: could not read from /home/x/repo: Permission denied"}, false, "", ""},
		{"daemon down", &CommandError{ExitCode: 1, Stderr: "error: cannot connect to socket at '/nix/var/nix/daemon-socket/socket': Connection refused"},
			true, "daemon-socket", "nix-daemon"},
		{"nix not installed", fmt.Errorf("nixexec: start nix: %w", exec.ErrNotFound), true, "executable file not found", "apt-get install nix-bin"},
		{"sandbox without /bin/sh", &BuildError{Kind: Permanent, ExitCode: 100, Message: framedNoShell}, true, "no /bin/sh", "busybox"},
		{"a builder that prints the shell message is still the job's", &BuildError{Kind: Permanent, ExitCode: 100,
			Message: "executing '/bin/sh': No such file or directory\nerror: builder for '/nix/store/x.drv' failed with exit code 1"}, false, "", ""},
		{"a failed builder that wrote to the store is the job's", &BuildError{Kind: Permanent, ExitCode: 100,
			Message: "cp: /nix/store/abc-in/file: Permission denied\nerror: builder for '/nix/store/x.drv' failed with exit code 1"}, false, "", ""},
		{"a timeout is the job's", &BuildError{Kind: Timeout, ExitCode: 101, Message: "No space left on device"}, false, "", ""},
		{"an evaluation error is the job's", &CommandError{ExitCode: 1, Stderr: "error: attribute 'x' missing"}, false, "", ""},
		{"a problem passes through", fmt.Errorf("probe: %w", &Problem{What: "w", Fix: "f"}), true, "w", "f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := Environmental(tc.err)
			if ok != tc.want {
				t.Fatalf("Environmental() = %v, %v; want environmental=%v", p, ok, tc.want)
			}
			if !ok {
				return
			}
			if !strings.Contains(p.What, tc.what) || !strings.Contains(p.Fix, tc.fixPart) {
				t.Errorf("problem %q / fix %q; want %q in what and %q in fix", p.What, p.Fix, tc.what, tc.fixPart)
			}
			if strings.HasPrefix(p.What, "warning:") || strings.HasPrefix(p.What, "error:") {
				t.Errorf("what %q keeps nix's prefix", p.What)
			}
			if strings.ContainsFunc(p.What, func(r rune) bool { return r < ' ' }) {
				t.Errorf("what %q holds control bytes", p.What)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	p := &Problem{What: "no build users", Fix: "create them"}
	if got, want := p.Error(), "no build users (fix: create them)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.As(fmt.Errorf("x: %w", p), new(*Problem)) {
		t.Error("a wrapped problem is not found by errors.As")
	}
}
