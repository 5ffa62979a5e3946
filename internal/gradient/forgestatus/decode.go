package forgestatus

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Received is a commit status request as a forge would read it: what a fake forge (the
// demo's bench/fakeforge, tests) prints and checks.
type Received struct {
	Forge       Forge
	Repo        string // OWNER/REPO, or GitLab's id or path
	Commit      string
	State       string // the forge's own word
	TargetURL   string
	Description string
	Context     string // GitLab's name
	Token       string // the credential from the forge's header
}

// maxDecodeBody bounds a body Decode reads; a status is a few hundred bytes.
const maxDecodeBody = 64 << 10

// Decode reads a request in one of the three documented shapes of Build: the path says
// which forge, the forge's header carries the token, the body (JSON or form) the fields.
// header maps canonical header names (http.CanonicalHeaderKey) to their first value.
func Decode(method, escapedPath string, header map[string]string, body []byte) (Received, error) {
	if method != "POST" {
		return Received{}, fmt.Errorf("method %s: want POST: %w", method, ErrInvalid)
	}
	if len(body) > maxDecodeBody {
		return Received{}, fmt.Errorf("body of %d bytes: %w", len(body), ErrInvalid)
	}
	r, err := decodePath(escapedPath)
	if err != nil {
		return r, err
	}
	if err := ValidateCommit(r.Commit); err != nil {
		return r, err
	}
	if r.Forge == GitLab {
		return decodeGitLab(r, header, body)
	}
	return decodeJSON(r, header, body)
}

// decodePath splits {prefix}{repo}/statuses/{sha}.
func decodePath(p string) (Received, error) {
	var r Received
	var rest string
	switch {
	case strings.HasPrefix(p, "/api/v1/repos/"):
		r.Forge, rest = Gitea, strings.TrimPrefix(p, "/api/v1/repos/")
	case strings.HasPrefix(p, "/api/v4/projects/"):
		r.Forge, rest = GitLab, strings.TrimPrefix(p, "/api/v4/projects/")
	case strings.HasPrefix(p, "/repos/"):
		r.Forge, rest = GitHub, strings.TrimPrefix(p, "/repos/")
	default:
		return r, fmt.Errorf("path %q: not a commit status path: %w", p, ErrInvalid)
	}
	repo, sha, ok := strings.Cut(rest, "/statuses/")
	if !ok || repo == "" {
		return r, fmt.Errorf("path %q: no /statuses/: %w", p, ErrInvalid)
	}
	var err error
	if r.Repo, err = url.PathUnescape(repo); err != nil {
		return r, fmt.Errorf("path %q: %w", p, ErrInvalid)
	}
	r.Commit = sha
	if r.Forge == GitLab && strings.Contains(repo, "/") {
		return r, fmt.Errorf("path %q: GitLab wants the project path URL-encoded: %w", p, ErrInvalid)
	}
	return r, validateRepo(r.Forge, r.Repo)
}

func decodeJSON(r Received, header map[string]string, body []byte) (Received, error) {
	scheme := map[Forge]string{GitHub: "Bearer ", Gitea: "token "}[r.Forge]
	tok, ok := strings.CutPrefix(header["Authorization"], scheme)
	if !ok || tok == "" {
		return r, fmt.Errorf("authorization: want %q and a token: %w", scheme, ErrInvalid)
	}
	if !strings.HasPrefix(header["Content-Type"], "application/json") {
		return r, fmt.Errorf("content type %q: want application/json: %w", header["Content-Type"], ErrInvalid)
	}
	var j jsonStatus
	if err := json.Unmarshal(body, &j); err != nil {
		return r, fmt.Errorf("body: %v: %w", err, ErrInvalid)
	}
	r.Token, r.State, r.TargetURL, r.Description, r.Context = tok, j.State, j.TargetURL, j.Description, j.Context
	known := []string{"pending", "success", "failure", "error"}
	if r.Forge == Gitea {
		known = append(known, "warning")
	}
	return r, checkWord(r.State, known)
}

func decodeGitLab(r Received, header map[string]string, body []byte) (Received, error) {
	r.Token = header["Private-Token"]
	if r.Token == "" {
		return r, fmt.Errorf("PRIVATE-TOKEN missing: %w", ErrInvalid)
	}
	if !strings.HasPrefix(header["Content-Type"], "application/x-www-form-urlencoded") {
		return r, fmt.Errorf("content type %q: want a form: %w", header["Content-Type"], ErrInvalid)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return r, fmt.Errorf("form: %v: %w", err, ErrInvalid)
	}
	r.State, r.TargetURL, r.Description, r.Context = form.Get("state"), form.Get("target_url"), form.Get("description"), form.Get("name")
	return r, checkWord(r.State, []string{"pending", "running", "success", "failed", "canceled"})
}

func checkWord(w string, known []string) error {
	for _, k := range known {
		if w == k {
			return nil
		}
	}
	return fmt.Errorf("state %q: want one of %s: %w", w, strings.Join(known, ", "), ErrInvalid)
}
