package worker_test

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// gradient-server §14: a build whose output an upstream holds is substituted from the url the
// external query answered — the NAR checked against the signed hash and imported, the
// builder never run — and an upstream answer whose NAR does not match leaves the build to nix.
func TestBuildOutputsAreSubstitutedFromAnUpstream(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	drvs := f.evaluate("packages.*")
	job := f.buildJob(drvs["a"], 60, 0)
	out := job.Builds[0].Outputs[0].Path
	nar := realNAR(t, f, drvs["a"], out)
	sum := sha256.Sum256(nar)
	served := map[string][]byte{"/nar/good.nar": nar, "/nar/bad.nar": append([]byte("x"), nar[1:]...)}
	var mu sync.Mutex
	fetched := map[string]int{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched[r.URL.Path]++
		mu.Unlock()
		if b, ok := served[r.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer up.Close()
	answer := func(file string) wire.CachedPath {
		return wire.CachedPath{Path: out, Cached: true, URL: wire.Some(up.URL + file), NarSize: wire.Some(uint64(len(nar))),
			NarHash: wire.Some(nixexec.SHA256Text(sum[:])), References: wire.Some([]string{})}
	}

	f.srv.SetUpstream(answer("/nar/bad.nar"))
	ss.Assign("build:bad", job)
	if end := f.waitEnd(ss, "build:bad"); fmtType(end) != "*wire.JobCompleted" {
		t.Fatalf("build with a corrupt upstream NAR: %+v", end)
	}
	if bo := buildOutputOf(ss, "build:bad"); bo == nil || bo.Substituted || !strings.Contains(ss.Log("build:bad"), "building a") {
		t.Fatalf("a corrupt upstream NAR was not built around: %+v, log %q", bo, ss.Log("build:bad"))
	}

	mu.Lock()
	if fetched["/nar/bad.nar"] != 1 {
		t.Errorf("the corrupt NAR was fetched %d times, want once", fetched["/nar/bad.nar"])
	}
	mu.Unlock()
	if err := f.nix.Delete(f.ctx, []string{out}); err != nil {
		t.Fatal(err)
	}
	f.srv.Cache.Delete(out)
	f.srv.SetUpstream(answer("/nar/good.nar"))
	ss.Assign("build:good", job)
	if end := f.waitEnd(ss, "build:good"); fmtType(end) != "*wire.JobCompleted" {
		t.Fatalf("build with the upstream's NAR: %+v", end)
	}
	if bo := buildOutputOf(ss, "build:good"); bo == nil || !bo.Substituted || ss.Log("build:good") != "" {
		t.Fatalf("not substituted: %+v, log %q", bo, ss.Log("build:good"))
	}
	if _, ok := f.srv.Cache.Get(out); !ok {
		t.Fatal("the substituted output was not pushed to the cache")
	}

	// c has allowSubstitutes = false: it is never asked for upstream, whatever an upstream has.
	jobC := f.buildJob(drvs["c"], 60, 0)
	outC := jobC.Builds[0].Outputs[0].Path
	f.srv.SetUpstream(wire.CachedPath{Path: outC, Cached: true, URL: wire.Some(up.URL + "/nar/good.nar"),
		NarSize: wire.Some(uint64(len(nar))), NarHash: wire.Some(nixexec.SHA256Text(sum[:]))})
	ss.Assign("build:c", jobC)
	f.waitEnd(ss, "build:c")
	for _, m := range ss.Messages() {
		if q, ok := m.(*wire.CacheQuery); ok && q.JobID == "build:c" && q.External {
			t.Fatalf("asked upstream for a derivation that does not allow substitutes: %+v", q)
		}
	}
	f.noViolations(ss)
}

// realNAR builds drv once and returns its output's NAR, then forgets the output again.
func realNAR(t *testing.T, f *fixture, drv, out string) []byte {
	t.Helper()
	if err := exec.Command("nix-store", "--realise", drv).Run(); err != nil {
		t.Fatal(err)
	}
	nar, err := exec.Command("nix-store", "--dump", out).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nix.Delete(f.ctx, []string{out}); err != nil {
		t.Fatal(err)
	}
	return nar
}

func buildOutputOf(ss interface{ Messages() []wire.ClientMessage }, jobID string) *wire.JobUpdateBuildOutput {
	var out *wire.JobUpdateBuildOutput
	for _, m := range ss.Messages() {
		if u, ok := m.(*wire.JobUpdate); ok && u.JobID == jobID {
			if bo, ok := u.Update.(*wire.JobUpdateBuildOutput); ok {
				out = bo
			}
		}
	}
	return out
}
