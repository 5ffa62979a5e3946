package admincli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// Team commands (gradient-protocol §4.2): a team worker is registered once on a team and
// serves every project that grants the team; granting a team reaches connected team
// workers at once.

func teamCommands() []command {
	return []command{teamCreate(), teamList(), teamShow(), teamRegister(), teamEnable(false), teamEnable(true),
		teamGrant(true), teamGrant(false), projectWorkers()}
}

func teamCreate() command {
	return command{path: "team create", args: []string{"NAME"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			t, err := in.client.CreateTeam(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(t, func(w io.Writer) { fmt.Fprintf(w, "Created team %s (%s).\n", t.Name, t.ID) })
		}
	}}
}

func teamList() command {
	return command{path: "team list", setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			ts, err := in.client.ListTeams(in.ctx)
			if err != nil {
				return err
			}
			return in.emit(api.TeamList{Teams: ts}, func(w io.Writer) {
				t := newTable(w, "NAME", "ID", "WORKERS", "GRANTING PROJECTS")
				for _, team := range ts {
					t.row(team.Name, team.ID, fmt.Sprint(len(team.Workers)), orDash(strings.Join(team.Projects, ", ")))
				}
				t.flush()
			})
		}
	}}
}

func teamShow() command {
	return command{path: "team show", args: []string{"TEAM"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			team, err := in.client.Team(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(team, func(w io.Writer) {
				fields(w, "Team", team.Name, "ID", team.ID, "Granting projects", orDash(strings.Join(team.Projects, ", ")))
				fmt.Fprintln(w)
				t := newTable(w, "WORKER ID", "ENABLED", "URL", "REGISTERED")
				for _, tw := range team.Workers {
					t.row(tw.WorkerID, yesNo(tw.Enabled), orDash(tw.URL), stamp(tw.CreatedAt))
				}
				t.flush()
			})
		}
	}}
}

func teamRegister() command {
	return command{path: "team register", args: []string{"TEAM", "WORKER_ID"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		url := fs.String("url", "", "ws:// or wss:// URL for a server-dialed worker")
		return func(in *invocation) error {
			resp, err := in.client.RegisterTeamWorker(in.ctx, in.args[0], api.RegisterTeamWorkerRequest{WorkerID: in.args[1], URL: *url})
			if err != nil {
				return err
			}
			for _, warning := range resp.Warnings {
				fmt.Fprintln(in.diag, "warning:", warning)
			}
			return in.emit(resp, func(w io.Writer) {
				tw := resp.TeamWorker
				fmt.Fprintf(w, "Registered worker %s on team %s.\n", tw.WorkerID, tw.TeamID)
				fmt.Fprintf(w, "Team token, shown this once (only its hash is stored):\n\n  %s\n\n", resp.Token)
				fmt.Fprintf(w, "Add this line to the worker's peers file (GRADIENT_WORKER_PEERS_FILE):\n\n  %s\n", resp.PeersFileLine)
			})
		}
	}}
}

func teamEnable(enabled bool) command {
	path, done := "team disable", "Disabled"
	if enabled {
		path, done = "team enable", "Enabled"
	}
	return command{path: path, args: []string{"TEAM", "WORKER_ID"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			tw, err := in.client.SetTeamWorkerEnabled(in.ctx, in.args[0], in.args[1], enabled)
			if err != nil {
				return err
			}
			return in.emit(tw, func(w io.Writer) { fmt.Fprintf(w, "%s team worker %s.\n", done, tw.WorkerID) })
		}
	}}
}

func teamGrant(grant bool) command {
	path := "team revoke"
	if grant {
		path = "team grant"
	}
	return command{path: path, args: []string{"PROJECT", "TEAM"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			project, team := in.args[0], in.args[1]
			var err error
			if grant {
				err = in.client.GrantTeam(in.ctx, project, team)
			} else {
				err = in.client.RevokeTeam(in.ctx, project, team)
			}
			if err != nil {
				return err
			}
			status := map[string]any{"project": project, "team": team, "granted": grant}
			return in.emit(status, func(w io.Writer) {
				if grant {
					fmt.Fprintf(w, "Project %s now uses the workers of team %s.\n", project, team)
				} else {
					fmt.Fprintf(w, "Project %s no longer grants team %s (running sessions keep it until they reconnect).\n", project, team)
				}
			})
		}
	}}
}

func projectWorkers() command {
	return command{path: "project workers", args: []string{"PROJECT"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			ws, err := in.client.ProjectWorkers(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(api.WorkerList{Workers: ws}, func(w io.Writer) {
				t := newTable(w, "WORKER ID", "STATUS", "CONNECTED", "REMOTE", "REASON")
				for _, wk := range ws {
					t.row(wk.WorkerID, wk.Status, stamp(wk.ConnectedAt), orDash(wk.Remote), orDash(workerReason(wk)))
				}
				t.flush()
			})
		}
	}}
}
