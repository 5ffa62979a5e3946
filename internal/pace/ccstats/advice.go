package ccstats

import "strings"

// admissionAdvice is what to check when a scheduler does not admit this machine.
const admissionAdvice = "the scheduler does not admit this machine: does a node run here, at PACE_ADDR, " +
	"to mint its tickets, and is that node's key admitted to the cluster? `pacectl explain-admission <machine>` on the scheduler says"

// advice is the one line the report prints under each cause: what to look at next, after the
// fleet documentation's "when a leg is not flowing" table.
var advice = map[Cause]string{
	CauseDispatched:           "compiled on a fleet worker",
	CauseNoScheduler:          "PACE_SCHEDULER is not set, so every miss compiles here: set it to a node port to dispatch",
	CauseDebugColumns:         "a clang -g compile is dispatched only with -gno-column-info: add it to dispatch clang debug builds",
	CauseArguments:            "an argument cannot go to a worker (a path, an @file, the language, or an option off the allowlist); PACE_VERBOSE=1 names it",
	CauseNoFingerprint:        "the toolchain fingerprint failed: run `pace-cc --print-toolchain-fingerprint <compiler>`",
	CausePreprocessFailed:     "the full preprocess for the worker failed; the local compile printed why",
	CauseSchedulerUnreachable: "nothing answered at PACE_SCHEDULER: is the address right, a node running there, and its node port open to this machine?",
	CauseSchedulerError:       "the LEASE exchange broke or outlasted PACE_TIMEOUT_MS: PACE_VERBOSE=1 names the error",
	CauseWorkerUnreachable:    "a lease was granted but no address of the worker answered: does the worker's --advertise name an address this machine reaches?",
	CauseWorkerTimeout:        "the worker fell silent past PACE_DISPATCH_IDLE_MS or the grant's lifetime: a stalled or overloaded worker",
	CauseWorkerError:          "the worker's connection broke or its reply was malformed: the worker's log says why",
	CauseCrossedReply:         "a reply for another request came back (stderr named the worker): report it",
	CauseReplyUnverified:      "the reply's signature did not verify under the granted worker's key: the worker's identity changed, or something rewrote the reply",
	CauseRemoteFailed:         "the remote compile exited non-zero, so it ran here for exact diagnostics: a broken source, or a toolchain difference if the local compile passed",
	CauseRemoteDiagnostics:    "the remote compile printed diagnostics pace-cc could not replay exactly (clang, colours, another message locale, an unrestored directive), so it ran here: PACE_VERBOSE=1 says why",
	CauseLandingFailed:        "the worker's object could not be decoded or written here: disk space, or the output directory's permissions",
	CauseOther:                "an older log line whose cause could not be read",
	CauseDiagnosticsReplayed:  "compiled on a fleet worker; its warnings were printed as the local compile prints them",
	CauseDebugInfo:            "-g3 macro information, or a DWARF version before 5, cannot be compiled elsewhere byte for byte: drop them to dispatch",
	CausePreprocessorPrinted:  "the preprocessor printed something (#warning, #pragma GCC warning): such compiles run here so the output keeps its order",
	CauseUnbundled:            "gcc's directives-only text could not be sent as it compiles here (a pragma it drops, a file changed meanwhile): PACE_VERBOSE=1 names it",
	CauseRemoteObjectInexact:  "the worker's object named its scratch files (an instrumentation no prefix map reaches), so it ran here: report the options",

	"refused:no-worker":              "no registered worker has this toolchain: fingerprints must match byte for byte; compare the node's `serving …` startup lines with `pace-cc --print-toolchain-fingerprint <compiler>`",
	"refused:no-capacity":            "every matching worker was full: more workers or slots, or a lower -j",
	"refused:withdrawn":              "the matching workers withdrew their capacity (stopping, or cordoned)",
	"refused:already-in-flight":      "another client was compiling the same key: the next build hits its result",
	"refused:not-a-member":           admissionAdvice,
	"refused:unauthenticated":        admissionAdvice,
	"refused:ticket-refused":         admissionAdvice,
	"refused:not-leader":             "the cluster had no leader (an election) or redirected more than twice: the role-change log lines carry the term",
	"refused:dispatch-not-permitted": "PACE_SCHEDULER names an endpoint that does not schedule: point it at a node port",
	"refused:grant-unverifiable":     "the node could not judge yet (starting, or no leader for a long time); it passes on its own",
	"refused:roster-not-yet-applied": "the node has not applied its recovered log yet; it passes on its own",

	"worker-refused:not-a-member": "a lease was granted but the worker refused this machine: is that worker a member of the fleet? Or give it --fleet-open; " +
		"its pace_worker_jobs_refused_not_a_member_total counts each client it turned away",
	"worker-refused:ticket-refused":             "the worker refused this machine's ticket: is the node at PACE_ADDR admitted to the cluster the worker follows, and the clocks close?",
	"worker-refused:lease-expired":              "the lease expired before the worker checked it: compare the two machines' clocks, or look for a slow upload",
	"worker-refused:lease-unauthorized":         "the worker did not recognise the lease's signer: is the worker a member of the same cluster, its applied state current?",
	"worker-refused:lease-endpoint-mismatch":    "the worker answers as another endpoint than the lease names: check the worker's --advertise",
	"worker-refused:fingerprint-mismatch":       "the worker no longer serves the leased toolchain: its compiler changed since it registered",
	"worker-refused:endpoint-busy":              "the worker was full (connections or byte budget): more workers, or a lower -j",
	"worker-refused:no-capacity":                "the worker had no free slot: more workers, or a lower -j",
	"worker-refused:worker-rejected-argument":   "the worker's allowlist refused an argument: PACE_VERBOSE=1 names it; the worker's --allow-compile-arg admits it",
	"worker-refused:grant-unverifiable":         "the worker could not judge leases yet (no voter applied, or no leader for an hour)",
	"worker-refused:worker-scratch-unavailable": "the worker could not prepare a scratch directory: its disk",
	"worker-refused:worker-spawn-failed":        "the worker could not start its compiler: its toolchain installation",
}

// Advice is the line the report prints for c.
func Advice(c Cause) string {
	if a, ok := advice[c]; ok {
		return a
	}
	switch s := string(c); {
	case strings.HasSuffix(s, ":"+unrecognisedCode):
		return "a refusal code this pace-cc does not know: the other end runs a newer build"
	case strings.HasPrefix(s, schedulerRefusedPrefix):
		return "the scheduler refused with this code: PACE_VERBOSE=1 prints its message"
	case strings.HasPrefix(s, workerRefusedPrefix):
		return "the worker refused the granted compile with this code: PACE_VERBOSE=1 prints its message, the worker's log says more"
	}
	return ""
}
