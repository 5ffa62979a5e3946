package main

import (
	"bufio"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
)

// talkerFlake has one package that waits for the test's gate, prints a line, sleeps 2 s, and
// prints another.
const talkerFlake = `{
  outputs = { self }: {
    packages.SYSTEM.talker = derivation {
      name = "talker"; system = "SYSTEM"; nonce = "NONCE"; builder = "/bin/sh";
      args = [ "-c" "while [ ! -e GATE ]; do sleep 0.1; done; echo first-line; sleep 2; echo second-line; echo > $out" ];
      PATH = "/usr/bin:/bin";
    };
  };
}
`

// stamped is text received at a time.
type stamped struct {
	at   time.Time
	text string
}

// TestFollowARunningBuildsLog follows the log of a real build by a real worker three ways
// at once (gradient-server §16): apiclient, a raw stream cut and resumed with Last-Event-ID,
// and `admin build log --follow`. Once all three follow the running build, the gate opens:
// each sees the first line at once, well before the second (the builder sleeps 2 s between
// them), and then the end.
func TestFollowARunningBuildsLog(t *testing.T) {
	f := newFleet(t)
	w := f.startWorker()
	text := strings.NewReplacer("SYSTEM", f.flake.System, "NONCE", f.flake.Nonce, "GATE", f.flake.Gate).Replace(talkerFlake)
	ev, err := f.api.StartEvaluation(bg, f.project.ID, api.StartEvaluationRequest{Commit: nixexectest.CommitFlake(t, f.flake.Dir, text)})
	if err != nil {
		t.Fatal(err)
	}
	build := f.queuedBuild(t, ev.ID)
	f.waitBuildStatus(t, build.ID, "Building", 3*time.Minute)
	attached := make(chan string, 3)
	cli := startFollowCLI(t, f, build.ID, attached)
	resumed := make(chan string, 1)
	go func() { resumed <- f.followCutAndResumed(t, build.ID, attached) }()
	followed := make(chan followResult, 1)
	go func() { followed <- f.followStamped(build.ID, attached) }()
	for range 3 {
		select {
		case <-attached:
		case <-time.After(30 * time.Second):
			t.Fatalf("the followers did not all start%s", logsOf([]*proc{f.srv.proc, w}))
		}
	}
	opened := time.Now()
	f.flake.OpenGate(t)
	r := <-followed
	if r.err != nil || !r.end.Success || r.end.Status != "Completed" {
		t.Fatalf("follow ended %+v, %v%s", r.end, r.err, logsOf([]*proc{f.srv.proc, w}))
	}
	stored := f.storedLog(t, build.ID)
	r.check(t, opened, stored)
	if got := <-resumed; got != stored {
		t.Errorf("cut and resumed, the follower got %q, the stored log is %q", got, stored)
	}
	cli.check(t, stored)
}

// followResult is what followStamped saw.
type followResult struct {
	seen          []stamped
	statusAtFirst string // the build's status when the first line arrived
	end           api.LogEnd
	err           error
}

// check: the first line came within 2 s of the gate opening while the build was Building,
// over a second before the second line, and the text is the stored log exactly.
func (r followResult) check(t *testing.T, opened time.Time, stored string) {
	t.Helper()
	if r.statusAtFirst != "Building" {
		t.Errorf("when the first line arrived the build was %q, want Building", r.statusAtFirst)
	}
	first, second := when(r.seen, "first-line"), when(r.seen, "second-line")
	if first.IsZero() || first.Sub(opened) > 2*time.Second || second.Sub(first) < time.Second {
		t.Errorf("gate opened at %v, first line at %v, second at %v: want the first within 2 s, over a second before the second (the builder sleeps 2 s)",
			opened, first, second)
	}
	if got := joined(r.seen); got != stored || strings.Count(stored, "first-line") != 1 {
		t.Errorf("the follower got %q, the stored log is %q", got, stored)
	}
}

// followStamped follows with apiclient, stamping each piece of text as it arrives.
func (f *fleet) followStamped(buildID string, attached chan<- string) followResult {
	var r followResult
	r.end, r.err = f.api.FollowBuildLog(bg, buildID, "", apiclient.Follow{
		Attempt: func(api.Attempt) error { attached <- "apiclient"; return nil },
		Data: func(text string) error {
			r.seen = append(r.seen, stamped{time.Now(), text})
			if strings.Contains(text, "first-line") {
				if b, err := f.api.Build(bg, buildID); err == nil {
					r.statusAtFirst = b.Build.Status
				}
			}
			return nil
		}})
	return r
}

// queuedBuild waits for the evaluation's one build to exist and returns it.
func (f *fleet) queuedBuild(t *testing.T, evalID string) api.Build {
	t.Helper()
	var b api.Build
	waitFor(t, "the talker build", 3*time.Minute, func() (bool, string) {
		d, err := f.api.Evaluation(bg, evalID)
		if err != nil {
			return false, err.Error()
		}
		if len(d.Builds) == 1 {
			b = d.Builds[0]
		}
		return b.ID != "", summary(d)
	})
	return b
}

// followCutAndResumed reads a raw stream up to the event holding the first line, drops the
// connection, and resumes with that event's id to the end; it returns all the text read.
func (f *fleet) followCutAndResumed(t *testing.T, buildID string, attached chan<- string) string {
	var text strings.Builder
	lastID := ""
	for _, until := range []string{"first-line", ""} {
		req, _ := http.NewRequest("GET", "http://"+f.srv.addr+api.Prefix+"/builds/"+buildID+"/log?follow=1", nil)
		req.Header.Set("Authorization", f.key)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return ""
		}
		r := loghub.NewReader(resp.Body, 1<<20)
		for {
			ev, err := r.Next()
			if err != nil || ev.Name == api.EventEnd {
				break
			}
			if ev.Name == api.EventAttempt {
				attached <- "raw"
			}
			if ev.Name == "" {
				text.WriteString(ev.Data)
				lastID = ev.ID
			}
			if until != "" && strings.Contains(ev.Data, until) {
				break
			}
		}
		resp.Body.Close()
	}
	return text.String()
}

func (f *fleet) storedLog(t *testing.T, buildID string) string {
	t.Helper()
	var b strings.Builder
	if _, err := f.api.CopyBuildLog(bg, buildID, "", &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func when(seen []stamped, text string) time.Time {
	for _, s := range seen {
		if strings.Contains(s.text, text) {
			return s.at
		}
	}
	return time.Time{}
}

func joined(seen []stamped) string {
	var b strings.Builder
	for _, s := range seen {
		b.WriteString(s.text)
	}
	return b.String()
}

// followCLI is `gradient-server admin build log ID --follow` running, its stdout stamped
// line by line.
type followCLI struct {
	cmd    *exec.Cmd
	stderr *logBuffer
	lines  chan stamped
}

// startFollowCLI starts the command; attached hears once it printed the attempt's start.
func startFollowCLI(t *testing.T, f *fleet, buildID string, attached chan<- string) *followCLI {
	t.Helper()
	c := &followCLI{cmd: serverCmd("admin", "build", "log", buildID, "--follow"), stderr: &logBuffer{}, lines: make(chan stamped, 64)}
	c.cmd.Env = append(c.cmd.Env, "GRADIENT_SERVER=http://"+f.srv.addr, "GRADIENT_API_KEY="+f.key)
	c.cmd.Stderr = c.stderr
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(c.stderr.String(), "--- attempt") {
				attached <- "admin"
				return
			}
		}
	}()
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill() })
	go func() {
		defer close(c.lines)
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				c.lines <- stamped{time.Now(), line}
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// check waits for the command to exit 0 having printed the log, its first line over a
// second before its second.
func (c *followCLI) check(t *testing.T, stored string) {
	t.Helper()
	var seen []stamped
	timeout := time.After(time.Minute)
	for open := true; open; {
		select {
		case s, ok := <-c.lines:
			if seen, open = append(seen, s), ok; !ok {
				seen = seen[:len(seen)-1]
			}
		case <-timeout:
			t.Fatalf("admin build log --follow did not finish; stderr:\n%s", c.stderr.String())
		}
	}
	if err := c.cmd.Wait(); err != nil {
		t.Errorf("admin build log --follow: %v; stderr:\n%s", err, c.stderr.String())
	}
	if got := joined(seen); got != stored {
		t.Errorf("admin build log --follow printed %q, the stored log is %q", got, stored)
	}
	if first, second := when(seen, "first-line"), when(seen, "second-line"); second.Sub(first) < time.Second {
		t.Errorf("admin printed the first line at %v and the second at %v: want over a second apart", first, second)
	}
	if !strings.Contains(c.stderr.String(), "Completed") {
		t.Errorf("admin stderr %q does not name the end state", c.stderr.String())
	}
}
