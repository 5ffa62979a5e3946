package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const (
	headA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	headB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var triggerTests = []test{
	{"SettingsDefaultAndChangeFieldByField/11.1", func(t *testing.T, e *env) {
		got := must(e.s.ProjectTriggers(e.ctx, e.project.ID))
		if len(got.Branches) != 0 || got.Tags || got.Poll || got.WebhookSecretEnc != nil {
			t.Fatalf("defaults %+v", got)
		}
		branches, on := []string{"main", "release/*"}, true
		check(t, e.s.SetProjectTriggers(e.ctx, e.project.ID, store.TriggerUpdate{Branches: &branches, Poll: &on,
			WebhookSecretEnc: []byte("sealed")}))
		check(t, e.s.SetProjectTriggers(e.ctx, e.project.ID, store.TriggerUpdate{Tags: &on}))
		got = must(e.s.ProjectTriggers(e.ctx, e.project.ID))
		if !slices.Equal(got.Branches, branches) || !got.Tags || !got.Poll || string(got.WebhookSecretEnc) != "sealed" {
			t.Fatalf("after two updates %+v", got)
		}
		check(t, e.s.SetProjectTriggers(e.ctx, e.project.ID, store.TriggerUpdate{ClearSecret: true}))
		if got := must(e.s.ProjectTriggers(e.ctx, e.project.ID)); got.WebhookSecretEnc != nil || !got.Poll {
			t.Fatalf("after clearing the secret %+v", got)
		}
		err := e.s.SetProjectTriggers(e.ctx, "00000000-0000-0000-0000-000000000000", store.TriggerUpdate{Poll: &on})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown project: %v", err)
		}
	}},
	{"PollTargetsAreTheProjectsPolling/11.2", func(t *testing.T, e *env) {
		other := e.newProject("other")
		on, off := true, false
		check(t, e.s.SetProjectTriggers(e.ctx, e.project.ID, store.TriggerUpdate{Poll: &on}))
		check(t, e.s.SetProjectTriggers(e.ctx, other.ID, store.TriggerUpdate{Poll: &off}))
		at := e.clock.Now().Add(time.Minute).UTC().Truncate(time.Microsecond)
		check(t, e.s.RecordPoll(e.ctx, e.project.ID, at, "ls-remote: exit status 128"))
		targets := must(e.s.PollTargets(e.ctx))
		if len(targets) != 1 || targets[0].Project.ID != e.project.ID || targets[0].Project.RepoURL != e.project.RepoURL {
			t.Fatalf("targets %+v", targets)
		}
		if s := targets[0].Settings; !s.LastPollAt.Equal(at) || s.LastPollError != "ls-remote: exit status 128" {
			t.Errorf("last poll %+v", s)
		}
	}},
	{"OneEvaluationPerHead/11.4", func(t *testing.T, e *env) {
		first := must(e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: e.project.ID, Branch: "main", Commit: headA, Source: "poll"}))
		if !first.Created || first.EvaluationID == "" {
			t.Fatalf("first trigger %+v", first)
		}
		again := must(e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: e.project.ID, Branch: "release/1", Commit: headA, Source: "github"}))
		if again.Created || again.EvaluationID != first.EvaluationID {
			t.Fatalf("the same head again %+v, want %s not created", again, first.EvaluationID)
		}
		ev := must(e.s.GetEvaluation(e.ctx, first.EvaluationID))
		if ev.Branch != "main" || ev.Commit != headA || ev.Status != store.EvalQueued || !slices.Equal(ev.Wildcards, e.project.Wildcards) {
			t.Errorf("evaluation %+v", ev)
		}
		other := e.newProject("other")
		if r := must(e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: other.ID, Branch: "main", Commit: headA, Source: "poll"})); !r.Created {
			t.Errorf("another project's head was taken as seen")
		}
		if evs := must(e.s.ListEvaluations(e.ctx, e.project.ID, 0)); len(evs) != 1 {
			t.Errorf("%d evaluations, want 1", len(evs))
		}
	}},
	{"AHeadStartedByHandIsSeen/11.4", func(t *testing.T, e *env) {
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: headA, Branch: "main"}))
		if got := must(e.s.GetEvaluation(e.ctx, ev.ID)); got.Branch != "main" {
			t.Errorf("branch %q", got.Branch)
		}
		r := must(e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: e.project.ID, Branch: "main", Commit: headA, Source: "poll"}))
		if r.Created || r.EvaluationID != ev.ID {
			t.Errorf("trigger after a manual start %+v", r)
		}
		// Starting by hand again is explicit: it evaluates once more.
		must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: headA}))
		if evs := must(e.s.ListEvaluations(e.ctx, e.project.ID, 0)); len(evs) != 2 {
			t.Errorf("%d evaluations, want 2", len(evs))
		}
	}},
	{"RacingTriggersMakeOneEvaluation/11.4", func(t *testing.T, e *env) {
		var wg sync.WaitGroup
		results := make([]store.TriggerResult, 8)
		errs := make([]error, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: e.project.ID, Branch: "main", Commit: headB, Source: "poll"})
			}()
		}
		wg.Wait()
		created := 0
		for i, r := range results {
			check(t, errs[i])
			if r.Created {
				created++
			}
		}
		if created != 1 || len(must(e.s.ListEvaluations(e.ctx, e.project.ID, 0))) != 1 {
			t.Errorf("%d of 8 racing triggers created an evaluation", created)
		}
	}},
	{"TriggerForUnknownProject/11.4", func(t *testing.T, e *env) {
		_, err := e.s.TriggerEvaluation(e.ctx, store.NewTrigger{ProjectID: "00000000-0000-0000-0000-000000000000", Commit: headA, Source: "poll"})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown project: %v", err)
		}
	}},
}
