package admincli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
)

func evalStart() command {
	return command{path: "eval start", args: []string{"PROJECT", "COMMIT|BRANCH"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		var wildcards stringList
		fs.Var(&wildcards, "wildcard", "attribute patterns instead of the project's (repeatable)")
		return func(in *invocation) error {
			e, err := in.client.StartEvaluation(in.ctx, in.args[0], startRequest(in.args[1], wildcards))
			if err != nil {
				return err
			}
			return in.emit(e, func(w io.Writer) {
				fmt.Fprintf(w, "Queued evaluation %s of %s at %s.\n", e.ID, in.args[0], e.Commit)
			})
		}
	}}
}

func evalList() command {
	return command{path: "eval list", args: []string{"PROJECT"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		limit := fs.Int("limit", 20, "show at most this many, newest first")
		return func(in *invocation) error {
			evals, err := in.client.Evaluations(in.ctx, in.args[0], *limit)
			if err != nil {
				return err
			}
			return in.emit(api.EvaluationList{Evaluations: evals}, func(w io.Writer) {
				t := newTable(w, "ID", "COMMIT", "BRANCH", "STATUS", "CREATED", "UPDATED")
				for _, e := range evals {
					t.row(e.ID, shortCommit(e.Commit), orDash(e.Branch), e.Status, stamp(e.CreatedAt), stamp(e.UpdatedAt))
				}
				t.flush()
			})
		}
	}}
}

func evalShow() command {
	return command{path: "eval show", args: []string{"EVALUATION_ID"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			d, err := in.client.Evaluation(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(d, func(w io.Writer) { printEvaluation(w, d) })
		}
	}}
}

func printEvaluation(w io.Writer, d api.EvaluationDetail) {
	e := d.Evaluation
	kv := []string{"Evaluation", e.ID, "Project", e.ProjectID, "Commit", e.Commit, "Branch", orDash(e.Branch), "Status", e.Status,
		"Wildcards", strings.Join(e.Wildcards, " "), "Flake source", orDash(e.FlakeSource),
		"Created", stamp(e.CreatedAt), "Updated", stamp(e.UpdatedAt)}
	if e.Waiting != "" {
		kv = append(kv, "Waiting", e.Waiting)
	}
	fields(w, kv...)
	fmt.Fprintf(w, "\nBuilds (%d):\n", len(d.Builds))
	t := newTable(w, "ID", "NAME", "STATUS", "ATTEMPT", "SYSTEM", "ENTRY POINTS")
	for _, b := range d.Builds {
		t.row(b.ID, orDash(b.Pname), b.Status, strconv.Itoa(b.Attempt), b.System, orDash(strings.Join(b.EntryPoints, " ")))
	}
	t.flush()
	for _, b := range d.Builds {
		if b.Waiting != "" {
			fmt.Fprintf(w, "  %s waiting: %s\n", b.ID, b.Waiting)
		}
	}
	if len(d.Messages) > 0 {
		fmt.Fprintf(w, "\nMessages (%d):\n", len(d.Messages))
		for _, m := range d.Messages {
			fmt.Fprintf(w, "  %s %s [%s] %s\n", stamp(m.CreatedAt), m.Level, m.Source, m.Text)
		}
	}
	printStatuses(w, d.Statuses)
}

func buildShow() command {
	return command{path: "build show", args: []string{"BUILD_ID"}, setup: func(*flag.FlagSet) func(*invocation) error {
		return func(in *invocation) error {
			d, err := in.client.Build(in.ctx, in.args[0])
			if err != nil {
				return err
			}
			return in.emit(d, func(w io.Writer) {
				b := d.Build
				fields(w, "Build", b.ID, "Derivation", b.DrvPath, "Name", orDash(b.Pname), "System", b.System,
					"Status", b.Status, "Attempts used", strconv.Itoa(b.Attempt), "Queued", stamp(b.QueuedAt),
					"Dispatched", stamp(b.DispatchedAt), "Updated", stamp(b.UpdatedAt))
				fmt.Fprintf(w, "\nAttempts (%d):\n", len(d.Attempts))
				t := newTable(w, "ID", "WORKER", "OUTCOME", "STARTED", "FINISHED", "LOG", "FAILURE")
				for _, a := range d.Attempts {
					t.row(a.ID, a.WorkerID, a.Outcome, stamp(a.StartedAt), stamp(a.FinishedAt),
						strconv.FormatInt(a.LogBytes, 10)+" B", orDash(a.FailureReason))
				}
				t.flush()
			})
		}
	}}
}

// buildLog prints an attempt's log: all of it, or one window with --offset/--limit. The log
// is raw text, so --json does not apply.
func buildLog() command {
	return command{path: "build log", args: []string{"BUILD_ID"}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		attempt := fs.String("attempt", "", "attempt ID (default: the latest)")
		offset := fs.Int64("offset", 0, "start at this byte")
		limit := fs.Int64("limit", 0, "print at most this many bytes (default: all)")
		follow := fs.Bool("follow", false, "print the log as it is written, through every attempt, and exit when the build ends: 0 if it succeeded")
		return func(in *invocation) error {
			if *offset < 0 || *limit < 0 {
				return usagef("--offset and --limit must not be negative")
			}
			if *follow {
				return followBuildLog(in, *attempt, *offset, *limit)
			}
			if *offset == 0 && *limit == 0 {
				_, err := in.client.CopyBuildLog(in.ctx, in.args[0], *attempt, in.out)
				return err
			}
			chunk, err := in.client.BuildLog(in.ctx, in.args[0], apiclient.LogQuery{Attempt: *attempt, Offset: *offset, Limit: *limit})
			if err != nil {
				return err
			}
			_, err = in.out.Write(chunk.Data)
			return err
		}
	}}
}

func abortEval() command {
	return abortCommand("abort eval", "EVALUATION_ID", func(in *invocation, reason string) (api.AbortResponse, error) {
		return in.client.AbortEvaluation(in.ctx, in.args[0], reason)
	})
}

func abortBuild() command {
	return abortCommand("abort build", "BUILD_ID", func(in *invocation, reason string) (api.AbortResponse, error) {
		return in.client.AbortBuild(in.ctx, in.args[0], reason)
	})
}

func abortCommand(path, arg string, call func(*invocation, string) (api.AbortResponse, error)) command {
	return command{path: path, args: []string{arg}, setup: func(fs *flag.FlagSet) func(*invocation) error {
		reason := fs.String("reason", "", "why (recorded with the evaluation's messages)")
		return func(in *invocation) error {
			resp, err := call(in, *reason)
			if err != nil {
				return err
			}
			return in.emit(resp, func(w io.Writer) {
				fmt.Fprintf(w, "Aborted %s: %d build(s) aborted, %d running job(s) stopped.\n",
					in.args[0], resp.AbortedBuilds, resp.StoppedJobs)
			})
		}
	}}
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
