package admincli

import (
	"flag"
	"fmt"
	"io"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// cacheGC collects the server's cache (gradient-server §15), or with --dry-run lists what
// a collection would delete and why.
func cacheGC() command {
	return command{path: "cache gc", setup: func(fs *flag.FlagSet) func(*invocation) error {
		dryRun := fs.Bool("dry-run", false, "list what would be deleted and why; delete nothing")
		return func(in *invocation) error {
			rep, err := in.client.CollectGarbage(in.ctx, *dryRun)
			if err != nil {
				return err
			}
			return in.emit(rep, func(w io.Writer) { renderGC(w, rep) })
		}
	}}
}

func renderGC(w io.Writer, rep api.GCReport) {
	verb := "Deleted"
	if rep.DryRun {
		verb = "Would delete"
	}
	t := newTable(w, "STORE PATH", "SIZE", "UNREACHABLE SINCE", "WHY")
	for _, d := range rep.Deleted {
		t.row(d.StorePath, fmt.Sprint(d.Size), stamp(d.Since), d.Reason)
	}
	t.flush()
	fmt.Fprintf(w, "%s %d paths (%d bytes). Kept %d paths (%d bytes) reachable from %d roots of %d evaluations.\n",
		verb, len(rep.Deleted), rep.DeletedBytes, rep.KeptPaths, rep.KeptBytes, rep.Roots, rep.KeptEvaluations)
	if rep.Busy > 0 {
		fmt.Fprintf(w, "Left %d paths alone: an upload of them was in progress.\n", rep.Busy)
	}
	if !rep.DryRun && (rep.EvaluationsPruned > 0 || rep.LogsPruned > 0) {
		fmt.Fprintf(w, "Pruned %d evaluations and the logs of %d build attempts.\n", rep.EvaluationsPruned, rep.LogsPruned)
	}
}
