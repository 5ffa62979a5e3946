package worker

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// exitSignalBase is added to a signal number to report a compiler killed
// by a signal as an exit code, as shells do: non-zero, so the client
// compiles locally.
const exitSignalBase = 128

// errSpawn wraps a compiler that could not be started.
var errSpawn = errors.New("compiler could not be started")

// compileRun is one compiler process.
type compileRun struct {
	path    string   // the compiler, from the worker's own configuration
	args    []string // after argv[0]
	dir     string   // the job's scratch directory: its working directory
	env     []string
	outCap  int    // bytes kept of stdout and of stderr each
	started func() // called once the process exists
	now     func() time.Time
	// inexact, when set, says why the diagnostics are not what the client's compiler prints
	// (tubundle.MarkInexact).
	inexact string
}

// runResult is how a compiler ended.
type runResult struct {
	exitCode       uint32
	stdout, stderr []byte
	elapsed        time.Duration
}

// run runs the compiler in its own process group; cancelling ctx kills the
// whole group (the driver's cc1, as, ...), not only the driver.
func (r compileRun) run(ctx context.Context) (runResult, error) {
	cmd := exec.CommandContext(ctx, r.path, r.args...)
	cmd.Args[0] = r.path
	cmd.Dir, cmd.Env = r.dir, r.env
	stdout, stderr := &cappedBuffer{max: r.outCap}, &cappedBuffer{max: r.outCap}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = time.Second
	begin := r.now()
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return runResult{}, ctx.Err() // cancelled before the spawn, not a spawn failure
		}
		return runResult{}, fmt.Errorf("%w: %w", errSpawn, err)
	}
	r.started()
	err := cmd.Wait()
	res := runResult{stdout: stdout.buf, stderr: stderr.buf, elapsed: r.now().Sub(begin)}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.exitCode = exitCodeOf(exitErr)
	default:
		return res, fmt.Errorf("wait for compiler: %w", err)
	}
	return res, nil
}

// cappedBuffer keeps the first max bytes written and discards the rest,
// so a compiler printing without end costs bounded memory.
type cappedBuffer struct {
	buf []byte
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
