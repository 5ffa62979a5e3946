package admincli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// projectSet is `project set`: what a project follows and how it hears of pushes
// (gradient-server §11.5). Only the flags given change anything.
func projectSet() command {
	return command{path: "project set", args: []string{"PROJECT"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		var branches stringList
		fs.Var(&branches, "branch", "follow branches matching this glob (repeatable; replaces the list), e.g. main, 'release/*'")
		dflt := fs.Bool("default-branch", false, "follow only the project's branch (or the repository's default) again")
		tags := fs.Bool("tags", false, "follow every tag too (--tags=false: stop)")
		poll := fs.String("poll", "", "on or off: poll the repository with git ls-remote")
		secretFile := fs.String("webhook-secret-file", "", "`file` holding the webhook secret (sealed on the server, never shown)")
		noSecret := fs.Bool("no-webhook-secret", false, "remove the webhook secret (deliveries are then refused)")
		return func(in *invocation) error {
			req, err := triggersRequest(fs, branches, *dflt, *tags, *poll, *secretFile, *noSecret)
			if err != nil {
				return err
			}
			t, err := in.client.SetProjectTriggers(in.ctx, in.args[0], req)
			if err != nil {
				return err
			}
			return in.emit(t, func(w io.Writer) {
				fmt.Fprintf(w, "Updated project %s.\n", in.args[0])
				printTriggers(w, &t)
			})
		}
	}}
}

func triggersRequest(fs *flag.FlagSet, branches []string, dflt, tags bool, poll, secretFile string, noSecret bool) (api.SetTriggersRequest, error) {
	var req api.SetTriggersRequest
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case dflt && len(branches) > 0:
		return req, usagef("--branch and --default-branch exclude each other")
	case dflt:
		req.Branches = &[]string{}
	case len(branches) > 0:
		req.Branches = (*[]string)(&branches)
	}
	if set["tags"] {
		req.Tags = &tags
	}
	if poll != "" {
		if poll != "on" && poll != "off" {
			return req, usagef("--poll takes on or off")
		}
		on := poll == "on"
		req.Poll = &on
	}
	if secretFile != "" && noSecret {
		return req, usagef("--webhook-secret-file and --no-webhook-secret exclude each other")
	}
	if noSecret {
		req.WebhookSecret = new(string)
	}
	if secretFile != "" {
		secret, err := readSecret(secretFile)
		if err != nil {
			return req, err
		}
		req.WebhookSecret = &secret
	}
	if req == (api.SetTriggersRequest{}) {
		return req, usagef("nothing to change: give --branch, --default-branch, --tags, --poll or a webhook secret flag")
	}
	return req, nil
}

// readSecret reads a secret file without its final newline; an empty one is refused.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", errors.New("webhook secret: the file is empty")
	}
	return s, nil
}

// startRequest reads `eval start`'s second argument: a full commit hash, else a branch or
// tag the server resolves.
func startRequest(arg string, wildcards []string) api.StartEvaluationRequest {
	req := api.StartEvaluationRequest{Wildcards: wildcards}
	if isCommitHash(arg) {
		req.Commit = arg
	} else {
		req.Branch = arg
	}
	return req
}

func isCommitHash(s string) bool {
	return (len(s) == 40 || len(s) == 64) && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

func printTriggers(w io.Writer, t *api.ProjectTriggers) {
	if t == nil {
		return
	}
	branches := strings.Join(t.Branches, " ")
	if branches == "" {
		branches = "(the project's branch, or the repository's default)"
	}
	kv := []string{"Follows", branches, "Tags", yesNo(t.Tags), "Poll", yesNo(t.Poll), "Webhook secret", yesNo(t.WebhookSecretSet)}
	if t.LastPollAt != "" {
		kv = append(kv, "Last poll", t.LastPollAt, "Last poll error", orDash(t.LastPollError))
	}
	fields(w, kv...)
}
