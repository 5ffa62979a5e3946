package storetest

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

// repoCredTests: a project's sealed credentials are set, replaced, read and removed as
// opaque bytes (gradient-server §13.1).
var repoCredTests = []test{
	{"SetReplaceAndRemove", func(t *testing.T, e *env) {
		if got := must(e.s.ProjectCredentials(e.ctx, e.project.ID)); got.SSHKeyEnc != nil || got.HTTPSTokenEnc != nil {
			t.Fatalf("a new project has credentials: %+v", got)
		}
		check(t, e.s.SetProjectSSHKey(e.ctx, e.project.ID, []byte{1}))
		check(t, e.s.SetProjectSSHKey(e.ctx, e.project.ID, []byte{2, 3}))
		check(t, e.s.SetProjectHTTPSToken(e.ctx, e.project.ID, []byte{4}))
		want := store.SealedCredentials{SSHKeyEnc: []byte{2, 3}, HTTPSTokenEnc: []byte{4}}
		if diff := cmp.Diff(want, must(e.s.ProjectCredentials(e.ctx, e.project.ID))); diff != "" {
			t.Errorf("credentials (-want +got):\n%s", diff)
		}
		if !must(e.s.GetProject(e.ctx, e.project.ID)).HasSSHKey {
			t.Error("HasSSHKey false after SetProjectSSHKey")
		}
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "abc"}))
		if a := must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA)); !cmp.Equal(a.Eval.SSHKeyEnc, []byte{2, 3}) {
			t.Errorf("claimed eval job key %v", a.Eval.SSHKeyEnc)
		}
		check(t, e.s.SetProjectSSHKey(e.ctx, e.project.ID, nil))
		check(t, e.s.SetProjectHTTPSToken(e.ctx, e.project.ID, nil))
		if got := must(e.s.ProjectCredentials(e.ctx, e.project.ID)); got.SSHKeyEnc != nil || got.HTTPSTokenEnc != nil {
			t.Errorf("removed credentials read back: %+v", got)
		}
	}},
	{"UnknownProject", func(t *testing.T, e *env) {
		const unknown = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		wantErr(t, e.s.SetProjectSSHKey(e.ctx, unknown, []byte{1}), store.ErrNotFound)
		wantErr(t, e.s.SetProjectHTTPSToken(e.ctx, "not-a-uuid", []byte{1}), store.ErrNotFound)
		_, err := e.s.ProjectCredentials(e.ctx, unknown)
		wantErr(t, err, store.ErrNotFound)
	}},
}
