package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/loghub"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// liveLog is a harness whose API follows logs through a hub the test publishes to, as the
// server's report applier does. Poll is long, so whatever arrives promptly came by the hub.
type liveLog struct {
	*harness
	hub   *loghub.Hub
	build string
}

func newLiveLog(t *testing.T, limits loghub.Limits) *liveLog {
	hub := loghub.New(limits)
	h := newHarness(t, func(c *api.Config) {
		c.Follow = api.FollowConfig{Hub: hub, Heartbeat: 50 * time.Millisecond, Poll: time.Minute}
	})
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	return &liveLog{harness: h, hub: hub, build: h.buildOf(h.evaluated("proj").ID, "lib").ID}
}

// claim starts an attempt of the build on worker and tells the followers.
func (l *liveLog) claim(worker string) store.Assignment {
	a := got(l.store.Claim(l.ctx, store.BuildJob(l.build), worker)).must(l.t)
	got(l.store.StartBuildAttempt(l.ctx, a.ID)).must(l.t)
	l.hub.Changed(l.build)
	return a
}

// write stores a chunk and publishes it.
func (l *liveLog) write(a store.Assignment, text string) {
	at := got(l.store.AppendBuildLogChunk(l.ctx, a.ID, []byte(text))).must(l.t)
	l.hub.Publish(at.BuildID, loghub.Chunk{Attempt: at.AttemptID, Offset: at.Offset, Data: []byte(text)})
}

// followed is one thing a follower saw.
type followed struct {
	kind string // attempt, data, attempt-end, end, error
	text string
	at   api.Attempt
	end  api.LogEnd
}

// follow runs FollowBuildLog and reports each callback, then its end.
func (l *liveLog) follow(ctx context.Context, lastID string) <-chan followed {
	out := make(chan followed, 64)
	go func() {
		end, err := l.admin.FollowBuildLog(ctx, l.build, lastID, apiclientFollow(out))
		if err != nil {
			out <- followed{kind: "error", text: err.Error()}
		} else {
			out <- followed{kind: "end", end: end}
		}
		close(out)
	}()
	return out
}

func next(t *testing.T, ch <-chan followed, within time.Duration) followed {
	t.Helper()
	select {
	case f, ok := <-ch:
		if !ok {
			t.Fatal("the follower stopped")
		}
		return f
	case <-time.After(within):
		t.Fatalf("nothing from the follower within %s", within)
	}
	return followed{}
}

func expect(t *testing.T, ch <-chan followed, kind, text string) followed {
	t.Helper()
	f := next(t, ch, 2*time.Second)
	if f.kind != kind || (kind == "data" && f.text != text) {
		t.Fatalf("follower saw %s %q, want %s %q", f.kind, f.text, kind, text)
	}
	return f
}

func TestFollowSendsStoredThenLiveLogThenTheEnd(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{})
	a := l.claim(workerA)
	l.write(a, "first\n")
	ch := l.follow(l.ctx, "")
	at := expect(t, ch, api.EventAttempt, "").at
	expect(t, ch, "data", "first\n")
	start := time.Now()
	l.write(a, "second\n")
	expect(t, ch, "data", "second\n")
	if d := time.Since(start); d > time.Second {
		t.Errorf("a live chunk took %s to arrive", d)
	}
	eff := got(l.store.CompleteBuild(l.ctx, a.ID, false)).must(t)
	for _, b := range eff.Builds {
		l.hub.Changed(b.BuildID)
	}
	if done := expect(t, ch, api.EventAttemptEnd, "").at; done.ID != at.ID || done.Outcome != "Built" || done.LogBytes != 13 {
		t.Errorf("attempt-end %+v, want attempt %s Built with 13 bytes", done, at.ID)
	}
	if end := expect(t, ch, "end", "").end; end.Status != "Completed" || !end.Success || end.BuildID != l.build {
		t.Errorf("end %+v", end)
	}
}

func TestFollowWaitsForTheFirstAttemptAndCrossesRetries(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{})
	ch := l.follow(l.ctx, "")
	first := l.claim(workerA)
	expect(t, ch, api.EventAttempt, "")
	l.write(first, "try 1\n")
	expect(t, ch, "data", "try 1\n")
	eff := got(l.store.FailBuild(l.ctx, first.ID, store.BuildFailure{Kind: store.FailCanceled})).must(t)
	l.hub.Changed(eff.Builds[0].BuildID)
	if done := expect(t, ch, api.EventAttemptEnd, "").at; done.Outcome != "Aborted" && done.Outcome != "Failed" {
		t.Errorf("first attempt ended %+v", done)
	}
	second := l.claim(workerB)
	if at := expect(t, ch, api.EventAttempt, "").at; at.WorkerID != workerB {
		t.Errorf("second attempt %+v", at)
	}
	l.write(second, "try 2\n")
	expect(t, ch, "data", "try 2\n")
	got(l.store.FailBuild(l.ctx, second.ID, store.BuildFailure{Kind: store.FailPermanent, Reason: "boom"})).must(t)
	l.hub.Changed(l.build)
	expect(t, ch, api.EventAttemptEnd, "")
	if end := expect(t, ch, "end", "").end; end.Status != "FailedPermanent" || end.Success {
		t.Errorf("end %+v", end)
	}
}

// A follower that comes back with the last id it got sees the rest once: no text twice,
// none missing, whichever form the id takes.
func TestFollowResumesWithoutDuplicates(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{})
	a := l.claim(workerA)
	l.write(a, "one\n")
	l.write(a, "two\n")
	ctx, cancel := context.WithCancel(l.ctx)
	ch := l.follow(ctx, "")
	at := expect(t, ch, api.EventAttempt, "").at
	expect(t, ch, "data", "one\ntwo\n") // the stored log comes in one event
	cancel()
	l.write(a, "three\n")
	for _, resume := range []struct{ header, query string }{
		{loghub.EventID(at.ID, 8), ""}, {"8", ""}, {"", "&attempt=" + at.ID + "&offset=8"},
	} {
		events := l.rawEvents("/api/v1/builds/"+l.build+"/log?follow=1"+resume.query, resume.header, 1)
		if len(events) != 1 || events[0].Data != "three\n" || events[0].ID != loghub.EventID(at.ID, 14) {
			t.Errorf("resumed with %+v: %+v, want only three at %s:14", resume, events, at.ID)
		}
	}
}

// When the connection breaks, FollowBuildLog resumes after the last event it got: the text
// written meanwhile arrives once, nothing before it again.
func TestFollowBuildLogResumesABrokenStream(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{})
	a := l.claim(workerA)
	l.write(a, "one\n")
	ch := l.follow(l.ctx, "")
	expect(t, ch, api.EventAttempt, "")
	expect(t, ch, "data", "one\n")
	l.srv.CloseClientConnections()
	l.write(a, "two\n")
	expect(t, ch, "data", "two\n")
	got(l.store.CompleteBuild(l.ctx, a.ID, false)).must(t)
	l.hub.Changed(l.build)
	expect(t, ch, api.EventAttemptEnd, "")
	if end := expect(t, ch, "end", "").end; !end.Success {
		t.Errorf("end %+v", end)
	}
}

func TestFollowRefusals(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{PerBuild: 1})
	a := l.claim(workerA)
	l.write(a, "abc")
	path := "/api/v1/builds/" + l.build + "/log?follow=1"
	for _, c := range []struct {
		name, path, lastID string
		status             int
		code               string
	}{
		{"malformed id", path, "x:y", 400, api.CodeBadRequest},
		{"past the log", path, "4", 400, api.CodeBadRequest},
		{"unknown attempt", path + "&attempt=" + workerA, "", 404, api.CodeNotFound},
		{"unknown build", "/api/v1/builds/" + workerB + "/log?follow=1", "", 404, api.CodeNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := l.get(c.path, c.lastID)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
		})
	}
}

// Past the cap a follower is told to come back; HEAD and a caller without a key get no stream.
func TestFollowBusyHeadAndUnauthenticated(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{PerBuild: 1})
	l.write(l.claim(workerA), "abc")
	path := "/api/v1/builds/" + l.build + "/log?follow=1"
	held := l.get(path, "")
	defer held.Body.Close()
	busy := l.get(path, "")
	busy.Body.Close()
	if busy.StatusCode != http.StatusServiceUnavailable || busy.Header.Get("Retry-After") == "" {
		t.Errorf("a follower past the cap: %d, Retry-After %q", busy.StatusCode, busy.Header.Get("Retry-After"))
	}
	head := l.raw("HEAD", path, l.adminKey, "") // answered at once, not streamed
	if head.status != http.StatusOK || !strings.HasPrefix(head.header.Get("Content-Type"), "text/plain") {
		t.Errorf("HEAD of a followed log: %d %q", head.status, head.header.Get("Content-Type"))
	}
	unauth, err := http.Get(l.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	unauth.Body.Close()
	if unauth.StatusCode != http.StatusUnauthorized {
		t.Errorf("a follower without a key: %d", unauth.StatusCode)
	}
}

// An idle stream sends heartbeats, and it ends when the hub closes (the server stopping).
func TestFollowHeartbeatsAndEndsWhenTheHubCloses(t *testing.T) {
	l := newLiveLog(t, loghub.Limits{})
	resp := l.get("/api/v1/builds/"+l.build+"/log?follow=1", "")
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("answer %d %q", resp.StatusCode, ct)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != ": keep-alive\n" {
		t.Fatalf("first line %q, %v; want a heartbeat", line, err)
	}
	l.hub.Close()
	done := make(chan error, 1)
	go func() { _, err := resp.Body.Read(make([]byte, 1<<10)); done <- err }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived the hub")
	}
}

// Without a hub (an API served without a job loop) a follower still gets the log, by
// reading the store every Poll.
func TestFollowWithoutAHubReadsTheStore(t *testing.T) {
	h := newHarness(t, func(c *api.Config) { c.Follow = api.FollowConfig{Poll: 20 * time.Millisecond} })
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	l := &liveLog{harness: h, hub: loghub.New(loghub.Limits{}), build: h.buildOf(h.evaluated("proj").ID, "lib").ID}
	a := l.claim(workerA)
	ch := l.follow(l.ctx, "")
	expect(t, ch, api.EventAttempt, "")
	l.write(a, "polled\n") // published to a hub the API does not read
	expect(t, ch, "data", "polled\n")
}

func (l *liveLog) get(path, lastID string) *http.Response {
	l.t.Helper()
	req, err := http.NewRequestWithContext(l.ctx, "GET", l.srv.URL+path, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("Authorization", l.adminKey)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := l.srv.Client().Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	return resp
}

// rawEvents reads n events of a stream (heartbeats skipped) and closes it.
func (l *liveLog) rawEvents(path, lastID string, n int) []loghub.Event {
	l.t.Helper()
	resp := l.get(path, lastID)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		l.t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	r := loghub.NewReader(resp.Body, 1<<20)
	var out []loghub.Event
	for len(out) < n {
		ev, err := r.Next()
		if err != nil {
			l.t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

func apiclientFollow(out chan<- followed) apiclient.Follow {
	return apiclient.Follow{
		Attempt:    func(at api.Attempt) error { out <- followed{kind: api.EventAttempt, at: at}; return nil },
		Data:       func(text string) error { out <- followed{kind: "data", text: text}; return nil },
		AttemptEnd: func(at api.Attempt) error { out <- followed{kind: api.EventAttemptEnd, at: at}; return nil },
	}
}
