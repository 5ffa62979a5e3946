package forgehook

// The payload fields each forge sends, as its documentation describes them; only what the
// server reads is declared.

type ghRepo struct {
	ID            int64  `json:"id"`
	FullName      string `json:"full_name"`
	DefaultBranch string `json:"default_branch"`
}

type ghPush struct {
	Ref        string `json:"ref"`
	After      string `json:"after"`
	Deleted    bool   `json:"deleted"`
	Repository ghRepo `json:"repository"`
}

type ghSide struct {
	Ref  string  `json:"ref"`
	SHA  string  `json:"sha"`
	Repo *ghRepo `json:"repo"` // null when the fork was deleted
	// RepoID is Gitea's; GitHub nests the id in repo.
	RepoID int64 `json:"repo_id"`
}

type ghPull struct {
	Action      string `json:"action"`
	Number      int64  `json:"number"`
	PullRequest struct {
		Head ghSide `json:"head"`
		Base ghSide `json:"base"`
	} `json:"pull_request"`
	Repository ghRepo `json:"repository"`
}

// sameRepository reports whether a request's head lives in the base repository.
func (p ghPull) sameRepository() bool {
	h, b := p.PullRequest.Head, p.PullRequest.Base
	if h.Repo == nil || b.Repo == nil {
		return false
	}
	if h.Repo.ID != 0 || b.Repo.ID != 0 {
		return h.Repo.ID == b.Repo.ID
	}
	return h.Repo.FullName != "" && h.Repo.FullName == b.Repo.FullName
}

func parseGitHub(name string, body []byte) (Event, error) {
	switch name {
	case "push":
		var p ghPush
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		return push(name, p.Ref, p.After, p.Deleted, p.Repository.DefaultBranch)
	case "pull_request":
		return parsePull(name, body, "opened", "synchronize", "reopened")
	}
	return ignored(name, ReasonEvent), nil
}

// Gitea's push and pull request payloads follow GitHub's shapes; its actions differ.
func parseGitea(name string, body []byte) (Event, error) {
	switch name {
	case "push":
		var p ghPush
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		return push(name, p.Ref, p.After, false, p.Repository.DefaultBranch)
	case "pull_request":
		return parsePull(name, body, "opened", "synchronized", "reopened")
	}
	return ignored(name, ReasonEvent), nil
}

func parsePull(name string, body []byte, actions ...string) (Event, error) {
	var p ghPull
	if err := decode(body, &p); err != nil {
		return Event{}, err
	}
	if !contains(actions, p.Action) {
		return ignored(name, ReasonEvent), nil
	}
	if !p.sameRepository() {
		return ignored(name, ReasonFork), nil
	}
	return pullRequest(name, p.Number, "refs/pull/", p.PullRequest.Head.SHA, p.PullRequest.Base.Ref, p.Repository.DefaultBranch)
}

type glProject struct {
	ID            int64  `json:"id"`
	DefaultBranch string `json:"default_branch"`
}

type glPush struct {
	ObjectKind  string    `json:"object_kind"`
	Ref         string    `json:"ref"`
	After       string    `json:"after"`
	CheckoutSHA *string   `json:"checkout_sha"` // null when the ref was deleted
	Project     glProject `json:"project"`
}

type glMerge struct {
	ObjectKind       string `json:"object_kind"`
	ObjectAttributes struct {
		IID             int64  `json:"iid"`
		Action          string `json:"action"`
		SourceProjectID int64  `json:"source_project_id"`
		TargetProjectID int64  `json:"target_project_id"`
		TargetBranch    string `json:"target_branch"`
		LastCommit      struct {
			ID string `json:"id"`
		} `json:"last_commit"`
	} `json:"object_attributes"`
	Project glProject `json:"project"`
}

func parseGitLab(name string, body []byte) (Event, error) {
	switch name {
	case "Push Hook", "Tag Push Hook":
		var p glPush
		if err := decode(body, &p); err != nil {
			return Event{}, err
		}
		return push(name, p.Ref, p.After, p.CheckoutSHA == nil, p.Project.DefaultBranch)
	case "Merge Request Hook":
		var m glMerge
		if err := decode(body, &m); err != nil {
			return Event{}, err
		}
		a := m.ObjectAttributes
		if !contains([]string{"open", "update", "reopen"}, a.Action) {
			return ignored(name, ReasonEvent), nil
		}
		if a.SourceProjectID == 0 || a.SourceProjectID != a.TargetProjectID {
			return ignored(name, ReasonFork), nil
		}
		return pullRequest(name, a.IID, "refs/merge-requests/", a.LastCommit.ID, a.TargetBranch, m.Project.DefaultBranch)
	}
	return ignored(name, ReasonEvent), nil
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
