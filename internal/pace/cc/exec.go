package cc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// exitCode turns a finished command's error into the exit status a shell would report.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 1 // could not be spawned
}

// runPassthrough runs the compiler with the caller's standard streams and returns its status.
func (r *run) runPassthrough() int {
	cmd := exec.Command(r.compiler, r.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, r.stdout, r.stderr
	cmd.Dir = r.cwd
	return exitCode(cmd.Run())
}

// captured is a compile's output, passed through live and kept.
type captured struct {
	stdout, stderr bytes.Buffer
	status         int
}

// runCaptured runs the compiler with args, copying its streams to ours as they come and
// keeping them for the cache.
func (r *run) runCaptured(args []string) captured {
	var c captured
	cmd := exec.Command(r.compiler, args...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = io.MultiWriter(r.stdout, &c.stdout)
	cmd.Stderr = io.MultiWriter(r.stderr, &c.stderr)
	cmd.Dir = r.cwd
	c.status = exitCode(cmd.Run())
	return c
}

// runQuiet runs the compiler with args and returns its standard output and error without
// showing them: the preprocessor probe, whose diagnostics the real compile will print anyway.
func (r *run) runQuiet(ctx context.Context, args []string) (stdout, stderr []byte, err error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, r.compiler, args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = &out, &errb, r.cwd
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}
