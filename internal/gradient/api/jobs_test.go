package api_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// storePath makes a valid-looking Nix store path for a name.
func storePath(name string) string {
	const alphabet = "0123456789abcdfghijklmnpqrsvwxyz"
	sum := sha256.Sum256([]byte(name))
	hash := make([]byte, 32)
	for i := range hash {
		hash[i] = alphabet[sum[i]%32]
	}
	return "/nix/store/" + string(hash) + "-" + name
}

func drv(name string, deps ...string) store.Derivation {
	d := store.Derivation{DrvPath: storePath(name + ".drv"), Attr: "packages.x86_64-linux." + name,
		System: "x86_64-linux", Pname: name, Outputs: []store.Output{{Name: "out", Path: storePath(name)}}}
	for _, dep := range deps {
		d.Dependencies = append(d.Dependencies, storePath(dep+".drv"))
	}
	return d
}

// evaluated starts an evaluation through the API and plays its flake job on the store as a
// worker would: derivations lib and app (app needs lib) and a warning.
func (h *harness) evaluated(project string) api.Evaluation {
	h.t.Helper()
	ev := got(h.admin.StartEvaluation(h.ctx, project, api.StartEvaluationRequest{Commit: commit})).must(h.t)
	a := got(h.store.Claim(h.ctx, store.EvalJob(ev.ID), workerA)).must(h.t)
	got(h.store.AddEvalResult(h.ctx, store.EvalBatch{AssignmentID: a.ID,
		Derivations: []store.Derivation{drv("lib"), drv("app", "lib")}, Warnings: []string{"trace: hello"}})).must(h.t)
	got(h.store.CompleteEvaluationJob(h.ctx, a.ID)).must(h.t)
	return ev
}

func (h *harness) buildOf(evalID, name string) api.Build {
	h.t.Helper()
	detail := got(h.admin.Evaluation(h.ctx, evalID)).must(h.t)
	i := slices.IndexFunc(detail.Builds, func(b api.Build) bool { return b.Pname == name })
	if i < 0 {
		h.t.Fatalf("evaluation %s has no build %s: %+v", evalID, name, detail.Builds)
	}
	return detail.Builds[i]
}

func TestStartAndListEvaluations(t *testing.T) {
	h := newHarness(t)
	p := got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	ev := got(h.admin.StartEvaluation(h.ctx, "proj", api.StartEvaluationRequest{Commit: strings.ToUpper(commit)})).must(t)
	if ev.Commit != commit || ev.Status != "Queued" || ev.StatusCode != 0 || ev.ProjectID != p.ID ||
		!slices.Equal(ev.Wildcards, p.Wildcards) {
		t.Fatalf("evaluation %+v", ev)
	}
	if kicks, _, _ := h.live.snapshot(); kicks != 1 {
		t.Errorf("dispatcher kicked %d times, want 1", kicks)
	}
	own := got(h.admin.StartEvaluation(h.ctx, p.ID, api.StartEvaluationRequest{Commit: commit, Wildcards: []string{"checks.*"}})).must(t)
	if !slices.Equal(own.Wildcards, []string{"checks.*"}) {
		t.Errorf("explicit wildcards %v", own.Wildcards)
	}
	list := got(h.admin.Evaluations(h.ctx, "proj", 0)).must(t)
	if len(list) != 2 || list[0].ID != own.ID || list[1].ID != ev.ID {
		t.Errorf("list %+v, want newest first", list)
	}
	if one := got(h.admin.Evaluations(h.ctx, "proj", 1)).must(t); len(one) != 1 {
		t.Errorf("limit 1 listed %d", len(one))
	}
	for _, bad := range []string{`{"commit":"abc123"}`, `{"commit":"` + strings.Repeat("g", 40) + `"}`, `{}`,
		`{"commit":"` + commit + `","wildcards":["!x"]}`} {
		h.expectRefusal("POST", "/api/v1/projects/proj/evaluations", bad, 400, api.CodeBadRequest)
	}
	h.expectRefusal("POST", "/api/v1/projects/nope/evaluations", `{"commit":"`+commit+`"}`, 404, api.CodeNotFound)
	h.expectRefusal("GET", "/api/v1/projects/proj/evaluations?limit=0", "", 400, api.CodeBadRequest)
	h.expectRefusal("GET", "/api/v1/projects/proj/evaluations?limit=x", "", 400, api.CodeBadRequest)
	if kicks, _, _ := h.live.snapshot(); kicks != 2 {
		t.Errorf("refused starts kicked the dispatcher: %d kicks", kicks)
	}
}

func TestShowEvaluationAndBuild(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	ev := h.evaluated("proj")
	detail := got(h.admin.Evaluation(h.ctx, ev.ID)).must(t)
	if detail.Evaluation.Status != "Building" || len(detail.Builds) != 2 {
		t.Fatalf("evaluation detail %+v", detail)
	}
	if !slices.ContainsFunc(detail.Messages, func(m api.Message) bool { return m.Level == "Warning" && m.Text == "trace: hello" }) {
		t.Errorf("messages %+v lack the warning", detail.Messages)
	}
	lib, app := h.buildOf(ev.ID, "lib"), h.buildOf(ev.ID, "app")
	if lib.Status != "Queued" || app.Status != "Created" || lib.DrvPath != storePath("lib.drv") {
		t.Errorf("builds lib=%+v app=%+v", lib, app)
	}
	bd := got(h.admin.Build(h.ctx, lib.ID)).must(t)
	if bd.Build.ID != lib.ID || len(bd.Attempts) != 0 {
		t.Errorf("build detail %+v", bd)
	}
	for _, path := range []string{"/api/v1/evaluations/" + workerA, "/api/v1/evaluations/nope",
		"/api/v1/builds/" + workerA, "/api/v1/builds/nope"} {
		h.expectRefusal("GET", path, "", 404, api.CodeNotFound)
	}
	h.expectRefusal("GET", "/api/v1/builds/"+lib.ID+"/log", "", 404, api.CodeNotFound) // no attempt yet
}

func TestBuildLogPaging(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	lib := h.buildOf(h.evaluated("proj").ID, "lib")
	a := got(h.store.Claim(h.ctx, store.BuildJob(lib.ID), workerA)).must(t)
	got(h.store.StartBuildAttempt(h.ctx, a.ID)).must(t)
	var want bytes.Buffer
	for i := range 50 {
		line := fmt.Sprintf("building line %02d\n", i)
		want.WriteString(line)
		if err := h.store.AppendBuildLog(h.ctx, a.ID, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	attempts := got(h.admin.Build(h.ctx, lib.ID)).must(t).Attempts
	if len(attempts) != 1 || attempts[0].Outcome != "Running" || attempts[0].LogBytes != int64(want.Len()) {
		t.Fatalf("attempts %+v", attempts)
	}

	chunk := got(h.admin.BuildLog(h.ctx, lib.ID, apiclient.LogQuery{Offset: 17, Limit: 20})).must(t)
	if string(chunk.Data) != want.String()[17:37] || chunk.NextOffset != 37 || chunk.Size != int64(want.Len()) ||
		chunk.Attempt != attempts[0].ID {
		t.Errorf("window [17,37) = %q next=%d size=%d attempt=%s", chunk.Data, chunk.NextOffset, chunk.Size, chunk.Attempt)
	}
	past := got(h.admin.BuildLog(h.ctx, lib.ID, apiclient.LogQuery{Offset: 1 << 20})).must(t)
	if len(past.Data) != 0 {
		t.Errorf("reading past the end gave %q", past.Data)
	}
	var got bytes.Buffer
	if _, err := copyLogInPages(h, lib.ID, &got); err != nil || got.String() != want.String() {
		t.Errorf("paged copy = %q (%v), want the whole log", got.String(), err)
	}
	raw := h.raw("GET", "/api/v1/builds/"+lib.ID+"/log", h.adminKey, "")
	if raw.status != http.StatusOK || !strings.HasPrefix(raw.header.Get("Content-Type"), "text/plain") || string(raw.body) != want.String() {
		t.Errorf("raw log answer %d %q", raw.status, raw.header.Get("Content-Type"))
	}
	h.expectRefusal("GET", "/api/v1/builds/"+lib.ID+"/log?attempt="+workerA, "", 404, api.CodeNotFound)
	h.expectRefusal("GET", "/api/v1/builds/"+lib.ID+"/log?offset=-1", "", 400, api.CodeBadRequest)
	h.expectRefusal("GET", "/api/v1/builds/"+lib.ID+"/log?limit=0", "", 400, api.CodeBadRequest)
}

// copyLogInPages copies with small pages so CopyBuildLog really loops.
func copyLogInPages(h *harness, buildID string, w *bytes.Buffer) (int64, error) {
	var off int64
	for {
		c, err := h.admin.BuildLog(h.ctx, buildID, apiclient.LogQuery{Offset: off, Limit: 7})
		if err != nil {
			return off, err
		}
		w.Write(c.Data)
		if len(c.Data) == 0 || c.NextOffset >= c.Size {
			return c.NextOffset, nil
		}
		off = c.NextOffset
	}
}

func TestCopyBuildLogReadsEverything(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	lib := h.buildOf(h.evaluated("proj").ID, "lib")
	a := got(h.store.Claim(h.ctx, store.BuildJob(lib.ID), workerA)).must(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16) // 3 MiB: several default pages
	for i := 0; i < len(big); i += 256 << 10 {
		if err := h.store.AppendBuildLog(h.ctx, a.ID, big[i:i+256<<10]); err != nil {
			t.Fatal(err)
		}
	}
	var got bytes.Buffer
	n, err := h.admin.CopyBuildLog(h.ctx, lib.ID, "", &got)
	if err != nil || n != int64(len(big)) || !bytes.Equal(got.Bytes(), big) {
		t.Fatalf("CopyBuildLog = %d bytes, %v; want %d identical bytes", n, err, len(big))
	}
}

func TestAbortBuildSendsAbortJob(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	lib := h.buildOf(h.evaluated("proj").ID, "lib")
	a := got(h.store.Claim(h.ctx, store.BuildJob(lib.ID), workerB)).must(t)

	resp := got(h.admin.AbortBuild(h.ctx, lib.ID, "operator says stop")).must(t)
	if resp.Build == nil || resp.Build.Status != "Aborted" || resp.AbortedBuilds != 1 || resp.StoppedJobs != 1 {
		t.Fatalf("abort answer %+v", resp)
	}
	_, applied, _ := h.live.snapshot()
	if len(applied) != 1 || len(applied[0].Closed) != 1 || applied[0].Closed[0].AssignmentID != a.ID ||
		applied[0].Closed[0].WorkerID != workerB {
		t.Fatalf("effects handed to the server: %+v, want the closed assignment", applied)
	}
	h.expectRefusal("POST", "/api/v1/builds/"+lib.ID+"/abort", "", 409, api.CodeAlreadyDone)
	h.expectRefusal("POST", "/api/v1/builds/"+workerA+"/abort", "", 404, api.CodeNotFound)
	h.expectRefusal("POST", "/api/v1/builds/"+lib.ID+"/abort", `{"why":"x"}`, 400, api.CodeBadRequest)
}

func TestAbortEvaluation(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	ev := h.evaluated("proj")
	lib := h.buildOf(ev.ID, "lib")
	got(h.store.Claim(h.ctx, store.BuildJob(lib.ID), workerA)).must(t)

	a := h.raw("POST", "/api/v1/evaluations/"+ev.ID+"/abort", h.adminKey, "") // the body is optional
	if a.status != http.StatusOK {
		t.Fatalf("abort: %d %s", a.status, a.body)
	}
	detail := got(h.admin.Evaluation(h.ctx, ev.ID)).must(t)
	if detail.Evaluation.Status != "Aborted" {
		t.Errorf("evaluation status %s after abort", detail.Evaluation.Status)
	}
	for _, b := range detail.Builds {
		if b.Status != "Aborted" {
			t.Errorf("build %s is %s after the evaluation's abort", b.Pname, b.Status)
		}
	}
	_, applied, _ := h.live.snapshot()
	if len(applied) != 1 || len(applied[0].Closed) != 1 || len(applied[0].Settled) != 1 {
		t.Errorf("effects handed to the server: %+v", applied)
	}
	h.expectRefusal("POST", "/api/v1/evaluations/"+ev.ID+"/abort", "", 409, api.CodeAlreadyDone)
	h.expectRefusal("POST", "/api/v1/evaluations/nope/abort", "", 404, api.CodeNotFound)
}
