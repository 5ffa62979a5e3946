package main

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/buildfleet/buildfleet/internal/browsertest"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

// TestTheWebUIInABrowser drives the web UI (gradient-server §17) of a real gradient-server with
// a real worker and real Nix from headless Chromium: a signed-out visitor sees nothing private;
// signing in with a key shows the projects; an evaluation started from the project page shows
// every build of the flake with its state; a failing build's page shows its failing log
// line; a running build's log grows on the page while it runs and the page says how it ended;
// the workers page shows a quarantined worker with its reason; a form posted without its CSRF
// token is refused; pages fit a phone's width. Every step saves a screenshot and asserts on
// the DOM.
func TestTheWebUIInABrowser(t *testing.T) {
	chromium := browserOrSkip(t)
	f, ui := newUIFleet(t)
	u := &uiTest{f: f, ui: ui, worker: f.startWorker(), ctx: newBrowser(t, chromium), shots: t.ArtifactDir(), sys: f.flake.System}
	t.Logf("screenshots go to %s (kept with go test -artifacts)", u.shots)
	for _, step := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"a signed-out visitor sees nothing private", u.signedOut},
		{"sign in with a key", u.signIn},
		{"the demo flake's evaluation shows every build with its state", u.evaluation},
		{"a failing build's page shows the failing log lines", u.failingBuild},
		{"a running build's log grows on the page while it runs", u.runningBuild},
		{"the workers page shows a quarantined worker with its reason", u.quarantined},
		{"a form post without the CSRF token is refused", u.csrf},
		{"readable on a phone", u.phone},
	} {
		t.Run(step.name, step.run)
	}
	u.worker.stop()
}

// uiTest is one browser test's fleet, UI address, browser and screenshot directory.
type uiTest struct {
	f         *fleet
	ui, shots string
	sys       string
	worker    *proc
	ctx       context.Context
}

// signedOut: a signed-out visitor sees nothing private.
func (u *uiTest) signedOut(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	for _, path := range []string{"/projects", "/workers", "/queue", "/caches"} {
		navigate(t, ctx, ui+path)
		if loc := browse(t, ctx, chromedp.Location()); !strings.HasPrefix(loc, ui+"/signin") {
			t.Errorf("%s signed out ended on %s", path, loc)
		}
		if body := browse(t, ctx, chromedp.Text("body")); strings.Contains(body, f.project.Name+"\n") || strings.Contains(body, f.workerID) || strings.Contains(body, f.flake.URL) {
			t.Errorf("%s signed out shows private things:\n%s", path, body)
		}
	}
	screenshot(t, ctx, filepath.Join(shots, "signed-out.png"))
}

// signIn: sign in with a key.
func (u *uiTest) signIn(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	navigate(t, ctx, ui+"/signin")
	browse(t, ctx, chromedp.Steps(chromedp.SendKeys("#key", f.key), chromedp.Submit("#key"),
		chromedp.WaitVisible(`li[data-project]`)))
	projects := browse(t, ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("li[data-project]"), e => e.dataset.project)`))
	if !slices.Contains(projects, f.project.Name) {
		t.Fatalf("projects after sign-in: %v", projects)
	}
	screenshot(t, ctx, filepath.Join(shots, "projects.png"))
}

// evaluation: the demo flake's evaluation shows every build with its state.
func (u *uiTest) evaluation(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	navigate(t, ctx, ui+"/projects/"+f.project.Name)
	// the ref left empty: the project's branch, resolved by the API to the flake's commit
	browse(t, ctx, chromedp.Steps(chromedp.Submit("#ref"), chromedp.WaitVisible(`#evaluation`)))
	loc := browse(t, ctx, chromedp.Location())
	id := loc[strings.LastIndex(loc, "/")+1:]
	d := f.completed(t, id, 5*time.Minute, u.worker)
	if d.Evaluation.Commit != f.flake.Commit {
		t.Errorf("the branch resolved to %s, want %s", d.Evaluation.Commit, f.flake.Commit)
	}
	navigate(t, ctx, loc)
	rows := browse(t, ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Array.from(document.querySelectorAll("#builds tr[data-build]"), r => [r.dataset.build, r.dataset.status]))`))
	if len(rows) != len(d.Builds) || len(d.Builds) != 3 {
		t.Errorf("the page lists %d builds, the evaluation has %d: %v", len(rows), len(d.Builds), rows)
	}
	for _, b := range d.Builds {
		if rows[b.ID] != b.Status {
			t.Errorf("build %s: the page says %q, the API %q", b.DrvPath, rows[b.ID], b.Status)
		}
	}
	nodes := browse(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg g.node.done").length`))
	if nodes != 3 {
		t.Errorf("the graph draws %d done builds, want 3", nodes)
	}
	screenshot(t, ctx, filepath.Join(shots, "evaluation.png"))
}

// failingBuild: a failing build's page shows the failing log lines.
func (u *uiTest) failingBuild(t *testing.T) {
	f, ui, ctx, shots, sys := u.f, u.ui, u.ctx, u.shots, u.sys
	d := f.settled(t, f.evaluate(t, "tests."+sys+".fail"), 3*time.Minute)
	b := buildNamed(t, d, "fail")
	navigate(t, ctx, ui+"/evaluations/"+d.Evaluation.ID+"?state=failed")
	browse(t, ctx, chromedp.Click(`#builds tr[data-name="fail"] a`))
	browse(t, ctx, chromedp.WaitVisible(`#log`))
	text := browse(t, ctx, chromedp.Text(`#log`))
	status := browse(t, ctx, chromedp.Text(`#build-status`))
	if !strings.Contains(text, "failing") || status != b.Status || status != "FailedPermanent" {
		t.Errorf("build page of %s: status %q, log %q", b.ID, status, text)
	}
	screenshot(t, ctx, filepath.Join(shots, "failed-build.png"))
}

// runningBuild: a running build's log grows on the page while it runs.
func (u *uiTest) runningBuild(t *testing.T) {
	f, ui, ctx, shots, sys := u.f, u.ui, u.ctx, u.shots, u.sys
	f.flake.CloseGate(t)
	evalID := f.evaluate(t, "tests."+sys+".ticking")
	b := f.waitTicking(t, evalID)
	navigate(t, ctx, ui+"/builds/"+b.ID)
	start := browse(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#log .line").length`))
	grown := browse(t, ctx, chromedp.Poll[int](`(() => { const n = document.querySelectorAll("#log .line").length; return n >= `+strconv.Itoa(start+5)+` ? n : false; })()`,
		chromedp.WithPollingTimeout(30*time.Second)))
	t.Logf("the log grew from %d to %d lines on the page", start, grown)
	screenshot(t, ctx, filepath.Join(shots, "running-build.png"))
	f.flake.OpenGate(t)
	ended := browse(t, ctx, chromedp.Poll[string](`(() => { const s = document.getElementById("build-status").textContent; return s === "Completed" ? s : false; })()`,
		chromedp.WithPollingTimeout(time.Minute)))
	if text := browse(t, ctx, chromedp.Text(`#live`)); !strings.Contains(text, "ended: Completed") {
		t.Errorf("after the build %s: %q", ended, text)
	}
	screenshot(t, ctx, filepath.Join(shots, "ended-build.png"))
}

// quarantined: the workers page shows a quarantined worker with its reason.
func (u *uiTest) quarantined(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	id, dir, peers := f.addWorker(t)
	startWorker(t, f.srv, id, dir, peers, "PATH="+pathWithout(t, "nix"))
	var reason string
	waitFor(t, "the workers page to show the worker quarantined", time.Minute, func() (bool, string) {
		navigate(t, ctx, ui+"/workers")
		reason = browse(t, ctx, chromedp.Evaluate[string](`(() => {
			const r = document.querySelector('#workers tr[data-worker="`+id+`"]');
			return r && r.dataset.state === "quarantined" ? r.querySelector(".reason").textContent : "";
		})()`))
		return reason != "", "not quarantined on the page yet"
	})
	if !strings.Contains(reason, "executable file not found") {
		t.Errorf("quarantine reason %q", reason)
	}
	live := browse(t, ctx, chromedp.Evaluate[string](`document.querySelector('#workers tr[data-worker="`+f.workerID+`"]').dataset.state`))
	if live != api.WorkerLive {
		t.Errorf("the healthy worker shows %q", live)
	}
	screenshot(t, ctx, filepath.Join(shots, "workers.png"))
}

// csrf: a form post without the CSRF token is refused.
func (u *uiTest) csrf(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	before, err := f.api.Evaluations(bg, f.project.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, ui+"/projects/"+f.project.Name)
	browse(t, ctx, chromedp.Evaluate[bool](`document.querySelector('form[action$="/evaluations"] input[name="csrf"]').remove() || true`))
	status := submitAndStatus(t, ctx, "#ref", f.flake.Commit)
	body := browse(t, ctx, chromedp.Text("main"))
	if status != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a start without the token: %d %q", status, body)
	}
	after, err := f.api.Evaluations(bg, f.project.ID, 0)
	if err != nil || len(after) != len(before) {
		t.Errorf("the refused form started an evaluation: %d then %d (%v)", len(before), len(after), err)
	}
	screenshot(t, ctx, filepath.Join(shots, "csrf-refused.png"))
}

// phone: readable on a phone.
func (u *uiTest) phone(t *testing.T) {
	f, ui, ctx, shots := u.f, u.ui, u.ctx, u.shots
	browse(t, ctx, chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/projects/" + f.project.Name, "/workers"} {
		navigate(t, ctx, ui+path)
		if wide := browse(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); wide {
			t.Errorf("%s is wider than a phone's screen", path)
		}
		screenshot(t, ctx, filepath.Join(shots, "phone-"+strings.ReplaceAll(strings.Trim(path, "/"), "/", "-")+".png"))
	}
}

// newUIFleet is newFleet with the web UI on a listener of its own; it returns its base URL.
func newUIFleet(t *testing.T) (*fleet, string) {
	uiAddr := freeAddr(t)
	f := newFleetFlags(t, "--ui-listen="+uiAddr)
	f.srv.waitLog(`web UI ready`, 10*time.Second)
	return f, "http://" + uiAddr
}

// waitTicking waits until the ticking build runs and has printed a tick.
func (f *fleet) waitTicking(t *testing.T, evalID string) api.Build {
	t.Helper()
	var b api.Build
	waitFor(t, "ticking to be building", 3*time.Minute, func() (bool, string) {
		d, err := f.api.Evaluation(bg, evalID)
		if err != nil || len(d.Builds) == 0 {
			return false, "no builds yet"
		}
		b = d.Builds[0]
		if why := cannotComplete(d); why != "" {
			t.Fatalf("ticking will never run: %s", why)
		}
		chunk, err := f.api.BuildLog(bg, b.ID, apiclient.LogQuery{})
		return b.Status == "Building" && err == nil && strings.Contains(string(chunk.Data), "tick"), summary(d)
	})
	return b
}

// submitAndStatus types into a form's input, submits it and returns the HTTP status of the
// page it lands on.
func submitAndStatus(t *testing.T, ctx context.Context, sel, text string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.SendKeys(sel, text), chromedp.Submit(sel))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return resp.Status
}

// browserOrSkip finds Chromium; GRADIENT_REQUIRE_BROWSER=1 turns a skip into a failure.
func browserOrSkip(t *testing.T) string { return browsertest.Find(t, "GRADIENT_REQUIRE_BROWSER") }

// newBrowser starts headless Chromium for the test; it is closed when the test ends.
func newBrowser(t *testing.T, path string) context.Context {
	return browsertest.Start(t, path, 1280, 1400)
}

// browse runs one browser action under a deadline of its own.
func browse[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	return browsertest.Run(t, ctx, 2*time.Minute, a)
}

func navigate(t *testing.T, ctx context.Context, url string) int64 {
	return browsertest.Navigate(t, ctx, url)
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	browsertest.Screenshot(t, ctx, 2*time.Minute, path)
}
