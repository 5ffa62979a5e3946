package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/pace/netlab"
	"github.com/buildfleet/buildfleet/internal/pace/promexport/promexporttest"
)

// machine is one pace-node process on a host of its own (a network namespace with its own
// address), on the default ports, as it would run on a real machine.
type machine struct {
	t    *testing.T
	name string
	host *netlab.Host
	dir  string // state directory
	key  string // identity key text
	cmd  *exec.Cmd
	done chan struct{}
	// auto: started without --advertise and --raft-self, so pace-node derives both from the
	// address its host routes from, and follows that address when it moves (followRoute).
	auto bool

	mu  sync.Mutex
	log strings.Builder
}

// newMachine mints the machine's identity (pace-node --print-identity) in a fresh state
// directory.
func newMachine(t *testing.T, h *netlab.Host) *machine {
	t.Helper()
	m := &machine{t: t, name: h.Name(), host: h, dir: t.TempDir()}
	out := m.operator("--cluster-dir="+m.dir, "--node-id="+m.name, "--print-identity")
	for line := range strings.Lines(out) {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "public-key "); ok {
			m.key = k
		}
	}
	if m.key == "" {
		t.Fatalf("no key in --print-identity output:\n%s", out)
	}
	return m
}

func (m *machine) addr() string     { return m.host.Addr() + ":6674" }
func (m *machine) raftAddr() string { return m.host.Addr() + ":6680" }

// admitLine is what an operator admits the machine with.
func (m *machine) admitLine() string { return m.name + "=" + m.raftAddr() + "@" + m.key }

// followRoute has the machine started with auto endpoints, on a host with a default route: the
// address pace-node finds it routes from is then the host's own.
func (m *machine) followRoute() {
	m.t.Helper()
	if err := m.host.RouteDefault(); err != nil {
		m.t.Fatal(err)
	}
	m.auto = true
}

// start runs pace-node in the machine's namespace and waits for its ready line.
func (m *machine) start(extra ...string) {
	m.t.Helper()
	pinned := []string{"--advertise=" + m.addr(), "--raft-self=" + m.host.Addr()}
	if m.auto {
		pinned = nil
	}
	args := append(append([]string{"--cluster-dir=" + m.dir, "--node-id=" + m.name}, pinned...),
		"--admin-listen=127.0.0.1:9260", "--cache-memory=64MiB", "--log-level=debug")
	if !slices.ContainsFunc(extra, func(f string) bool { return strings.HasPrefix(f, "--discovery") }) {
		args = append(args, "--discovery=off") // formation by --fleet-seed unless a test opts in
	}
	args = append(args, extra...)
	m.cmd = m.host.Command(context.Background(), os.Args[0], args...)
	// Five machines share this host's CPU: none can tell the fleet's compiles from the rest.
	m.cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1", "PACE_NODE_SHARED_CPU=1")
	stderr, err := m.cmd.StderrPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.done = make(chan struct{})
	ready := make(chan struct{})
	go m.scan(stderr, ready)
	select {
	case <-ready:
	case <-m.done:
		m.t.Fatalf("%s exited before it was ready:\n%s", m.name, m.logText())
	case <-time.After(30 * time.Second):
		m.t.Fatalf("%s never became ready:\n%s", m.name, m.logText())
	}
	m.t.Cleanup(m.kill)
}

func (m *machine) scan(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	once := false
	for sc.Scan() {
		m.mu.Lock()
		m.log.WriteString(sc.Text() + "\n")
		m.mu.Unlock()
		if !once && strings.Contains(sc.Text(), "pace-node ready:") {
			once = true
			close(ready)
		}
	}
	m.cmd.Wait()
	close(m.done)
}

func (m *machine) logText() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.log.String()
}

// stop is SIGTERM, as a service manager stops a node, and waits for the exit.
func (m *machine) stop() {
	m.t.Helper()
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		m.t.Fatalf("%s did not stop on SIGTERM:\n%s", m.name, m.logText())
	}
}

// kill is kill -9.
func (m *machine) kill() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	m.cmd.Process.Kill()
	<-m.done
}

// operator runs a pace-node one-shot verb in the machine's namespace and returns its output.
func (m *machine) operator(args ...string) string {
	m.t.Helper()
	out, err := m.tryOperator(args...)
	if err != nil {
		m.t.Fatalf("%s: pace-node %v: %v\n%s", m.name, args, err, out)
	}
	return out
}

func (m *machine) tryOperator(args ...string) (string, error) {
	cmd := m.host.Command(context.Background(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// metric reads one series of the machine's /metrics (summed over labels), through its
// namespace.
func (m *machine) metric(series string) float64 {
	m.t.Helper()
	client := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: m.host.DialContext}}
	resp, err := client.Get("http://127.0.0.1:9260/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	total, err := promexporttest.Sum(resp.Body, series)
	if err != nil {
		m.t.Fatal(err)
	}
	return total
}

// status is --cluster-status as this machine's operator sees it.
func (m *machine) status() string { return m.operator("--scheduler="+m.addr(), "--cluster-status") }

// seats counts the voters and learners a status report lists.
func seats(status string) (voters, learners int) {
	for line := range strings.Lines(status) {
		f := strings.Fields(line)
		if len(f) > 1 && f[1] == "voter" {
			voters++
		}
		if len(f) > 1 && f[1] == "learner" {
			learners++
		}
	}
	return voters, learners
}

// leaderOf names the leader a status report names.
func leaderOf(status string) string {
	first, _, _ := strings.Cut(status, "\n")
	f := strings.Fields(first)
	if len(f) >= 8 && f[6] == "leader" {
		return f[7]
	}
	return ""
}

// eventually polls cond for up to within.
func eventually(t *testing.T, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last: %s", what, last)
}

// corpusTarball is a tarball of the committed corpus.
func corpusTarball(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus %s: %v", name, err)
	}
	return p
}

func must(t *testing.T, out []byte, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
}

var _ = fmt.Sprint
