package storetest

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

var liveLogTests = []test{
	{"AppendAnswersTheChunksOffset/16", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		id := e.build(ev.ID, "a").ID
		first := e.claim(id, workerA)
		var att string
		for _, c := range []struct {
			data   string
			offset int64
		}{{"hello ", 0}, {"world\n", 6}, {"done", 12}} {
			got := must(e.s.AppendBuildLogChunk(e.ctx, first.ID, []byte(c.data)))
			if got.BuildID != id || got.Offset != c.offset || got.AttemptID == "" || (att != "" && got.AttemptID != att) {
				t.Errorf("AppendBuildLogChunk(%q) = %+v, want build %s offset %d in one attempt", c.data, got, id, c.offset)
			}
			att = got.AttemptID
		}
		if got := must(e.s.AppendBuildLogChunk(e.ctx, first.ID, nil)); got != (store.LogAppend{}) {
			t.Errorf("an empty chunk answered %+v", got)
		}
		must(e.s.FailBuild(e.ctx, first.ID, store.BuildFailure{Kind: store.FailCanceled}))
		_, err := e.s.AppendBuildLogChunk(e.ctx, first.ID, []byte("late"))
		if err == nil {
			t.Errorf("a chunk for a closed assignment was stored")
		}
		second := e.claim(id, workerB)
		got := must(e.s.AppendBuildLogChunk(e.ctx, second.ID, []byte("try 2")))
		if got.Offset != 0 || got.AttemptID == att || got.BuildID != id {
			t.Errorf("the retry's first chunk went to %+v, want offset 0 of a new attempt", got)
		}
		atts := must(e.s.BuildAttempts(e.ctx, id))
		if len(atts) != 2 || atts[0].ID != att || atts[0].LogBytes != 16 || atts[1].ID != got.AttemptID {
			t.Errorf("attempts %+v", atts)
		}
	}},
	{"AppendPastTheLimitAnswersNoOffset/16", func(t *testing.T, e *env) {
		e.s = e.open(t, store.WithClock(e.clock.Now), store.WithPolicy(store.Policy{MaxLogBytes: 4}))
		e.project = e.newProject("limited")
		ev := e.evaluateDone(drv("a"))
		a := e.claim(e.build(ev.ID, "a").ID, workerA)
		must(e.s.AppendBuildLogChunk(e.ctx, a.ID, []byte("0123")))
		got, err := e.s.AppendBuildLogChunk(e.ctx, a.ID, []byte("4"))
		wantErr(t, err, store.ErrLogLimit)
		if got != (store.LogAppend{}) {
			t.Errorf("a refused chunk answered %+v", got)
		}
	}},
}
