package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/buildfleet/buildfleet/internal/browsertest"
)

// TestTheFleetDashboardInABrowser: three pace-nodes on three loopback addresses form a fleet
// (d1 founds it, d2 joins as a voter, d3 as a learner), each with a worker and the dashboard
// behind one token. After one compile dispatched through pace-cc, headless Chromium loads the
// leader's /fleet with the token: the Machines table lists the three machines, Workers each
// machine's worker, and the dispatched chart, drawn by the page's script from
// /fleet/series.json, holds the grant. A follower's /fleet answers 503 naming the leader, and
// without the token the page is refused 401.
func TestTheFleetDashboardInABrowser(t *testing.T) {
	chromium := browserOrSkip(t)
	token := randomToken(t)
	tokenFile := filepath.Join(t.TempDir(), "dashboard-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ds := []*loopNode{newLoopNode(t, "d1", "127.0.0.1"), newLoopNode(t, "d2", "127.0.0.2"), newLoopNode(t, "d3", "127.0.0.3")}
	dash := []string{"--slots=1", "--dashboard", "--dashboard-token-file=" + tokenFile}
	ds[0].start(dash...)
	for _, d := range ds[1:] {
		d.start(append(dash, "--fleet-seed="+ds[0].addr)...)
	}
	ds[0].operator("--cluster-admit=" + ds[1].admitLine())
	ds[0].operator("--cluster-admit-learner=" + ds[2].admitLine())
	var leader, follower *loopNode
	eventually(t, "two voters and a learner, and a leader", time.Minute, func() (bool, string) {
		st, _ := ds[0].tryOperator("--cluster-status")
		v, l := seats(st)
		leader, follower = nil, nil
		for _, d := range ds {
			if d.name == leaderOf(st) {
				leader = d
			} else if follower == nil {
				follower = d
			}
		}
		return v == 2 && l == 1 && leader != nil, st
	})
	eventually(t, "every machine's worker registered at the leader", time.Minute, func() (bool, string) {
		workers := leader.fleetJSON(token).workerMachines()
		return len(workers) == 3, strings.Join(workers, " ")
	})
	dir := project(t)
	env := []string{"HOME=" + t.TempDir(), "PACE_ADDR=" + ds[2].addr, "PACE_SCHEDULER=" + leader.addr}
	if r := cc(t, dir, env, "gcc", "-O2", "-c", "hello.c", "-o", "hello.o"); r.status != 0 || !strings.Contains(r.stderr, "DISPATCHED") {
		t.Fatalf("the build was not dispatched: %d\n%s", r.status, r.stderr)
	}
	ctx := newBrowser(t, chromium)
	shots := t.ArtifactDir()
	t.Logf("screenshots go to %s (kept with go test -artifacts)", shots)
	t.Run("without the token the page is refused", func(t *testing.T) {
		if st := navigate(t, ctx, "http://"+leader.admin+"/fleet"); st != http.StatusUnauthorized {
			t.Fatalf("without the token: %d", st)
		}
	})
	t.Run("the leader's page shows the fleet and its dispatched compile", func(t *testing.T) {
		leaderPage(t, ctx, leader, token, shots)
	})
	t.Run("a follower answers 503 naming the leader", func(t *testing.T) {
		if st := navigate(t, ctx, "http://"+follower.admin+"/fleet?token="+token); st != http.StatusServiceUnavailable {
			t.Fatalf("a follower's /fleet: %d", st)
		}
		body := browse(t, ctx, chromedp.Text("body"))
		if !strings.Contains(body, leader.name) || !strings.Contains(body, leader.addr) {
			t.Errorf("the follower's answer does not name the leader %s at %s:\n%s", leader.name, leader.addr, body)
		}
		screenshot(t, ctx, filepath.Join(shots, "follower-503.png"))
	})
	for _, d := range ds {
		if strings.Contains(d.log.String(), token) {
			t.Errorf("%s logged the dashboard token", d.name)
		}
	}
}

// leaderPage loads the leader's /fleet through ?token= and checks its tables and its chart.
func leaderPage(t *testing.T, ctx context.Context, leader *loopNode, token, shots string) {
	if st := navigate(t, ctx, "http://"+leader.admin+"/fleet?token="+token); st != http.StatusOK {
		t.Fatalf("with the token: %d", st)
	}
	if loc := browse(t, ctx, chromedp.Location()); strings.Contains(loc, "token") {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	machines := browse(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#machines tbody tr[data-machine]"), r => r.dataset.machine)`))
	workers := browse(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#workers tbody tr[data-worker]"), r => r.dataset.worker)`))
	for _, name := range []string{"d1", "d2", "d3"} {
		if !slices.Contains(machines, name) || !slices.Contains(workers, name) {
			t.Errorf("%s: machines %v, workers %v", name, machines, workers)
		}
	}
	// The chart is drawn by the page's script once /fleet/series.json arrives (fetched with the
	// cookie ?token= set): a bar per measured step, its value in data-v.
	dispatched := browse(t, ctx, chromedp.Poll[float64](`(() => {
		const sum = Array.from(document.querySelectorAll('figure[data-series="dispatched"] svg rect.pt'), r => Number(r.dataset.v)).reduce((a, b) => a + b, 0);
		return sum >= 1 ? sum : false;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	t.Logf("the dispatched chart holds %v grants", dispatched)
	screenshot(t, ctx, filepath.Join(shots, "leader-fleet.png"))
	browse(t, ctx, chromedp.Steps(chromedp.EmulateViewport(390, 844), chromedp.Reload()))
	screenshot(t, ctx, filepath.Join(shots, "leader-fleet-phone.png"))
}

// browserOrSkip finds Chromium; PACE_REQUIRE_BROWSER=1 turns a skip into a failure.
func browserOrSkip(t *testing.T) string { return browsertest.Find(t, "PACE_REQUIRE_BROWSER") }

// newBrowser starts headless Chromium for the test; it is closed when the test ends.
func newBrowser(t *testing.T, path string) context.Context {
	return browsertest.Start(t, path, 1280, 1800)
}

// browse runs one browser action under a deadline of its own.
func browse[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	return browsertest.Run(t, ctx, time.Minute, a)
}

func navigate(t *testing.T, ctx context.Context, url string) int64 {
	return browsertest.Navigate(t, ctx, url)
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	browsertest.Screenshot(t, ctx, time.Minute, path)
}

func randomToken(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// loopNode is one pace-node on a loopback address of its own, every port chosen free.
type loopNode struct {
	*nodeProc
	t                  *testing.T
	name, ip, dir, key string
	addr, raft, admin  string
}

func newLoopNode(t *testing.T, name, ip string) *loopNode {
	d := &loopNode{t: t, name: name, ip: ip, dir: t.TempDir()}
	d.addr, d.raft, d.admin = freeAddr(t, ip), freeAddr(t, ip), freeAddr(t, ip)
	out := d.run("--cluster-dir="+d.dir, "--node-id="+name, "--print-identity")
	for line := range strings.Lines(out) {
		if k, ok := strings.CutPrefix(strings.TrimSpace(line), "public-key "); ok {
			d.key = k
		}
	}
	if d.key == "" {
		t.Fatalf("no key in --print-identity output:\n%s", out)
	}
	return d
}

func freeAddr(t *testing.T, ip string) string {
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (d *loopNode) admitLine() string { return d.name + "=" + d.raft + "@" + d.key }

func (d *loopNode) start(extra ...string) {
	t := d.t
	args := append([]string{"--cluster-dir=" + d.dir, "--node-id=" + d.name, "--listen-node=" + d.addr, "--advertise=" + d.addr,
		"--listen-raft=" + d.raft, "--raft-self=" + d.ip, "--admin-listen=" + d.admin, "--cache-memory=64MiB", "--discovery=off"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1", "PACE_NODE_SHARED_CPU=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.nodeProc = &nodeProc{t: t, cmd: cmd, addr: d.addr, admin: d.admin, stateDir: d.dir, log: &bytes.Buffer{}, done: make(chan error, 1)}
	ready := make(chan struct{})
	go d.scan(stderr, ready)
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s never became ready:\n%s", d.name, d.log.String())
	}
	t.Cleanup(func() { d.stop() })
}

// run runs a pace-node one-shot verb and returns its output.
func (d *loopNode) run(args ...string) string {
	d.t.Helper()
	out, err := d.try(args...)
	if err != nil {
		d.t.Fatalf("pace-node %v: %v\n%s", args, err, out)
	}
	return out
}

func (d *loopNode) try(args ...string) (string, error) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PACE_NODE_AS_MAIN=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// operator sends a cluster verb to this node's scheduler.
func (d *loopNode) operator(verb string) { d.run("--scheduler="+d.addr, verb) }

func (d *loopNode) tryOperator(verb string) (string, error) {
	return d.try("--scheduler="+d.addr, verb)
}

type fleetJSON struct {
	Workers []struct {
		Machine string `json:"machine"`
	} `json:"workers"`
}

// fleetJSON reads the node's /fleet.json with the token; an empty value when it does not answer 200.
func (d *loopNode) fleetJSON(token string) fleetJSON {
	req, _ := http.NewRequest(http.MethodGet, "http://"+d.admin+"/fleet.json", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	var f fleetJSON
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return f
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		json.NewDecoder(resp.Body).Decode(&f)
	}
	return f
}

func (f fleetJSON) workerMachines() []string {
	var ids []string
	for _, w := range f.Workers {
		if !slices.Contains(ids, w.Machine) {
			ids = append(ids, w.Machine)
		}
	}
	return ids
}
