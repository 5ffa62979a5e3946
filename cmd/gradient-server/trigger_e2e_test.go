package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/forgehook"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// newTriggerFleet is newFleet with the server polling every 300 ms and serving /metrics.
func newTriggerFleet(t *testing.T) (*fleet, string) {
	f := &fleet{t: t, flake: nixexectest.NewFlake(t), workerID: newWorkerID(t), baseDir: t.TempDir()}
	dataDir, addr := t.TempDir(), freeAddr(t)
	f.key, f.api = bootstrapKey(t, addr, dataDir)
	f.srv = startServer(t, addr, dataDir, "--poll-interval=300ms", "--metrics=127.0.0.1:0")
	metrics := regexp.MustCompile(`metrics=(\S+)`).FindStringSubmatch(f.srv.log.String())[1]
	var err error
	if f.cache, err = f.api.CreateCache(bg, api.CreateCacheRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	f.project, err = f.api.CreateProject(bg, api.CreateProjectRequest{Name: "demo", RepoURL: f.flake.URL,
		Wildcards: []string{"packages." + f.flake.System + ".a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.api.Subscribe(bg, f.project.ID, f.cache.ID); err != nil {
		t.Fatal(err)
	}
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: f.workerID})
	if err != nil {
		t.Fatal(err)
	}
	f.token, f.peersLine = reg.Token, reg.PeersFileLine
	return f, metrics
}

// push commits to the flake repository's main branch and returns the new head.
func push(t *testing.T, dir, msg string) string {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.invalid", "-c", "user.name=t",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("commit", "--quiet", "--allow-empty", "-m", msg)
	return run("rev-parse", "HEAD")
}

// evaluationsOf lists the project's evaluations by commit.
func evaluationsOf(t *testing.T, f *fleet) map[string][]api.Evaluation {
	t.Helper()
	evs, err := f.api.Evaluations(bg, "demo", 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]api.Evaluation{}
	for _, e := range evs {
		out[e.Commit] = append(out[e.Commit], e)
	}
	return out
}

// waitEvaluation waits until the project has an evaluation of commit and returns it.
func waitEvaluation(t *testing.T, f *fleet, commit string, within time.Duration) api.Evaluation {
	t.Helper()
	var ev api.Evaluation
	waitFor(t, "an evaluation of "+commit, within, func() (bool, string) {
		evs := evaluationsOf(t, f)[commit]
		if len(evs) > 0 {
			ev = evs[0]
		}
		return len(evs) > 0, fmt.Sprint(evaluationsOf(t, f))
	})
	return ev
}

// deliver posts a GitHub push of commit to main, signed with secret.
func deliver(t *testing.T, f *fleet, secret, commit string) (int, string) {
	t.Helper()
	body := []byte(`{"ref": "refs/heads/main", "before": "0000000000000000000000000000000000000000", "after": "` + commit +
		`", "deleted": false, "repository": {"id": 1, "full_name": "team/demo", "default_branch": "main"}}`)
	req, err := http.NewRequest("POST", "http://"+f.srv.addr+"/api/v1/hooks/github/demo", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = forgehook.SignatureHeaders(forgehook.GitHub, []byte(secret), body)
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// metric reads one series of the server's /metrics.
func metric(t *testing.T, addr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(text)
	if m == nil {
		t.Fatalf("no series %s in /metrics", series)
	}
	return string(m[1])
}

// TestTriggersEndToEnd: a real server, worker, Nix and git repository. Polling evaluates
// main's head (built to completion) and then a commit pushed to it; with polling off a
// signed GitHub push starts an evaluation, a badly signed one starts nothing, and a head
// both polled and delivered, in either order, is evaluated once (gradient-server §11).
func TestTriggersEndToEnd(t *testing.T) {
	nixexectest.RequireNix(t)
	f, metrics := newTriggerFleet(t)
	w := f.startWorker()
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("hook-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := adminOut(t, f, "project", "set", "demo", "--branch", "main", "--poll", "on", "--webhook-secret-file", secretFile)
	if strings.Contains(out, "hook-s3cret") || !strings.Contains(out, "Webhook secret") {
		t.Fatalf("project set printed:\n%s", out)
	}

	first := waitEvaluation(t, f, f.flake.Commit, 10*time.Second)
	if first.Branch != "main" {
		t.Errorf("the polled evaluation records branch %q", first.Branch)
	}
	f.completed(t, first.ID, 2*time.Minute, f.srv.proc, w)
	second := push(t, f.flake.Dir, "second")
	waitEvaluation(t, f, second, 10*time.Second)

	if code, body := deliver(t, f, "hook-s3cret", second); code != http.StatusAccepted || !strings.Contains(body, `"duplicate"`) {
		t.Fatalf("delivering the polled head: %d %s", code, body)
	}

	adminOut(t, f, "project", "set", "demo", "--poll", "off")
	// A round that read its projects before polling went off ends well within an interval.
	time.Sleep(400 * time.Millisecond)
	third := push(t, f.flake.Dir, "third")
	if code, body := deliver(t, f, "wrong secret", third); code != http.StatusUnauthorized {
		t.Fatalf("badly signed delivery: %d %s", code, body)
	}
	if code, body := deliver(t, f, "hook-s3cret", third); code != http.StatusAccepted || !strings.Contains(body, `"queued"`) {
		t.Fatalf("signed delivery: %d %s", code, body)
	}
	if evs := evaluationsOf(t, f)[third]; len(evs) != 1 || evs[0].Branch != "main" {
		t.Fatalf("evaluations of the delivered head: %+v", evs)
	}
	if code, body := deliver(t, f, "hook-s3cret", third); code != http.StatusAccepted || !strings.Contains(body, `"duplicate"`) {
		t.Fatalf("the same delivery again: %d %s", code, body)
	}
	polls := metric(t, metrics, `gradient_trigger_polls_total{outcome="ok"}`)
	adminOut(t, f, "project", "set", "demo", "--poll", "on")
	waitFor(t, "two more polls", 10*time.Second, func() (bool, string) {
		now := metric(t, metrics, `gradient_trigger_polls_total{outcome="ok"}`)
		var a, b int
		fmt.Sscan(polls, &a)
		fmt.Sscan(now, &b)
		return b >= a+2, now
	})
	if evs := evaluationsOf(t, f)[third]; len(evs) != 1 {
		t.Fatalf("the head delivered and then polled has %d evaluations", len(evs))
	}
	for series, want := range map[string]string{
		`gradient_webhook_refused_total{cause="bad_signature"}`:  "1",
		`gradient_webhook_deliveries_total{outcome="queued"}`:    "1",
		`gradient_webhook_deliveries_total{outcome="duplicate"}`: "2",
		`gradient_evaluations_triggered_total{trigger="poll"}`:   "2",
		`gradient_evaluations_triggered_total{trigger="github"}`: "1",
	} {
		if got := metric(t, metrics, series); got != want {
			t.Errorf("%s = %s, want %s", series, got, want)
		}
	}
	if out := adminOut(t, f, "eval", "start", "demo", "main"); !strings.Contains(out, third) {
		t.Errorf("eval start demo main did not resolve to %s:\n%s", third, out)
	}
	if n := len(evaluationsOf(t, f)); n != 3 {
		t.Errorf("%d commits evaluated, want 3", n)
	}
}
