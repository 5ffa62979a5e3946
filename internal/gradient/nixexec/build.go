package nixexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// FailureKind classifies a failed build the way the worker reports it
// (gradient-server §6.3, gradient-server §6.4).
type FailureKind uint8

const (
	// Transient: anything but a build failure or a timeout (nix exits with another code).
	Transient FailureKind = iota
	// Permanent: the builder failed (nix exit 100).
	Permanent
	// Timeout: the wall-clock or the silence limit was exceeded (nix exit 101).
	Timeout
)

func (k FailureKind) String() string {
	return [...]string{"transient", "permanent", "timeout"}[k]
}

// Nix exit codes of nix-store --realise (gradient-server §8.2).
const (
	exitBuildFailed = 100
	exitTimedOut    = 101
)

// BuildError is a failed build.
type BuildError struct {
	Kind     FailureKind
	ExitCode int
	Message  string // the tail of nix's stderr
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("nixexec: build failed (%s, exit %d): %s", e.Kind, e.ExitCode, e.Message)
}

// BuildOptions configure one build.
type BuildOptions struct {
	// Timeout and MaxSilent are passed as --timeout and --max-silent-time; zero leaves the
	// option out (no limit).
	Timeout   time.Duration
	MaxSilent time.Duration
	// Log receives nix's stderr (the build log) as it is written. Nil discards it.
	Log io.Writer
}

// BuildResult is a successful build.
type BuildResult struct {
	Outputs  []string // output paths, as nix-store --realise prints them
	Duration time.Duration
}

// timeoutSlack is how long past its own timeout nix gets before the process is killed from
// here and the build reported as timed out anyway.
const timeoutSlack = 60 * time.Second

// Realise builds drv with `nix-store --realise` (gradient-server §8.2). Exit 100 is a
// Permanent BuildError, 101 a Timeout, any other non-zero exit Transient. When ctx ends
// the nix process group is stopped (SIGINT, then SIGKILL) and the context's cause is
// returned.
func (n *Nix) Realise(ctx context.Context, drv string, opts BuildOptions) (BuildResult, error) {
	args := []string{"--realise", drv}
	if s := wholeSeconds(opts.Timeout); s > 0 {
		args = append(args, "--timeout", strconv.FormatInt(s, 10))
	}
	if s := wholeSeconds(opts.MaxSilent); s > 0 {
		args = append(args, "--max-silent-time", strconv.FormatInt(s, 10))
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if opts.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, opts.Timeout+timeoutSlack, errWallClock)
	}
	defer cancel()
	var stdout bytes.Buffer
	start := time.Now()
	err := n.run(runCtx, invocation{name: "nix-store", args: n.storeArgs(args...), stdout: &stdout, stderr: opts.Log})
	took := time.Since(start)
	if err == nil {
		return BuildResult{Outputs: lines(stdout.Bytes()), Duration: took}, nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(runCtx), errWallClock) {
		return BuildResult{Duration: took}, &BuildError{Kind: Timeout, ExitCode: -1, Message: "killed after the build timeout"}
	}
	var cmdErr *CommandError
	if errors.As(err, &cmdErr) {
		kind := Transient
		switch cmdErr.ExitCode {
		case exitBuildFailed:
			kind = Permanent
		case exitTimedOut:
			kind = Timeout
		}
		return BuildResult{Duration: took}, &BuildError{Kind: kind, ExitCode: cmdErr.ExitCode, Message: cmdErr.Message()}
	}
	return BuildResult{Duration: took}, err
}

var errWallClock = errors.New("nixexec: build exceeded its timeout")

// wholeSeconds rounds a positive duration up to whole seconds (nix takes seconds).
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Outputs lists the output paths of drv (`nix-store --query --outputs`).
func (n *Nix) Outputs(ctx context.Context, drv string) ([]string, error) {
	out, err := n.output(ctx, "nix-store", n.storeArgs("--query", "--outputs", drv)...)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}
