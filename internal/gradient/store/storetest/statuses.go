package storetest

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

// statusRow is what these tests compare of an outbox row.
type statusRow struct{ Sink, Context, State, Outcome, Attr string }

func (e *env) statusRows(evalID string) []statusRow {
	var out []statusRow
	for _, o := range must(e.s.EvaluationStatuses(e.ctx, evalID)) {
		out = append(out, statusRow{o.Sink, o.Context, o.State, o.Outcome, o.Attr})
	}
	return out
}

func (e *env) configureStatuses(perBuild bool) {
	check(e.t, e.s.SetStatusConfig(e.ctx, store.StatusConfig{ProjectID: e.project.ID, Forge: "github",
		APIURL: "https://api.github.com", Repo: "acme/app", TokenEnc: []byte("sealed"), PerBuild: perBuild,
		NotifyURL: "http://hook.example/x", NotifySecretEnc: []byte("sealed2")}))
}

var statusTests = []test{
	{"NoSettingsQueueNothing/12.2", func(t *testing.T, e *env) {
		ev := e.evaluateDone(entry(drv("a")))
		e.complete(e.build(ev.ID, "a").ID)
		if rows := e.statusRows(ev.ID); len(rows) != 0 {
			t.Errorf("rows without settings: %+v", rows)
		}
		wantErr(t, must2(e.s.GetStatusConfig(e.ctx, e.project.ID)), store.ErrNotFound)
	}},
	{"SettingsRoundTrip/12", func(t *testing.T, e *env) {
		e.configureStatuses(true)
		c := must(e.s.GetStatusConfig(e.ctx, e.project.ID))
		if c.Forge != "github" || c.Repo != "acme/app" || string(c.TokenEnc) != "sealed" || !c.PerBuild ||
			c.NotifyURL != "http://hook.example/x" || string(c.NotifySecretEnc) != "sealed2" {
			t.Errorf("config %+v", c)
		}
		check(t, e.s.SetStatusConfig(e.ctx, store.StatusConfig{ProjectID: e.project.ID, NotifyURL: "http://h/y", NotifySecretEnc: []byte("s")}))
		if c = must(e.s.GetStatusConfig(e.ctx, e.project.ID)); c.Forge != "" || c.TokenEnc != nil || c.PerBuild {
			t.Errorf("replaced config %+v", c)
		}
		wantErr(t, e.s.SetStatusConfig(e.ctx, store.StatusConfig{ProjectID: "0190a000-0000-7000-8000-0000000000ff"}), store.ErrNotFound)
	}},
	{"PendingAtCreationSuccessAtSettling/12.2", func(t *testing.T, e *env) {
		e.configureStatuses(false)
		ev, job := e.evalJob()
		ctx := "gradient/main"
		want := []statusRow{{"forge", ctx, "pending", "", ""}, {"webhook", ctx, "pending", "", ""}}
		if diff := cmp.Diff(want, e.statusRows(ev.ID)); diff != "" {
			t.Fatalf("after creation (-want +got):\n%s", diff)
		}
		due := must(e.s.DueStatuses(e.ctx, 10))
		if len(due) != 2 || due[0].Commit != "c0ffee" || due[0].ProjectName != "main" || due[0].ProjectID != e.project.ID {
			t.Fatalf("due %+v", due)
		}
		check(t, e.s.RecordStatusAttempt(e.ctx, due[0].ID, store.StatusAttempt{Outcome: store.StatusDelivered, Attempts: 1, HTTP: 201}))
		must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{entry(drv("a"))}}))
		must(e.s.CompleteEvaluationJob(e.ctx, job.ID))
		e.complete(e.build(ev.ID, "a").ID)
		want = []statusRow{{"forge", ctx, "pending", "delivered", ""}, {"webhook", ctx, "pending", "superseded", ""},
			{"forge", ctx, "success", "", ""}, {"webhook", ctx, "success", "", ""}}
		if diff := cmp.Diff(want, e.statusRows(ev.ID)); diff != "" {
			t.Errorf("after settling (-want +got):\n%s", diff)
		}
	}},
	{"RetryWaitsForNextAt/12.4", func(t *testing.T, e *env) {
		e.configureStatuses(false)
		ev, _ := e.evalJob()
		first := must(e.s.DueStatuses(e.ctx, 1))[0]
		check(t, e.s.RecordStatusAttempt(e.ctx, first.ID, store.StatusAttempt{Outcome: store.StatusQueued, Attempts: 1,
			HTTP: 500, Error: "HTTP 500", NextAt: e.clock.Now().Add(time.Minute)}))
		if due := must(e.s.DueStatuses(e.ctx, 10)); len(due) != 1 || due[0].ID == first.ID {
			t.Fatalf("due while backing off: %+v", due)
		}
		e.clock.Advance(time.Minute)
		due := must(e.s.DueStatuses(e.ctx, 10))
		if len(due) != 2 || due[0].ID != first.ID || due[0].Attempts != 1 || due[0].LastError != "HTTP 500" || due[0].LastHTTP != 500 {
			t.Fatalf("due after the backoff: %+v", due)
		}
		check(t, e.s.RecordStatusAttempt(e.ctx, first.ID, store.StatusAttempt{Outcome: store.StatusFailed, Attempts: 2, Error: "HTTP 401"}))
		if got := must(e.s.EvaluationStatuses(e.ctx, ev.ID))[0]; got.Outcome != store.StatusFailed || got.LastError != "HTTP 401" {
			t.Errorf("given up: %+v", got)
		}
		wantErr(t, e.s.RecordStatusAttempt(e.ctx, "0190a000-0000-7000-8000-0000000000ff", store.StatusAttempt{}), store.ErrNotFound)
		wantErr(t, e.s.RecordStatusAttempt(e.ctx, first.ID, store.StatusAttempt{Outcome: "bogus"}), store.ErrInvalid)
	}},
	{"PerBuildStatusesOfEntryPoints/12.2", func(t *testing.T, e *env) {
		e.configureStatuses(true)
		check(t, e.s.SetStatusConfig(e.ctx, store.StatusConfig{ProjectID: e.project.ID, Forge: "gitlab",
			APIURL: "https://gl.example", Repo: "42", TokenEnc: []byte("t"), PerBuild: true}))
		ev := e.evaluateDone(entry(drv("a")), drv("dep"), entry(drv("b", "dep")))
		must(e.s.FailBuild(e.ctx, e.claim(e.build(ev.ID, "dep").ID, workerA).ID, store.BuildFailure{Kind: store.FailPermanent}))
		e.complete(e.build(ev.ID, "a").ID)
		pa, pb := "gradient/main/packages.x86_64-linux.a", "gradient/main/packages.x86_64-linux.b"
		want := []statusRow{{"forge", "gradient/main", "pending", "superseded", ""},
			{"forge", pa, "pending", "superseded", "packages.x86_64-linux.a"}, {"forge", pb, "pending", "superseded", "packages.x86_64-linux.b"},
			{"forge", pb, "failure", "", "packages.x86_64-linux.b"}, {"forge", pa, "success", "", "packages.x86_64-linux.a"},
			{"forge", "gradient/main", "failure", "", ""}}
		if diff := cmp.Diff(want, e.statusRows(ev.ID)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}},
	{"AbortedIsCanceled/12.2", func(t *testing.T, e *env) {
		e.configureStatuses(false)
		ev, _ := e.evalJob()
		must(e.s.AbortEvaluation(e.ctx, ev.ID, "operator"))
		rows := e.statusRows(ev.ID)
		if len(rows) != 4 || rows[2].State != "canceled" || rows[3].State != "canceled" {
			t.Errorf("rows %+v", rows)
		}
	}},
}

// must2 keeps only the error of a two-value call.
func must2[T any](_ T, err error) error { return err }
