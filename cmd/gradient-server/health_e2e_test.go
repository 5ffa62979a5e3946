package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
)

// brokenNix is the Nix configuration of a worker whose machine lacks its build users: what
// Debian's nix-bin does out of the box.
const brokenNix = "build-users-group = gradient-no-such-group"

const noBuildUsers = "the group 'gradient-no-such-group' specified in 'build-users-group' does not exist"

// addWorker registers another worker for the fleet's project and returns its ID, base
// directory and peers line.
func (f *fleet) addWorker(t *testing.T) (id, baseDir, peersLine string) {
	t.Helper()
	id = newWorkerID(t)
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: id})
	if err != nil {
		t.Fatal(err)
	}
	return id, t.TempDir(), reg.PeersFileLine
}

// worker is the server's view of one worker.
func (f *fleet) worker(t *testing.T, id string) api.Worker {
	t.Helper()
	w, err := f.api.Worker(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestABrokenWorkerGivesBuildsBackAndIsQuarantined: two workers, one whose Nix has no build
// users. The broken one passed its probe before (its remembered pass is for this very
// configuration), so it offers build, takes build jobs and fails them on its set-up: each
// goes back to the queue without spending an attempt, the worker probes again, stops
// offering build and says why. Every build completes on the healthy worker.
func TestABrokenWorkerGivesBuildsBackAndIsQuarantined(t *testing.T) {
	f := newFleet(t)
	brokenID, brokenDir, brokenPeers := f.addWorker(t)
	rememberProbePass(t, brokenDir, brokenNix)
	broken := startWorker(t, f.srv, brokenID, brokenDir, brokenPeers, "NIX_CONFIG="+brokenNix)
	broken.waitLog(`session running.*build=true`, time.Minute)

	evalID := f.evaluate(t)
	broken.waitLog(`a job failed on this machine's Nix set-up`, 3*time.Minute)
	broken.waitLog(`nix cannot build; not offering it.*`+noBuildUsers, time.Minute)
	broken.waitLog(`session running.*build=false`, time.Minute)
	waitFor(t, "the broken worker shown quarantined", 30*time.Second, func() (bool, string) {
		q := f.worker(t, brokenID).Quarantined
		return strings.Contains(q, "build: "+noBuildUsers) && strings.Contains(q, "fix: create Nix's build users"), q
	})

	f.startWorker()
	d := f.completed(t, evalID, 3*time.Minute, broken)
	if len(d.Builds) != 3 {
		t.Fatalf("evaluation: %s", summary(d))
	}
	gaveBack := 0
	for _, b := range d.Builds {
		detail, err := f.api.Build(bg, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != "Completed" || detail.Build.Attempt != 0 {
			t.Errorf("%s: %s with %d attempts used; want Completed, none used", b.DrvPath, b.Status, detail.Build.Attempt)
		}
		for _, a := range detail.Attempts {
			switch {
			case a.WorkerID == f.workerID && a.Outcome == "Built":
			case a.WorkerID == brokenID && a.Outcome == "Aborted" && strings.Contains(a.FailureReason, "worker set-up: "+noBuildUsers):
				gaveBack++
			case a.WorkerID == brokenID && a.Outcome == "Aborted" && strings.Contains(a.FailureReason, "worker is stopping"):
				// taken while it was draining to stop offering build: given back too
			default:
				t.Errorf("%s: attempt by %s ended %s (%s)", b.DrvPath, a.WorkerID, a.Outcome, a.FailureReason)
			}
		}
	}
	if gaveBack == 0 {
		t.Error("the broken worker never took a build: the test did not exercise a set-up failure")
	}
	if w := f.worker(t, brokenID); w.Status != api.WorkerLive || w.Capabilities.Build {
		t.Errorf("broken worker: %s, build=%v; want live without build", w.Status, w.Capabilities.Build)
	}
}

// rememberProbePass writes the probe file a worker keeps after its probe built, for the key
// of nixConfig: as if the probe had passed before the machine broke.
func rememberProbePass(t *testing.T, baseDir, nixConfig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	p := nixexec.New(nixexec.Options{Env: []string{"NIX_CONFIG=" + nixConfig}}).RunProbe(ctx, func(string) bool { return true })
	if p.ConfigKey == "" || p.Eval != nil {
		t.Fatalf("probe of %q: %+v", nixConfig, p)
	}
	if err := os.WriteFile(filepath.Join(baseDir, "nix-probe"), []byte(p.ConfigKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAWorkerWithoutNixSaysWhy: a worker on a machine without nix starts, connects, offers
// nothing that needs Nix, says why in one log line, and the server lists it quarantined with
// that reason; an evaluation started meanwhile says what it waits for.
func TestAWorkerWithoutNixSaysWhy(t *testing.T) {
	f := newFleet(t)
	id, dir, peers := f.addWorker(t)
	w := startWorker(t, f.srv, id, dir, peers, "PATH="+pathWithout(t, "nix"))
	w.waitLog(`session running.*fetch=false eval=false build=false`, time.Minute)
	lines := regexpLines(w.log.String(), "nix cannot")
	if len(lines) != 1 || !strings.Contains(lines[0], "nix cannot fetch, eval, build; not offering it") ||
		!strings.Contains(lines[0], `executable file not found`) || !strings.Contains(lines[0], "apt-get install nix-bin") {
		t.Fatalf("want one line saying why, got %q", lines)
	}
	waitFor(t, "the worker shown quarantined", 30*time.Second, func() (bool, string) {
		q := f.worker(t, id).Quarantined
		return strings.HasPrefix(q, "fetch, eval, build: ") && strings.Contains(q, "executable file not found"), q
	})
	out := adminOut(t, f, "worker", "list")
	if !strings.Contains(out, "quarantined: fetch, eval, build: ") {
		t.Errorf("worker list:\n%s", out)
	}
	evalID := f.evaluate(t)
	d, err := f.api.Evaluation(bg, evalID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "no connected worker offers eval (" + id + " is quarantined: "; !strings.HasPrefix(d.Evaluation.Waiting, want) {
		t.Errorf("waiting: %q, want it to start %q", d.Evaluation.Waiting, want)
	}
	if show := adminOut(t, f, "eval", "show", evalID); !regexp.MustCompile(`(?m)^Waiting: +no connected worker offers eval`).MatchString(show) {
		t.Errorf("eval show:\n%s", show)
	}
}

// pathWithout is a PATH that has every program of this one except name.
func pathWithout(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), name) {
				continue
			}
			_ = os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name())) // the first on PATH wins
		}
	}
	if _, err := exec.LookPath(filepath.Join(dir, "git")); err != nil {
		t.Fatalf("no git left in %s: %v", dir, err)
	}
	return dir
}

func regexpLines(log, part string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, part) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// adminOut runs `gradient-server admin ARGS...` against the fleet's server and returns its output.
func adminOut(t *testing.T, f *fleet, args ...string) string {
	t.Helper()
	cmd := serverCmd(append([]string{"admin"}, args...)...)
	cmd.Env = append(cmd.Env, "GRADIENT_SERVER=http://"+f.srv.addr, "GRADIENT_API_KEY="+f.key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("admin %v: %v\n%s", args, err, out)
	}
	return string(out)
}
