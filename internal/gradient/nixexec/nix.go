package nixexec

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Options configure a Nix.
type Options struct {
	// Store is passed as --store to every command when set (e.g. a chroot store /tmp/s for
	// tests); empty means the machine's default store.
	Store string
	// GCRootDir holds the GC roots of running jobs; empty means
	// /nix/var/nix/gcroots/gradient-<pid>. It must lie under the store's gcroots directory to
	// protect anything.
	GCRootDir string
	// KillGrace is how long a cancelled nix process has between SIGINT and SIGKILL. Zero
	// means 5 s.
	KillGrace time.Duration
	// Logger receives debug lines for every command run. Nil discards.
	Logger *slog.Logger
	// Env is added to the environment of every command (after os.Environ()).
	Env []string
}

// Nix runs the nix command line. It is safe for concurrent use.
type Nix struct {
	opts Options
}

// New returns a Nix with opts applied.
func New(opts Options) *Nix {
	opts.KillGrace = cmp.Or(opts.KillGrace, 5*time.Second)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.GCRootDir == "" {
		opts.GCRootDir = fmt.Sprintf("/nix/var/nix/gcroots/gradient-%d", os.Getpid())
	}
	return &Nix{opts: opts}
}

// stderrTail is how much of a failing command's stderr an error keeps.
const stderrTail = 4 << 10

// CommandError is a nix or git command that exited non-zero.
type CommandError struct {
	Command  string // program and subcommand, e.g. "nix flake archive"
	ExitCode int    // -1 when killed by a signal
	Stderr   string // the last few KiB
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("%s exited with %d", e.Command, e.ExitCode)
	}
	return fmt.Sprintf("%s exited with %d: %s", e.Command, e.ExitCode, msg)
}

// Message is the error text nix printed, without the command: what an EvalMessage shows.
func (e *CommandError) Message() string { return strings.TrimSpace(e.Stderr) }

// nixArgs are the options every `nix` (new CLI) command gets.
func (n *Nix) nixArgs(sub ...string) []string {
	args := append([]string{}, sub...)
	args = append(args, "--extra-experimental-features", "nix-command flakes", "--option", "substituters", "")
	if n.opts.Store != "" {
		args = append(args, "--store", n.opts.Store)
	}
	return args
}

// storeArgs are the options every nix-store command gets.
func (n *Nix) storeArgs(sub ...string) []string {
	args := append([]string{}, sub...)
	args = append(args, "--option", "substituters", "")
	if n.opts.Store != "" {
		args = append(args, "--store", n.opts.Store)
	}
	return args
}

// invocation is one command to run.
type invocation struct {
	name   string   // program
	args   []string // arguments
	dir    string
	env    []string
	stdin  io.Reader
	stdout io.Writer // nil: collected and returned
	stderr io.Writer // nil: only the tail is kept for the error
}

// output runs a command and returns its stdout.
func (n *Nix) output(ctx context.Context, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := n.run(ctx, invocation{name: name, args: args, stdout: &out})
	return out.Bytes(), err
}

// run runs inv to completion in its own process group (see killTree for cancellation). A
// non-zero exit is a *CommandError; a cancelled context wins over the exit status.
func (n *Nix) run(ctx context.Context, inv invocation) error {
	tail := &tailBuffer{max: stderrTail}
	var stderr io.Writer = tail
	if inv.stderr != nil {
		stderr = io.MultiWriter(inv.stderr, tail)
	}
	cmd := exec.Command(inv.name, inv.args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = inv.dir, inv.stdin, inv.stdout, stderr
	cmd.Env = append(append(os.Environ(), n.opts.Env...), inv.env...)
	cmd.SysProcAttr = newProcessGroup()
	n.opts.Logger.Debug("nixexec: run", "cmd", inv.name, "args", redactArgs(inv.args))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("nixexec: start %s: %w", inv.name, err)
	}
	stop := watchCancel(ctx, cmd.Process.Pid, n.opts.KillGrace)
	err := cmd.Wait()
	stop()
	if ctx.Err() != nil {
		return fmt.Errorf("nixexec: %s: %w", commandName(inv), context.Cause(ctx))
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return &CommandError{Command: commandName(inv), ExitCode: exit.ExitCode(), Stderr: tail.String()}
		}
		return fmt.Errorf("nixexec: %s: %w", commandName(inv), err)
	}
	return nil
}

// commandName is the program and its subcommand words, for errors.
func commandName(inv invocation) string {
	words := []string{inv.name}
	for _, a := range inv.args {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "/") || len(words) == 3 {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// redactArgs keeps URLs' user info out of debug logs.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if at := strings.Index(a, "@"); at > 0 && strings.Contains(a[:at], "://") {
			scheme := a[:strings.Index(a, "://")+3]
			a = scheme + "…" + a[at:]
		}
		out[i] = a
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
