package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/kv"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
)

// paceCC is a pace-cc binary built once for these tests.
var paceCC string

// TestMain lets the test binary stand in for pace-node (PACE_NODE_AS_MAIN=1) and builds the
// pace-cc binary the end-to-end tests drive.
func TestMain(m *testing.M) {
	if os.Getenv("PACE_NODE_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:]))
	}
	if target := os.Getenv("PACE_OFFBOX_TARGET"); target != "" {
		os.Exit(offBoxClient(target))
	}
	dir, err := os.MkdirTemp("", "pace-node-test-")
	if err != nil {
		panic(err)
	}
	paceCC = filepath.Join(dir, "pace-cc")
	// The pace-cc front hands misses to pace-cc-full, which it finds beside itself.
	build := exec.Command("go", "build", "-o", dir+"/", "../pace-cc", "../pace-cc-full")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building pace-cc: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is a pace-node child process.
type nodeProc struct {
	t        *testing.T
	cmd      *exec.Cmd
	addr     string // node port, as dialled on this machine
	admin    string
	stateDir string
	log      *bytes.Buffer
	done     chan error
}

var readyRe = regexp.MustCompile(`pace-node ready: .* node-port=(\S+) `)

// startNode runs pace-node with the given flags plus a private state directory, loopback
// ports chosen by the test, and an admin surface, and waits for its ready line. A port taken
// between its choice and the bind (other test binaries run beside this one, some opening
// thousands of connections) is chosen again, twice at most.
func startNode(t *testing.T, stateDir string, flags ...string) *nodeProc {
	t.Helper()
	for attempt := 1; ; attempt++ {
		n, err := tryStartNode(t, stateDir, flags)
		if err == nil {
			t.Cleanup(func() { n.stop() })
			return n
		}
		if attempt == 3 || !strings.Contains(n.log.String(), "address already in use") {
			t.Fatalf("%v:\n%s", err, n.log.String())
		}
	}
}

func tryStartNode(t *testing.T, stateDir string, flags []string) (*nodeProc, error) {
	port, admin := freePort(t), freePort(t)
	// No beacons from the host's own namespace: test traffic stays on this machine.
	args := append([]string{"--cluster-dir=" + stateDir, "--listen-node=" + port, "--listen-raft=" + freePort(t),
		"--admin-listen=" + admin, "--discovery=off"}, flags...)
	cmd := exec.Command(os.Args[0], args...)
	// The test host's CPU is shared with other tests: a busy moment must not withdraw a
	// worker a test dispatches to.
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1", "PACE_NODE_SHARED_CPU=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &nodeProc{t: t, cmd: cmd, addr: "127.0.0.1:" + port, admin: "127.0.0.1:" + admin, stateDir: stateDir,
		log: &bytes.Buffer{}, done: make(chan error, 1)}
	ready := make(chan struct{})
	go n.scan(stderr, ready)
	select {
	case <-ready:
		return n, nil
	case err := <-n.done:
		return n, fmt.Errorf("pace-node exited before it was ready (%v)", err)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return n, errors.New("pace-node never became ready")
	}
}

func (n *nodeProc) scan(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	once := false
	for sc.Scan() {
		n.log.WriteString(sc.Text() + "\n")
		if !once && readyRe.MatchString(sc.Text()) {
			once = true
			close(ready)
		}
	}
	n.done <- n.cmd.Wait()
}

// stop sends SIGTERM and returns the exit status.
func (n *nodeProc) stop() int {
	if n.cmd.ProcessState != nil {
		return n.cmd.ProcessState.ExitCode()
	}
	n.cmd.Process.Signal(os.Interrupt)
	select {
	case <-n.done:
	case <-time.After(40 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
	}
	return n.cmd.ProcessState.ExitCode()
}

// metric reads one series from the node's /metrics.
func (n *nodeProc) metric(series string) float64 {
	n.t.Helper()
	return scrape(n.t, "http://"+n.admin+"/metrics", series)
}

func scrape(t *testing.T, url, series string) float64 {
	t.Helper()
	return promexporttest.Value(t, url, series)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := strings.Cut(l.Addr().String(), "127.0.0.1:")
	return port
}

// startKV runs an in-process pace-kv on loopback.
func startKV(t *testing.T, password string) (*kv.Server, string) {
	t.Helper()
	srv, err := kv.New(kv.Config{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", MaxMemory: 64 << 20, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, srv.Addr().String()
}

type ccResult struct {
	status         int
	stdout, stderr string
}

// cc runs pace-cc in dir with env additions.
func cc(t *testing.T, dir string, env []string, args ...string) ccResult {
	t.Helper()
	cmd := exec.Command(paceCC, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "PACE_VERBOSE=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ccResult{status, out.String(), errb.String()}
}

func gcc(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("gcc", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err1 := os.ReadFile(a)
	y, err2 := os.ReadFile(b)
	if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
		t.Fatalf("%s and %s differ (%v %v)", a, b, err1, err2)
	}
}
