package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// pullFlakeTemplate: producer needs a system feature only worker A has, the consumers need
// features only B or C have, so each build runs where the test says. SYSTEM and NONCE are
// replaced.
const pullFlakeTemplate = `{
  description = "gradient pull test NONCE";
  outputs = { self }: let
    system = "SYSTEM";
    nonce = "NONCE";
    mk = name: script: feature: derivation {
      inherit name system nonce;
      builder = "/bin/sh";
      args = [ "-c" script ];
      PATH = "/usr/bin:/bin";
      requiredSystemFeatures = [ feature ];
    };
    producer = mk "producer" "echo producing; echo produced-${nonce} > $out" "gradient-pull-a";
    consumer = mk "consumer" "echo consuming; cat ${producer} > $out; echo consumed >> $out" "gradient-pull-b";
    consumer2 = mk "consumer2" "cat ${producer} > $out; echo consumed-again >> $out" "gradient-pull-c";
  in { packages.${system} = { inherit producer consumer consumer2; }; };
}
`

// pullFleet is a server, one project with a cache, and workers registered for it.
type pullFleet struct {
	*fleet
	nonce string
}

func newPullFleet(t *testing.T) *pullFleet {
	base := nixexectest.NewFlake(t) // a unique nonce and the local system
	repo := t.TempDir()
	text := strings.NewReplacer("SYSTEM", base.System, "NONCE", base.Nonce).Replace(pullFlakeTemplate)
	fl := nixexectest.Flake{Dir: repo, URL: "file://" + repo, Commit: nixexectest.CommitFlake(t, repo, text), System: base.System, Nonce: base.Nonce}

	f := &fleet{t: t, flake: fl, baseDir: t.TempDir()}
	dataDir, addr := t.TempDir(), freeAddr(t)
	f.api = bootstrap(t, addr, dataDir)
	f.srv = startServer(t, addr, dataDir)
	var err error
	if f.cache, err = f.api.CreateCache(bg, api.CreateCacheRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	f.project, err = f.api.CreateProject(bg, api.CreateProjectRequest{Name: "pull", RepoURL: fl.URL, Branch: "main",
		Wildcards: []string{"packages." + fl.System + ".consumer"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.api.Subscribe(bg, f.project.ID, f.cache.ID); err != nil {
		t.Fatal(err)
	}
	return &pullFleet{fleet: f, nonce: fl.Nonce}
}

// startNixWorker registers a new worker for the project and starts it with nixConfig in
// NIX_CONFIG (its own store, its system features), returning the process and its ID.
func (f *pullFleet) startNixWorker(t *testing.T, name, nixConfig string) (*proc, string) {
	t.Helper()
	id := newWorkerID(f.t)
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: id, DisplayName: name})
	if err != nil {
		t.Fatal(err)
	}
	baseDir := filepath.Join(f.baseDir, name)
	peers := filepath.Join(baseDir, "peers")
	if err := os.MkdirAll(baseDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(peers, []byte(reg.PeersFileLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(workerBin, "--server="+f.srv.protoURL(), "--base-dir="+baseDir, "--peers-file="+peers, "--log-level=debug")
	cmd.Env = append(os.Environ(), "GRADIENT_WORKER_ID="+id, "NIX_CONFIG="+nixConfig)
	w := startProc(f.t, "gradient-worker "+name, cmd)
	w.waitLog(`session running`, time.Minute)
	return w, id
}

// ownStore is the NIX_CONFIG of a worker with a store of its own: a chroot store under a
// fresh directory (Nix builds there in its sandbox, which sees /bin/sh and the host's
// libraries through sandbox-paths), so nothing built elsewhere is in it.
func ownStore(t *testing.T, feature string) (config, root string) {
	root = filepath.Join(t.TempDir(), "store")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The sandbox's build user must reach the store through the test's private directories.
	for d := filepath.Dir(root); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fmt.Sprintf("store = %s\nsandbox-paths = /bin /usr /lib /lib64? /lib32?\nextra-system-features = %s", root, feature), root
}

// attemptWorkers lists the workers that ran a build's attempts, in order.
func (f *pullFleet) attemptWorkers(t *testing.T, buildID string) []string {
	t.Helper()
	d, err := f.api.Build(bg, buildID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range d.Attempts {
		ids = append(ids, a.WorkerID)
	}
	return ids
}

// readInStore reads a file of a store path inside a chroot store.
func readInStore(t *testing.T, root, storePath string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, storePath))
	if err != nil {
		t.Fatalf("%s is not in the store at %s: %v", storePath, root, err)
	}
	return string(b)
}

func outputOf(t *testing.T, drv string) string {
	t.Helper()
	outs := storeLines(t, "nix-store", "-q", "--outputs", drv)
	if len(outs) != 1 {
		t.Fatalf("%s has outputs %v", drv, outs)
	}
	return outs[0]
}

// TestNarPullBetweenWorkers (gradient-protocol §7.4): the derivation built by worker A is an
// input of one built by worker B, whose Nix store is its own, so B must pull it through the
// cache and import it before building. Then the producer's object is corrupted on the
// server's disk: a third worker with its own store is refused the bytes (NarAbort, then
// NarUnavailable), never imports them, fails InputsUnavailable, and the server has the
// producer re-run and re-uploaded, after which the third worker's build succeeds on good
// bytes.
func TestNarPullBetweenWorkers(t *testing.T) {
	f := newPullFleet(t)
	sys := f.flake.System
	workerA, idA := f.startNixWorker(t, "a", "extra-system-features = gradient-pull-a")

	evalID := f.evaluate(t, "packages."+sys+".consumer")
	// B starts once the evaluation (which A runs in the machine's store) is done, so it only
	// ever builds.
	waitFor(t, "the evaluation to finish evaluating", 3*time.Minute, func() (bool, string) {
		d, err := f.api.Evaluation(bg, evalID)
		if err != nil {
			return false, err.Error()
		}
		return d.Evaluation.Status == "Building" || d.Evaluation.Status == "Completed", summary(d)
	})
	configB, rootB := ownStore(t, "gradient-pull-b")
	workerB, idB := f.startNixWorker(t, "b", configB)

	var producer api.Build
	t.Run("B pulls A's output through the cache and builds on it", func(t *testing.T) {
		d := f.completed(t, evalID, 5*time.Minute, workerA, workerB)
		producer = buildNamed(t, d, "producer")
		consumer := buildNamed(t, d, "consumer")
		if got := f.attemptWorkers(t, producer.ID); len(got) != 1 || got[0] != idA {
			t.Errorf("producer ran on %v, want A %s", got, idA)
		}
		if got := f.attemptWorkers(t, consumer.ID); len(got) != 1 || got[0] != idB {
			t.Errorf("consumer ran on %v, want B %s", got, idB)
		}
		workerB.waitLog(`inputs pulled from the cache and imported.*paths=\d+`, 10*time.Second)
		want := "produced-" + f.nonce + "\n"
		if got := readInStore(t, rootB, outputOf(t, producer.DrvPath)); got != want {
			t.Errorf("B's copy of the producer holds %q, want %q", got, want)
		}
		if got := readInStore(t, rootB, outputOf(t, consumer.DrvPath)); got != want+"consumed\n" {
			t.Errorf("B's consumer output holds %q", got)
		}
	})
	workerB.stop() // C, not B, must take the next consumer; B already holds the producer
	if producer.ID == "" {
		t.Fatal("no producer build to corrupt")
	}

	t.Run("a corrupted NAR on the server's disk is never served as good", func(t *testing.T) {
		out := outputOf(t, producer.DrvPath)
		hash, err := store.StoreHash(out)
		if err != nil {
			t.Fatal(err)
		}
		object := filepath.Join(f.srv.dataDir, "nar", hash+".nar.zst")
		corruptLastByte(t, object)

		eval2 := f.evaluate(t, "packages."+sys+".consumer2")
		waitFor(t, "the second evaluation to finish evaluating", 3*time.Minute, func() (bool, string) {
			d, err := f.api.Evaluation(bg, eval2)
			if err != nil {
				return false, err.Error()
			}
			return d.Evaluation.Status == "Building" || d.Evaluation.Status == "Completed", summary(d)
		})
		configC, rootC := ownStore(t, "gradient-pull-c")
		workerC, idC := f.startNixWorker(t, "c", configC)
		d := f.completed(t, eval2, 5*time.Minute, workerA, workerC, f.srv.proc)
		f.srv.waitLog(`stored NAR does not match its recorded file hash`, 10*time.Second)
		workerC.waitLog(`NAR pull failed, retrying.*corrupt`, 10*time.Second)
		workerC.waitLog(`job failed.*kind=InputsUnavailable`, 10*time.Second)
		if got := f.attemptWorkers(t, producer.ID); len(got) != 2 || got[1] != idA {
			t.Errorf("producer attempts on %v, want a second one on A", got)
		}
		consumer2 := buildNamed(t, d, "consumer2")
		if got := f.attemptWorkers(t, consumer2.ID); len(got) < 2 || got[len(got)-1] != idC {
			t.Errorf("consumer2 attempts on %v, want an InputsUnavailable one and a good one on C", got)
		}
		want := "produced-" + f.nonce + "\n"
		if got := readInStore(t, rootC, outputOf(t, consumer2.DrvPath)); got != want+"consumed-again\n" {
			t.Errorf("C's consumer2 output holds %q", got)
		}
		// The re-upload replaced the damaged object: the cache streams the true NAR again.
		c := f.inspector(t)
		defer c.Close(bg)
		dump, err := exec.Command("nix-store", "--dump", out).Output()
		if err != nil || !bytes.Equal(pullNAR(t, c, out), dump) {
			t.Errorf("after the repair the pulled NAR differs from nix-store --dump: %v", err)
		}
		workerC.stop()
	})
	workerA.stop()
}

// corruptLastByte flips the last byte of a file, keeping its size.
func corruptLastByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
}
