package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bench is one run: its work directory under /tmp, the daemons it started (stopped at the
// end: SIGTERM, then SIGKILL after 10 s), and what the parts found.
type bench struct {
	c         config
	repo      string // the repository's top directory, where bin/ is
	work      string
	leaseload string
	procs     []*proc
	failed    bool // a counter check that did not hold: reported where it happened
	hz        float64
	fp        string
	bestRates [2]int // LEASE+RELEASE best of the node: persistent, fresh connections
}

func newBench(c config) (*bench, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("/tmp", "bench-dispatch.")
	if err != nil {
		return nil, err
	}
	b := &bench{c: c, repo: repo, work: work, leaseload: filepath.Join(work, "leaseload")}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		b.cleanup()
		os.Exit(map[os.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143}[s])
	}()
	return b, nil
}

// cleanup stops every daemon still running and removes the work directory.
func (b *bench) cleanup() {
	for _, p := range b.procs {
		p.stop()
	}
	_ = filepath.WalkDir(b.work, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			_ = os.Chmod(path, 0o700) // a Nix store copy or a build tree may be read-only
		}
		return nil
	})
	_ = os.RemoveAll(b.work)
}

// proc is a daemon this run started.
type proc struct {
	cmd  *osexec.Cmd
	done chan struct{}
}

// start runs name with args in the background, its output to the file logPath, and remembers
// it for cleanup.
func (b *bench) start(logPath string, name string, args ...string) (*proc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := osexec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	b.procs = append(b.procs, p)
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL if the process is still there after 10 s.
func (p *proc) stop() {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitReady waits up to 15 s for a line of the file log holding pattern and returns it; it
// gives up early when p has exited.
func waitReady(log, pattern string, p *proc) (string, error) {
	for range 150 {
		data, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, pattern) {
				return line, nil
			}
		}
		if p != nil && !p.alive() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	data, _ := os.ReadFile(log)
	return "", fmt.Errorf("no %q line in %s:\n%s", pattern, log, data)
}

// field is the value of a NAME=value word of line (a ready line, a benchmark summary).
func field(line, name string) string {
	for _, w := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}

// fieldInt is a field read as an integer (0 when it is not one).
func fieldInt(line, name string) int {
	n, _ := strconv.Atoi(field(line, name))
	return n
}

// cpuTicks is a process's user plus system time in clock ticks, from /proc.
func cpuTicks(p *proc) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	rest := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:])) // fields 3 on
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	return utime + stime
}

// load is the machine's load average as uptime prints it.
func load() string {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "load average: ?"
	}
	return fmt.Sprintf("load average: %s, %s, %s", f[0], f[1], f[2])
}

// output runs a command and returns its standard output, trimmed.
func output(env []string, name string, args ...string) (string, error) {
	cmd := osexec.Command(name, args...)
	cmd.Env, cmd.Stderr = env, os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// corpusFile is the absolute path of a corpus tarball, from the committed corpus
// (testdata/corpus) or else from the directory PACE_CORPUS names, checked against its line in
// testdata/corpus/SHA256SUMS (committed ones) or EXTERNAL-SHA256SUMS (larger ones kept
// outside); "" when neither directory holds it. A tarball that fails its check is an error.
func corpusFile(name string) (string, error) {
	dirs := []string{"testdata/corpus"}
	if d := os.Getenv("PACE_CORPUS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		if want := recordedSum(name); want == "" || want != hex.EncodeToString(sum[:]) {
			return "", fmt.Errorf("corpus: %s does not match its SHA256SUMS line", path)
		}
		return filepath.Abs(path)
	}
	return "", nil
}

// recordedSum is the SHA-256 a sums file of testdata/corpus records for name.
func recordedSum(name string) string {
	for _, sums := range []string{"SHA256SUMS", "EXTERNAL-SHA256SUMS"} {
		data, _ := os.ReadFile(filepath.Join("testdata/corpus", sums))
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.TrimPrefix(f[1], "*") == name {
				return f[0]
			}
		}
	}
	return ""
}

var errNoTU = errors.New("no TU was dispatched")

// command is a command with this program's standard output and error.
func command(name string, args ...string) *osexec.Cmd {
	cmd := osexec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd
}
