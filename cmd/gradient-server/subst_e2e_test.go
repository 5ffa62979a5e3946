package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// substFlake has dep and evil, whose builders leave a marker in MARK when they run, and app,
// which needs both.
const substFlake = `{
  outputs = { self }: let
    system = "SYSTEM";
    mk = name: script: derivation {
      inherit name system; nonce = "NONCE";
      builder = "/bin/sh"; args = [ "-c" script ]; PATH = "/usr/bin:/bin";
    };
    dep = mk "dep" "echo built > MARK-dep; echo dep-NONCE > $out";
    evil = mk "evil" "echo built > MARK-evil; echo evil-NONCE > $out";
    app = mk "app" "cat ${dep} ${evil} > $out";
  in { packages.${system} = { inherit dep evil app; }; };
}
`

// TestUpstreamSubstitution (gradient-server §14): a flake's dependency that an upstream
// binary cache holds under the key the cache trusts is substituted from it, not built — its
// builder never runs on the worker and its build ends Substituted — while a path signed by
// another key is built. The upstream is `nix copy --to file://…` served over HTTP on
// loopback.
func TestUpstreamSubstitution(t *testing.T) {
	nixexectest.RequireNix(t)
	system := nixexectest.NewFlake(t).System
	nonce := "s" + strings.ReplaceAll(newWorkerID(t)[24:], "-", "")
	mark := filepath.Join(nixexectest.GateDir(), "mark-"+nonce)
	repo := t.TempDir()
	commit := nixexectest.CommitFlake(t, repo, strings.NewReplacer("SYSTEM", system, "NONCE", nonce, "MARK", mark).Replace(substFlake))
	ref := "git+file://" + repo + "?rev=" + commit
	upstream := makeUpstream(t, ref, system, mark)

	dataDir, addr := t.TempDir(), freeAddr(t)
	_, client := bootstrapKey(t, addr, dataDir)
	srv := startServer(t, addr, dataDir)
	f := &fleet{t: t, srv: srv, api: client}
	var err error
	if f.cache, err = client.CreateCache(bg, api.CreateCacheRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AddUpstream(bg, "main", api.AddUpstreamRequest{URL: serveDir(t, upstream.dir), PublicKey: upstream.public}); err != nil {
		t.Fatal(err)
	}
	f.project, err = client.CreateProject(bg, api.CreateProjectRequest{Name: "subst", RepoURL: "file://" + repo,
		Branch: "main", Wildcards: []string{"packages." + system + ".*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Subscribe(bg, f.project.ID, f.cache.ID); err != nil {
		t.Fatal(err)
	}
	workerID := newWorkerID(t)
	reg, err := client.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: workerID})
	if err != nil {
		t.Fatal(err)
	}
	worker := startWorker(t, srv, workerID, t.TempDir(), reg.PeersFileLine)
	ev, err := client.StartEvaluation(bg, f.project.ID, api.StartEvaluationRequest{Commit: commit})
	if err != nil {
		t.Fatal(err)
	}
	d := f.completed(t, ev.ID, 3*time.Minute, worker, srv.proc)
	if got := buildNamed(t, d, "dep").Status; got != "Substituted" {
		t.Errorf("dep: %s, want Substituted (%s)", got, summary(d))
	}
	if got := buildNamed(t, d, "evil").Status; got != "Completed" {
		t.Errorf("evil, signed by an untrusted key: %s, want Completed (built)", got)
	}
	if _, err := os.Stat(mark + "-dep"); err == nil {
		t.Errorf("dep's builder ran on the worker although the upstream has it")
	}
	if _, err := os.Stat(mark + "-evil"); err != nil {
		t.Errorf("evil's builder did not run: a path signed by an untrusted key was substituted")
	}
	if !strings.Contains(worker.log.String(), "from_upstream=1") {
		t.Errorf("the worker did not log a substitution from the upstream:\n%s", worker.log)
	}
	verifyCachedOutputs(t, f, buildNamed(t, d, "dep").DrvPath)
}

// upstreamKeys is an upstream directory and the public key trusted for it.
type upstreamKeys struct{ dir, public string }

// makeUpstream builds dep and evil locally, signs dep with the key the test will trust and
// evil with another, copies both into a file:// binary cache, and deletes them (and the
// markers their builders left) from the local store again, so only the upstream has them.
func makeUpstream(t *testing.T, ref, system, mark string) upstreamKeys {
	t.Helper()
	dir, keys := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(args[0], args[1:]...).Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		return strings.TrimSpace(string(out))
	}
	secret := func(name string) (string, string) {
		sk := filepath.Join(keys, name)
		if err := os.WriteFile(sk, []byte(run("nix", "key", "generate-secret", "--key-name", "up-1")), 0o600); err != nil {
			t.Fatal(err)
		}
		pk := run("sh", "-c", "nix key convert-secret-to-public < "+sk)
		return sk, pk
	}
	trusted, trustedPub := secret("trusted")
	other, _ := secret("other")
	var outs []string
	for name, key := range map[string]string{"dep": trusted, "evil": other} {
		drv := run("nix", "eval", "--raw", ref+"#packages."+system+"."+name+".drvPath")
		out := run("nix-store", "--realise", drv)
		run("nix", "store", "sign", "--key-file", key, out)
		outs = append(outs, out)
	}
	run(append([]string{"nix", "copy", "--to", "file://" + dir}, outs...)...)
	run(append([]string{"nix", "store", "delete"}, outs...)...)
	for _, m := range []string{mark + "-dep", mark + "-evil"} {
		if err := os.Remove(m); err != nil {
			t.Fatalf("the local build left no marker: %v", err)
		}
	}
	return upstreamKeys{dir: dir, public: trustedPub}
}

// serveDir serves a directory over HTTP on loopback, as a binary cache's web server would.
func serveDir(t *testing.T, dir string) string {
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}
