package admincli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// commands lists every subcommand.
func commands() []command {
	cmds := []command{
		bootstrapCommand(),
		projectCreate(), projectList(), projectShow(), projectSet(),
		cacheCreate(), cacheList(), cacheKey(), cachePaths(), cacheSubscribe(true), cacheSubscribe(false),
		workerRegister(), workerSetActive(false), workerSetActive(true), workerList(), workerShow(),
		evalStart(), evalList(), evalShow(), buildShow(), buildLog(), abortEval(), abortBuild(),
		keyCreate(), keyList(), keyRevoke(),
	}
	cmds = append(cmds, repoCredCommands()...)
	cmds = append(cmds, cacheGC())
	cmds = append(cmds, projectStatus())
	cmds = append(cmds, upstreamCommands()...)
	return append(cmds, teamCommands()...)
}

func projectCreate() command {
	return command{path: "project create", args: []string{"NAME"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		repo := fs.String("repo-url", "", "git repository URL")
		branch := fs.String("branch", "", "branch (default: the repository's)")
		var wildcards stringList
		fs.Var(&wildcards, "wildcard", "attribute patterns to evaluate, e.g. 'packages.*.*' (repeatable)")
		force := fs.Bool("force-evaluation", false, "evaluate a commit even when it was evaluated before")
		return func(in *invocation) error {
			if *repo == "" || len(wildcards) == 0 {
				return usagef("--repo-url and at least one --wildcard are required")
			}
			p, err := in.client.CreateProject(in.ctx, api.CreateProjectRequest{Name: in.args[0], RepoURL: *repo,
				Branch: *branch, Wildcards: wildcards, ForceEvaluation: *force})
			if err != nil {
				return err
			}
			return in.emit(p, func(w io.Writer) { fmt.Fprintf(w, "Created project %s (%s).\n", p.Name, p.ID) })
		}
	}}
}

func projectList() command {
	return command{path: "project list", setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			ps, err := in.client.ListProjects(in.ctx)
			if err != nil {
				return err
			}
			return in.emit(api.ProjectList{Projects: ps}, func(w io.Writer) {
				t := newTable(w, "NAME", "ID", "REPOSITORY", "BRANCH", "WILDCARDS")
				for _, p := range ps {
					t.row(p.Name, p.ID, p.RepoURL, p.Branch, strings.Join(p.Wildcards, " "))
				}
				t.flush()
			})
		}
	}}
}

func projectShow() command {
	return command{path: "project show", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			p, err := in.client.Project(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(p, func(w io.Writer) {
				fields(w, "Project", p.Name, "ID", p.ID, "Repository", p.RepoURL, "Branch", orDefault(p.Branch),
					"Wildcards", strings.Join(p.Wildcards, " "), "Force evaluation", yesNo(p.ForceEvaluation),
					"SSH key", yesNo(p.HasSSHKey), "Caches", orNone(strings.Join(p.Caches, ", ")), "Created", stamp(p.CreatedAt))
				printTriggers(w, p.Triggers)
			})
		}
	}}
}

func cacheCreate() command {
	return command{path: "cache create", args: []string{"NAME"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		public := fs.Bool("public", false, "anyone may read the cache without a key")
		return func(in *invocation) error {
			c, err := in.client.CreateCache(in.ctx, api.CreateCacheRequest{Name: in.args[0], Public: *public})
			if err != nil {
				return err
			}
			return in.emit(c, func(w io.Writer) {
				fmt.Fprintf(w, "Created %s cache %s (%s).\n", visibility(c.Public), c.Name, c.ID)
				if c.PublicKey != "" {
					fmt.Fprintf(w, "Public key (for Nix's trusted-public-keys): %s\n", c.PublicKey)
				}
			})
		}
	}}
}

func cacheList() command {
	return command{path: "cache list", setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			cs, err := in.client.ListCaches(in.ctx)
			if err != nil {
				return err
			}
			return in.emit(api.CacheList{Caches: cs}, func(w io.Writer) {
				t := newTable(w, "NAME", "ID", "VISIBILITY", "PUBLIC KEY")
				for _, c := range cs {
					t.row(c.Name, c.ID, visibility(c.Public), orNone(c.PublicKey))
				}
				t.flush()
			})
		}
	}}
}

func cacheSubscribe(subscribe bool) command {
	path, verb := "cache subscribe", "Subscribed project %s to cache %s.\n"
	if !subscribe {
		path, verb = "cache unsubscribe", "Unsubscribed project %s from cache %s.\n"
	}
	return command{path: path, args: []string{"PROJECT", "CACHE"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			call := in.client.Subscribe
			if !subscribe {
				call = in.client.Unsubscribe
			}
			if err := call(in.ctx, in.args[0], in.args[1]); err != nil {
				return err
			}
			result := map[string]any{"project": in.args[0], "cache": in.args[1], "subscribed": subscribe}
			return in.emit(result, func(w io.Writer) { fmt.Fprintf(w, verb, in.args[0], in.args[1]) })
		}
	}}
}

func keyCreate() command {
	return command{path: "key create", setup: func(fs *flag.FlagSet) func(*invocation) error {
		owner := fs.String("owner", "", "who the key belongs to")
		cache := fs.String("cache", "", "pin the key to reading this one cache")
		return func(in *invocation) error {
			if *owner == "" {
				return usagef("--owner is required")
			}
			resp, err := in.client.CreateAPIKey(in.ctx, api.CreateAPIKeyRequest{Owner: *owner, Cache: *cache})
			if err != nil {
				return err
			}
			return in.emit(resp, func(w io.Writer) {
				fmt.Fprintf(w, "Created API key %s (owner %q%s).\n", resp.APIKey.ID, resp.APIKey.Owner, pinNote(resp.APIKey.CacheID))
				fmt.Fprintf(w, "The key is shown this once; only its hash is stored:\n\n  %s\n", resp.Key)
			})
		}
	}}
}

func keyList() command {
	return command{path: "key list", setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			keys, err := in.client.APIKeys(in.ctx)
			if err != nil {
				return err
			}
			return in.emit(api.APIKeyList{APIKeys: keys}, func(w io.Writer) {
				t := newTable(w, "ID", "OWNER", "CACHE", "STATUS", "CREATED", "REVOKED")
				for _, k := range keys {
					t.row(k.ID, k.Owner, orDash(k.CacheID), activeOrRevoked(k.Active), stamp(k.CreatedAt), stamp(k.RevokedAt))
				}
				t.flush()
			})
		}
	}}
}

func keyRevoke() command {
	return command{path: "key revoke", args: []string{"KEY_ID"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			if err := in.client.RevokeAPIKey(in.ctx, in.args[0]); err != nil {
				return err
			}
			return in.emit(map[string]any{"id": in.args[0], "revoked": true}, func(w io.Writer) {
				fmt.Fprintf(w, "Revoked API key %s.\n", in.args[0])
			})
		}
	}}
}
