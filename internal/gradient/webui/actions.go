package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// callAPI runs one API request in process as the key, decoding a 2xx answer into out. A
// refusal comes back as the API's own message.
func (u *UI) callAPI(ctx context.Context, key store.APIKey, method, path string, in, out any) (int, error) {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequestWithContext(api.WithCaller(ctx, key), method, "http://in-process"+api.Prefix+path, &body)
	if err != nil {
		return 0, err
	}
	rec := &answer{header: http.Header{}, code: http.StatusOK}
	u.api.ServeHTTP(rec, req)
	if rec.code/100 != 2 {
		var e api.Error
		json.Unmarshal(rec.body.Bytes(), &e)
		return rec.code, fmt.Errorf("%s", e.Message)
	}
	if out != nil {
		return rec.code, json.Unmarshal(rec.body.Bytes(), out)
	}
	return rec.code, nil
}

// answer is an in-process API answer: status and body.
type answer struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (a *answer) Header() http.Header         { return a.header }
func (a *answer) Write(b []byte) (int, error) { return a.body.Write(b) }
func (a *answer) WriteHeader(code int)        { a.code = code }

// act runs a form's API call and redirects to done, or shows the API's refusal.
func (u *UI) act(w http.ResponseWriter, r *http.Request, v viewer, method, path string, in any, done func(body []byte) string) {
	var raw json.RawMessage
	status, err := u.callAPI(r.Context(), v.key, method, path, in, &raw)
	if err != nil {
		if status >= 500 {
			u.failErr(w, r, v, err)
			return
		}
		u.fail(w, r, v, status, err.Error())
		return
	}
	http.Redirect(w, r, done(raw), http.StatusSeeOther)
}

// startEvaluation queues an evaluation of a commit, or of a branch's head (the project's
// branch when left empty), through POST /api/v1/projects/{project}/evaluations.
func (u *UI) startEvaluation(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.form(w, r, v) || !u.mayAdminister(w, r, v) {
		return
	}
	p, err := u.project(r.Context(), r.PathValue("project"))
	if err != nil {
		u.notFoundOr(w, r, v, err, "There is no such project.")
		return
	}
	commit, branch, err := parseRef(strings.TrimSpace(r.PostForm.Get("ref")), p.Branch)
	if err != nil {
		u.fail(w, r, v, http.StatusBadRequest, err.Error())
		return
	}
	// the API resolves a branch to its head, with the project's credentials (gradient-server §11.5)
	u.act(w, r, v, http.MethodPost, "/projects/"+url.PathEscape(p.ID)+"/evaluations", api.StartEvaluationRequest{Commit: commit, Branch: branch},
		func(body []byte) string {
			var e api.Evaluation
			json.Unmarshal(body, &e)
			return "/evaluations/" + url.PathEscape(e.ID)
		})
}

func (u *UI) abortEvaluation(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.form(w, r, v) || !u.mayAdminister(w, r, v) {
		return
	}
	id := r.PathValue("id")
	u.act(w, r, v, http.MethodPost, "/evaluations/"+url.PathEscape(id)+"/abort",
		api.AbortRequest{Reason: "aborted in the web UI by " + v.key.Owner},
		func([]byte) string { return "/evaluations/" + url.PathEscape(id) })
}

func (u *UI) retryBuild(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.form(w, r, v) || !u.mayAdminister(w, r, v) {
		return
	}
	id := r.PathValue("id")
	u.act(w, r, v, http.MethodPost, "/builds/"+url.PathEscape(id)+"/retry", nil,
		func([]byte) string { return "/builds/" + url.PathEscape(id) })
}

var (
	hexCommit  = regexp.MustCompile(`^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$`)
	branchName = regexp.MustCompile(`^[A-Za-z0-9._/][A-Za-z0-9._/+-]{0,199}$`)
)

// parseRef reads the form's ref: a full commit hash (lowercased), or a branch name git would
// take as one and never as an option ("" is the project's branch).
func parseRef(ref, projectBranch string) (commit, branch string, err error) {
	if hexCommit.MatchString(ref) {
		return strings.ToLower(ref), "", nil
	}
	if ref == "" {
		ref = projectBranch
	}
	if !branchName.MatchString(ref) || strings.Contains(ref, "..") || strings.HasSuffix(ref, ".lock") {
		return "", "", fmt.Errorf("%q is neither a full commit hash nor a branch name", ref)
	}
	return "", ref, nil
}
