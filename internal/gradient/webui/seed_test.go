package webui_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const seedWorker = "0190a000-0000-7000-8000-00000000000a"

func storePath(name string) string {
	sum := sha256.Sum256([]byte(name))
	hash := make([]byte, 32)
	for i := range hash {
		hash[i] = nixhash.Alphabet[sum[i]%32]
	}
	return "/nix/store/" + string(hash) + "-" + name
}

// seedEvaluation evaluates n derivations in one evaluation of the project: drv-i needs
// drv-(i-1) every tenth one, so the graph has depth; the flake job completes.
func seedEvaluation(tb testing.TB, st store.Store, projectID, prefix string, n int) store.Evaluation {
	ctx := tb.Context()
	ev, err := st.CreateEvaluation(ctx, store.NewEvaluation{ProjectID: projectID, Commit: fmt.Sprintf("%040x", n)})
	if err != nil {
		tb.Fatal(err)
	}
	a, err := st.Claim(ctx, store.EvalJob(ev.ID), seedWorker)
	if err != nil {
		tb.Fatal(err)
	}
	for start := 0; start < n; start += 500 {
		var ds []store.Derivation
		for i := start; i < min(n, start+500); i++ {
			name := fmt.Sprintf("%s-%05d", prefix, i)
			d := store.Derivation{DrvPath: storePath(name + ".drv"), System: "x86_64-linux", Pname: name,
				Outputs: []store.Output{{Name: "out", Path: storePath(name)}}}
			if i%10 != 0 {
				d.Dependencies = []string{storePath(fmt.Sprintf("%s-%05d.drv", prefix, i-1))}
			}
			if i < 3 {
				d.Attr = "packages.x86_64-linux." + name
			}
			ds = append(ds, d)
		}
		if _, err := st.AddEvalResult(ctx, store.EvalBatch{AssignmentID: a.ID, Derivations: ds}); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := st.CompleteEvaluationJob(ctx, a.ID); err != nil {
		tb.Fatal(err)
	}
	return ev
}

// runBuild claims a build and ends it: completed, or failed for good with a log.
func runBuild(tb testing.TB, st store.Store, buildID string, fail bool, log string) {
	ctx := tb.Context()
	a, err := st.Claim(ctx, store.BuildJob(buildID), seedWorker)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.StartBuildAttempt(ctx, a.ID); err != nil {
		tb.Fatal(err)
	}
	if err := st.AppendBuildLog(ctx, a.ID, []byte(log)); err != nil {
		tb.Fatal(err)
	}
	if fail {
		_, err = st.FailBuild(ctx, a.ID, store.BuildFailure{Kind: store.FailPermanent, Reason: "builder exited 1"})
	} else {
		_, err = st.CompleteBuild(ctx, a.ID, false)
	}
	if err != nil {
		tb.Fatal(err)
	}
}
