package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// TestCacheGCKeepsTheNewestEvaluationsClosure runs the cache's garbage collection against
// real processes (gradient-server §15): two commits of the test flake whose derivations all
// differ are evaluated and built; with --keep-evaluations=1 and no fetch TTL, `admin cache
// gc --dry-run` lists exactly what only the first evaluation made and removes nothing, `admin
// cache gc` then removes those rows and objects, and Nix still copies the second
// evaluation's outputs from the binary cache while the first's are gone.
func TestCacheGCKeepsTheNewestEvaluationsClosure(t *testing.T) {
	f := newFleet(t)
	worker := f.startWorker()
	first := f.completed(t, f.evaluate(t), 5*time.Minute, worker, f.srv.proc)
	second := f.completed(t, f.evaluateCommit(t, f.recommit(t)), 5*time.Minute, worker, f.srv.proc)
	worker.stop()
	old, kept := evaluationPaths(t, first), evaluationPaths(t, second)
	objectsBefore := narObjects(t, f.srv.dataDir)
	t.Logf("%d paths of the first evaluation, %d of the second, %d objects", len(old), len(kept), len(objectsBefore))

	f.srv.stop()
	f.srv = startServer(t, f.srv.addr, f.srv.dataDir, "--keep-evaluations=1", "--keep-fetched=0", "--gc-interval=0")

	dry := f.adminGC(t, "--dry-run")
	if got := deletedPaths(dry); !slices.Equal(got, old) {
		t.Fatalf("dry run would delete\n%v\nwant exactly the first evaluation's paths\n%v", got, old)
	}
	for _, d := range dry.Deleted {
		if d.Size <= 0 || !strings.Contains(d.Reason, "only in evaluation "+first.Evaluation.ID) || d.Since.IsZero() {
			t.Errorf("deletion %+v: want its size, the first evaluation as the reason, and since when", d)
		}
	}
	if after := narObjects(t, f.srv.dataDir); !slices.Equal(after, objectsBefore) || !dry.DryRun {
		t.Fatalf("the dry run removed objects: %d before, %d after", len(objectsBefore), len(after))
	}

	done := f.adminGC(t)
	if got := deletedPaths(done); !slices.Equal(got, old) || done.KeptPaths != len(kept) {
		t.Fatalf("gc deleted %v (kept %d), want %v (kept %d)", got, done.KeptPaths, old, len(kept))
	}
	objects := narObjects(t, f.srv.dataDir)
	for _, p := range old {
		if hash, _ := store.StoreHash(p); slices.Contains(objects, hash) {
			t.Errorf("the object of %s is still on disk", p)
		}
	}
	listed, err := f.api.CachePaths(bg, "main", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range listed.Paths {
		left = append(left, p.StorePath)
	}
	if slices.Sort(left); !slices.Equal(left, kept) {
		t.Fatalf("the cache holds\n%v\nwant the second evaluation's paths\n%v", left, kept)
	}

	cache, netrc := f.nixAccess(t)
	url := "http://" + f.srv.addr + "/cache/main"
	newOut := storeLines(t, "nix-store", "-q", "--outputs", buildNamed(t, second, "c").DrvPath)[0]
	if log, ok := nixCopyFrom(t, url, cache.PublicKey, netrc, newOut); !ok {
		t.Fatalf("a kept path is no longer substitutable:\n%s", log)
	}
	oldOut := storeLines(t, "nix-store", "-q", "--outputs", buildNamed(t, first, "c").DrvPath)[0]
	if log, ok := nixCopyFrom(t, url, cache.PublicKey, netrc, oldOut); ok {
		t.Fatalf("a collected path was still copied:\n%s", log)
	}
	f.diskCapCollects(t, first, second, kept)
}

// diskCapCollects evaluates a third commit, then restarts the server with a disk cap of
// 1 KiB and a log retention of 1 ns: it collects by itself, removing the second evaluation's
// paths, the first two evaluations and their builds' logs, while the third
// evaluation keeps its paths and logs.
func (f *fleet) diskCapCollects(t *testing.T, first, second api.EvaluationDetail, secondPaths []string) {
	worker := f.startWorker()
	third := f.completed(t, f.evaluateCommit(t, f.recommit(t)), 5*time.Minute, worker, f.srv.proc)
	worker.stop()
	f.srv.stop()
	f.srv = startServer(t, f.srv.addr, f.srv.dataDir, "--keep-evaluations=1", "--keep-fetched=0", "--gc-interval=0",
		"--cache-max-disk=1K", "--keep-logs=1ns")
	waitFor(t, "the disk cap's collection", 30*time.Second, func() (bool, string) {
		objects := narObjects(t, f.srv.dataDir)
		hash, _ := store.StoreHash(secondPaths[0])
		return !slices.Contains(objects, hash), f.srv.log.String()
	})
	f.srv.waitLog(`msg="cache gc" deleted=7 .*evaluations_pruned=2 logs_pruned=6`, 10*time.Second)
	for _, ev := range []api.EvaluationDetail{first, second} {
		if _, err := f.api.Evaluation(bg, ev.Evaluation.ID); err == nil {
			t.Errorf("evaluation %s outlived --keep-logs", ev.Evaluation.ID)
		}
	}
	if _, err := f.api.Evaluation(bg, third.Evaluation.ID); err != nil {
		t.Fatalf("the kept evaluation: %v", err)
	}
	for ev, want := range map[*api.EvaluationDetail]bool{&second: false, &third: true} {
		chunk, err := f.api.BuildLog(bg, buildNamed(t, *ev, "c").ID, apiclient.LogQuery{})
		if err != nil || (len(chunk.Data) > 0) != want {
			t.Errorf("log of c in evaluation %s: %q, %v; want a log: %v", ev.Evaluation.ID, chunk.Data, err, want)
		}
	}
}

// recommit commits the flake again with another nonce, so every derivation differs, and
// returns the new commit.
func (f *fleet) recommit(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(f.flake.Dir, "flake.nix"))
	if err != nil {
		t.Fatal(err)
	}
	return nixexectest.CommitFlake(t, f.flake.Dir, strings.ReplaceAll(string(text), f.flake.Nonce, f.flake.Nonce+"x"))
}

// evaluateCommit starts an evaluation of another commit with the project's wildcards.
func (f *fleet) evaluateCommit(t *testing.T, commit string) string {
	t.Helper()
	ev, err := f.api.StartEvaluation(bg, f.project.ID, api.StartEvaluationRequest{Commit: commit})
	if err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// adminGC runs `gradient-server admin cache gc --json` with flags and returns its report.
func (f *fleet) adminGC(t *testing.T, flags ...string) api.GCReport {
	t.Helper()
	cmd := serverCmd(append([]string{"admin", "cache", "gc", "--json"}, flags...)...)
	cmd.Env = append(cmd.Env, "GRADIENT_SERVER=http://"+f.srv.addr, "GRADIENT_API_KEY="+f.key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin cache gc %v: %v\n%s", flags, err, stderrOf(err))
	}
	var rep api.GCReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("admin cache gc output %q: %v", out, err)
	}
	return rep
}

// nixAccess is the main cache with a key pinned to it, as a netrc line for Nix.
func (f *fleet) nixAccess(t *testing.T) (api.Cache, string) {
	t.Helper()
	cache, err := f.api.Cache(bg, "main")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := f.api.CreateAPIKey(bg, api.CreateAPIKeyRequest{Owner: "nix", Cache: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return cache, "machine 127.0.0.1 login nix password " + pinned.Key + "\n"
}

// evaluationPaths is what an evaluation made, sorted: its flake source, and each build's
// .drv file and outputs.
func evaluationPaths(t *testing.T, d api.EvaluationDetail) []string {
	t.Helper()
	out := []string{d.Evaluation.FlakeSource}
	for _, b := range d.Builds {
		out = append(out, b.DrvPath)
		out = append(out, storeLines(t, "nix-store", "-q", "--outputs", b.DrvPath)...)
	}
	slices.Sort(out)
	return out
}

func deletedPaths(r api.GCReport) []string {
	var out []string
	for _, d := range r.Deleted {
		out = append(out, d.StorePath)
	}
	slices.Sort(out)
	return out
}

// narObjects lists the store hashes of the NAR objects on disk, sorted.
func narObjects(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, "nar"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".nar.zst"))
	}
	slices.Sort(out)
	return out
}
