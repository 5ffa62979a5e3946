package admincli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// projectStatus is `project status PROJECT [flags]`: shows the project's commit status and
// webhook settings, or changes the ones given (gradient-server §12). Tokens and secrets are
// read from files, so they stay out of the process list, and are never printed.
func projectStatus() command {
	return command{path: "project status", args: []string{"PROJECT"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		forge := fs.String("forge", "", "github, gitea, forgejo, gitlab, or none to stop posting statuses")
		apiURL := fs.String("api-url", "", "the forge API's base URL, e.g. https://api.github.com or https://gitea.example")
		repo := fs.String("repo", "", "OWNER/REPO (GitLab: the project's id or full path)")
		tokenFile := fs.String("token-file", "", "`file` holding the forge token (sealed by the server, never shown)")
		perBuild := fs.String("per-build", "", "on: also one status per entry point's build; off: per evaluation only")
		notifyURL := fs.String("notify-url", "", "URL the signed JSON webhook goes to (\"\" turns it off)")
		secretFile := fs.String("notify-secret-file", "", "`file` holding the webhook's HMAC secret")
		return func(in *invocation) error {
			req, changed, err := statusRequest(fs, *forge, *apiURL, *repo, *tokenFile, *perBuild, *notifyURL, *secretFile)
			if err != nil {
				return err
			}
			var st api.ProjectStatus
			if changed {
				st, err = in.client.SetProjectStatus(in.ctx, in.args[0], req)
			} else {
				st, err = in.client.ProjectStatus(in.ctx, in.args[0])
			}
			if err != nil {
				return err
			}
			return in.emit(st, func(w io.Writer) { printProjectStatus(w, st) })
		}
	}}
}

// statusRequest turns the flags that were given into the request; changed is false when
// none was (the command then only shows the settings).
func statusRequest(fs *flag.FlagSet, forge, apiURL, repo, tokenFile, perBuild, notifyURL, secretFile string) (api.SetProjectStatusRequest, bool, error) {
	var req api.SetProjectStatusRequest
	var err error
	changed := false
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		changed = changed || f.Name != "json" && f.Name != "server" && f.Name != "api-key"
		switch f.Name {
		case "forge":
			req.Forge = &forge
		case "api-url":
			req.APIURL = &apiURL
		case "repo":
			req.Repo = &repo
		case "notify-url":
			req.NotifyURL = &notifyURL
		case "token-file":
			req.Token, err = readSecretFile(tokenFile, "--token-file")
		case "notify-secret-file":
			req.NotifySecret, err = readSecretFile(secretFile, "--notify-secret-file")
		case "per-build":
			req.PerBuild, err = onOff(perBuild)
		}
	})
	return req, changed, err
}

func readSecretFile(path, flagName string) (*string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%s: %v", flagName, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, usagef("%s: the file is empty", flagName)
	}
	return &s, nil
}

func onOff(s string) (*bool, error) {
	switch s {
	case "on":
		v := true
		return &v, nil
	case "off":
		v := false
		return &v, nil
	}
	return nil, usagef("--per-build wants on or off, not %q", s)
}

func printProjectStatus(w io.Writer, st api.ProjectStatus) {
	perBuild := "off"
	if st.PerBuild {
		perBuild = "on"
	}
	fields(w, "Project", st.Project, "Forge", orDash(st.Forge), "API URL", orDash(st.APIURL), "Repository", orDash(st.Repo),
		"Token", setOrNot(st.TokenSet), "Per build", perBuild, "Webhook", orDash(st.NotifyURL),
		"Webhook secret", setOrNot(st.NotifySecretSet), "Updated", stamp(st.UpdatedAt))
}

func setOrNot(b bool) string {
	if b {
		return "set (sealed)"
	}
	return "-"
}

// printStatuses is eval show's list of commit statuses and webhook events.
func printStatuses(w io.Writer, ss []api.StatusDelivery) {
	if len(ss) == 0 {
		return
	}
	fmt.Fprintf(w, "\nStatuses (%d):\n", len(ss))
	t := newTable(w, "SINK", "CONTEXT", "STATE", "DELIVERY", "ATTEMPTS", "LAST ERROR")
	for _, s := range ss {
		t.row(s.Sink, s.Context, s.State, s.Delivery, fmt.Sprint(s.Attempts), orDash(s.LastError))
	}
	t.flush()
}
