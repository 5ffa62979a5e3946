package forgestatus

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Status is one commit status to post.
type Status struct {
	Commit      string
	State       State
	TargetURL   string
	Description string
	Context     string
}

// Request is an HTTP request, as data: the sender executes it unchanged.
type Request struct {
	Method string
	URL    string
	// Header holds the request's headers, the credential among them (never log it).
	Header map[string]string
	Body   []byte
}

// maxDescription is GitHub's limit on a status description; longer ones are refused there,
// so every forge gets it cut to this many bytes (on a rune boundary).
const maxDescription = 140

// Build makes the request that posts s to t's forge with token (gradient-server §12.1):
//
//	GitHub  POST {api}/repos/{owner}/{repo}/statuses/{sha}, Authorization: Bearer, JSON
//	Gitea   POST {api}/api/v1/repos/{owner}/{repo}/statuses/{sha}, Authorization: token, JSON
//	GitLab  POST {api}/api/v4/projects/{id or url-encoded path}/statuses/{sha},
//	        PRIVATE-TOKEN, form parameters state, target_url, description, name
func Build(t Target, token string, s Status) (Request, error) {
	if err := t.Validate(); err != nil {
		return Request{}, err
	}
	if err := ValidateCommit(s.Commit); err != nil {
		return Request{}, err
	}
	if _, err := ParseState(string(s.State)); err != nil {
		return Request{}, err
	}
	if token == "" || strings.ContainsAny(token, "\r\n") {
		return Request{}, fmt.Errorf("token: empty or multi-line: %w", ErrInvalid)
	}
	base := strings.TrimRight(t.APIURL, "/")
	desc := truncate(s.Description, maxDescription)
	switch t.Forge {
	case GitHub, Gitea:
		body, _ := json.Marshal(jsonStatus{State: ForgeState(t.Forge, s.State), TargetURL: s.TargetURL, Description: desc, Context: s.Context})
		path, auth := "/repos/", "Bearer "+token
		if t.Forge == Gitea {
			path, auth = "/api/v1/repos/", "token "+token
		}
		owner, repo, _ := strings.Cut(t.Repo, "/")
		return Request{Method: "POST", URL: base + path + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/statuses/" + s.Commit,
			Header: map[string]string{"Authorization": auth, "Content-Type": "application/json", "Accept": acceptOf(t.Forge)},
			Body:   body}, nil
	default: // GitLab
		form := url.Values{"state": {ForgeState(GitLab, s.State)}, "name": {s.Context}}
		if s.TargetURL != "" {
			form.Set("target_url", s.TargetURL)
		}
		if desc != "" {
			form.Set("description", desc)
		}
		return Request{Method: "POST", URL: base + "/api/v4/projects/" + url.PathEscape(t.Repo) + "/statuses/" + s.Commit,
			Header: map[string]string{"PRIVATE-TOKEN": token, "Content-Type": "application/x-www-form-urlencoded"},
			Body:   []byte(form.Encode())}, nil
	}
}

// jsonStatus is the body GitHub and Gitea take (the same four fields).
type jsonStatus struct {
	State       string `json:"state"`
	TargetURL   string `json:"target_url,omitempty"`
	Description string `json:"description,omitempty"`
	Context     string `json:"context"`
}

func acceptOf(f Forge) string {
	if f == GitHub {
		return "application/vnd.github+json"
	}
	return "application/json"
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
