package storetest

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

var logTests = []test{
	{"LogChunksAppendToTheAttempt/6.3", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		a := e.claim(e.build(ev.ID, "a").ID, workerA)
		att := must(e.s.StartBuildAttempt(e.ctx, a.ID))
		if again := must(e.s.StartBuildAttempt(e.ctx, a.ID)); again.ID != att.ID {
			t.Errorf("StartBuildAttempt opened a second attempt %s", again.ID)
		}
		for _, chunk := range []string{"hello ", "", "world\n", "done"} {
			check(t, e.s.AppendBuildLog(e.ctx, a.ID, []byte(chunk)))
		}
		cases := []struct {
			offset int64
			max    int
			want   string
		}{
			{0, 0, "hello world\ndone"}, {3, 5, "lo wo"}, {6, 100, "world\ndone"}, {12, 2, "do"}, {16, 10, ""}, {99, 10, ""},
		}
		for _, c := range cases {
			if got := string(must(e.s.ReadBuildLog(e.ctx, att.ID, c.offset, c.max))); got != c.want {
				t.Errorf("ReadBuildLog(%d, %d) = %q, want %q", c.offset, c.max, got, c.want)
			}
		}
		must(e.s.CompleteBuild(e.ctx, a.ID, false))
		atts := must(e.s.BuildAttempts(e.ctx, a.Job.ID))
		if len(atts) != 1 || atts[0].LogBytes != 16 || atts[0].Outcome != store.AttemptBuilt || atts[0].WorkerID != workerA {
			t.Errorf("attempts %+v", atts)
		}
	}},
	{"EachAttemptHasItsOwnLog/9", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		id := e.build(ev.ID, "a").ID
		first := e.claim(id, workerA)
		check(t, e.s.AppendBuildLog(e.ctx, first.ID, []byte("try 1"))) // opens the attempt itself
		must(e.s.FailBuild(e.ctx, first.ID, store.BuildFailure{Kind: store.FailCanceled}))
		second := e.claim(id, workerB)
		check(t, e.s.AppendBuildLog(e.ctx, second.ID, []byte("try 2")))
		must(e.s.CompleteBuild(e.ctx, second.ID, true))
		atts := must(e.s.BuildAttempts(e.ctx, id))
		if len(atts) != 2 || atts[1].Outcome != store.AttemptSubstituted {
			t.Fatalf("attempts %+v", atts)
		}
		for i, want := range []string{"try 1", "try 2"} {
			if got := string(must(e.s.ReadBuildLog(e.ctx, atts[i].ID, 0, 0))); got != want {
				t.Errorf("attempt %d log %q, want %q", i, got, want)
			}
		}
		if st := e.buildStatus(id); st != store.BuildSubstituted {
			t.Errorf("substituted build status %s", st)
		}
	}},
	{"LogLimitRefusesChunks/6.3", func(t *testing.T, e *env) {
		s := e.open(t, store.WithClock(e.clock.Now), store.WithPolicy(store.Policy{MaxLogBytes: 10}))
		e.s = s
		e.project = e.newProject("limited")
		ev := e.evaluateDone(drv("a"))
		a := e.claim(e.build(ev.ID, "a").ID, workerA)
		check(t, e.s.AppendBuildLog(e.ctx, a.ID, []byte("0123456789")))
		wantErr(t, e.s.AppendBuildLog(e.ctx, a.ID, []byte("x")), store.ErrLogLimit)
		atts := must(e.s.BuildAttempts(e.ctx, a.Job.ID))
		if len(atts) != 1 || atts[0].LogBytes != 10 {
			t.Errorf("attempts %+v", atts)
		}
	}},
}
