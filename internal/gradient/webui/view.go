package webui

import "github.com/buildfleet/buildfleet/internal/gradient/store"

// A state is one of the groups builds are filtered and coloured by.
const (
	stateFailed    = "failed"
	stateDepFailed = "dependency-failed"
	stateQueued    = "queued"
	stateBuilding  = "building"
	stateDone      = "done"
	stateAborted   = "aborted"
)

// states is the filter order.
var states = []string{stateFailed, stateDepFailed, stateBuilding, stateQueued, stateDone, stateAborted}

// stateOf groups a build status.
func stateOf(s store.BuildStatus) string {
	switch s {
	case store.BuildFailedPermanent, store.BuildFailedTimeout:
		return stateFailed
	case store.BuildDependencyFailed:
		return stateDepFailed
	case store.BuildBuilding:
		return stateBuilding
	case store.BuildCompleted, store.BuildSubstituted:
		return stateDone
	case store.BuildAborted:
		return stateAborted
	}
	return stateQueued // Created, Queued, FailedTransient: waiting to run
}

// evalState groups an evaluation status the same way.
func evalState(s store.EvaluationStatus) string {
	switch s {
	case store.EvalCompleted:
		return stateDone
	case store.EvalFailed:
		return stateFailed
	case store.EvalAborted:
		return stateAborted
	case store.EvalQueued, store.EvalWaiting:
		return stateQueued
	}
	return stateBuilding
}

// name is what a build is called on a page: its pname, else its derivation's name.
func name(b store.BuildInfo) string {
	if b.Pname != "" {
		return b.Pname
	}
	return drvName(b.DrvPath)
}

// drvName is a .drv path without /nix/store/<hash>- and .drv.
func drvName(p string) string {
	const prefixLen = len("/nix/store/") + 33
	if len(p) > prefixLen {
		p = p[prefixLen:]
	}
	if n := len(p) - len(".drv"); n > 0 && p[n:] == ".drv" {
		p = p[:n]
	}
	return p
}

// statusesOf lists the build statuses a state groups (nil for an unknown state: every build).
func statusesOf(state string) []store.BuildStatus {
	var out []store.BuildStatus
	for s := store.BuildCreated; s <= store.BuildFailedTimeout; s++ {
		if stateOf(s) == state {
			out = append(out, s)
		}
	}
	return out
}
