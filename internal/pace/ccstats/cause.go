package ccstats

import (
	"sort"
	"strings"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Cause is what became of a miss's offer to the fleet, named so that nothing in it identifies a
// machine: no address, port or id. The report has one row per cause, so a fleet of a hundred
// workers refusing alike is one row, not a hundred (pace-wire §3.13).
type Cause string

// The causes pace-cc records, one per way out of the dispatch path (internal/pace/cc).
const (
	CauseDispatched           Cause = "dispatched"                     // compiled on a worker
	CauseNoScheduler          Cause = "not-dispatched:no-scheduler"    // PACE_SCHEDULER unset
	CauseDebugColumns         Cause = "not-dispatchable:debug-columns" // -g without -gno-column-info
	CauseArguments            Cause = "not-dispatchable:arguments"     // an argument a worker cannot take
	CauseNoFingerprint        Cause = "not-dispatchable:no-fingerprint"
	CausePreprocessFailed     Cause = "not-dispatchable:preprocess-failed"
	CauseSchedulerUnreachable Cause = "scheduler-unreachable" // no connection to PACE_SCHEDULER
	CauseSchedulerError       Cause = "scheduler-error"       // the LEASE exchange broke or timed out
	CauseWorkerUnreachable    Cause = "worker-unreachable"    // granted, but no worker address answered
	CauseWorkerTimeout        Cause = "worker-timeout"        // the worker fell silent
	CauseWorkerError          Cause = "worker-error"          // the COMPILE exchange broke
	CauseCrossedReply         Cause = "crossed-reply"         // a reply for another request
	CauseReplyUnverified      Cause = "reply-unverified"      // the reply's signature did not verify
	CauseRemoteFailed         Cause = "remote-failed-compiled-here"
	CauseRemoteDiagnostics    Cause = "remote-diagnostics-compiled-here"
	CauseLandingFailed        Cause = "landing-failed" // the worker's object could not be written here
	CauseOther                Cause = "other"          // an older log line with no recognisable cause
	// Added with gcc's directives-only dispatch (pace-wire §3.9.1).
	CauseDiagnosticsReplayed Cause = "dispatched-diagnostics-replayed"           // dispatched, its warnings printed from the worker's
	CauseDebugInfo           Cause = "not-dispatchable:debug-info"               // -g3, or DWARF before 5
	CausePreprocessorPrinted Cause = "not-dispatchable:preprocessor-diagnostics" // #warning and the like: printed where it runs
	CauseUnbundled           Cause = "not-dispatchable:bundle"                   // the directives-only text could not be bundled
	CauseRemoteObjectInexact Cause = "remote-object-inexact-compiled-here"       // the object names the worker's scratch files
)

// Prefixes of the causes that carry a refusal code's wire name.
const (
	schedulerRefusedPrefix = "refused:"
	workerRefusedPrefix    = "worker-refused:"
	unrecognisedCode       = "unrecognised"
)

// SchedulerRefused is the cause for a LEASE the scheduler refused with code. A code this build
// does not know is one cause, so a newer peer cannot grow the report.
func SchedulerRefused(code wire.Code) Cause { return refusedCause(schedulerRefusedPrefix, code) }

// WorkerRefused is the cause for a COMPILE the granted worker refused with code.
func WorkerRefused(code wire.Code) Cause { return refusedCause(workerRefusedPrefix, code) }

func refusedCause(prefix string, code wire.Code) Cause {
	if !code.Live() {
		return Cause(prefix + unrecognisedCode)
	}
	return Cause(prefix + code.String())
}

var fixedCauses = []Cause{CauseDispatched, CauseNoScheduler, CauseDebugColumns, CauseArguments,
	CauseNoFingerprint, CausePreprocessFailed, CauseSchedulerUnreachable, CauseSchedulerError,
	CauseWorkerUnreachable, CauseWorkerTimeout, CauseWorkerError, CauseCrossedReply,
	CauseReplyUnverified, CauseRemoteFailed, CauseRemoteDiagnostics, CauseLandingFailed, CauseOther,
	CauseDiagnosticsReplayed, CauseDebugInfo, CausePreprocessorPrinted, CauseUnbundled, CauseRemoteObjectInexact}

// vocabulary is every cause a fold can produce: the fixed ones and one refusal cause per live
// wire code and end. Its size bounds the report's dispatch table.
var vocabulary = func() map[Cause]bool {
	v := map[Cause]bool{}
	for _, c := range fixedCauses {
		v[c] = true
	}
	for _, prefix := range []string{schedulerRefusedPrefix, workerRefusedPrefix} {
		v[Cause(prefix+unrecognisedCode)] = true
		for _, code := range wire.LiveCodes() {
			v[Cause(prefix+code.String())] = true
		}
	}
	return v
}()

// Causes lists the whole vocabulary, sorted.
func Causes() []Cause {
	out := make([]Cause, 0, len(vocabulary))
	for c := range vocabulary {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Known reports whether c is in the vocabulary.
func (c Cause) Known() bool { return vocabulary[c] }

// NormalizeCause maps what a log line holds to a cause: a cause is itself; the free text older
// pace-cc builds wrote (addresses and error strings included) is read for its cause; anything
// else is CauseOther. The result is always in the vocabulary.
func NormalizeCause(raw string) Cause {
	if c := Cause(raw); c.Known() {
		return c
	}
	for _, rule := range legacyRules {
		if strings.HasPrefix(raw, rule.prefix) {
			return rule.cause(raw[len(rule.prefix):])
		}
	}
	return CauseOther
}

// legacyRules read the messages older builds recorded, which began with one of these.
var legacyRules = []struct {
	prefix string
	cause  func(rest string) Cause
}{
	{"not dispatchable: debug information", fixed(CauseDebugColumns)},
	{"not dispatchable:", fixed(CauseArguments)},
	{"no toolchain fingerprint", fixed(CauseNoFingerprint)},
	{"preprocessing ", legacyPreprocess},
	{"scheduler ", legacyScheduler},
	{"crossed reply", fixed(CauseCrossedReply)},
	{"no worker address reachable", fixed(CauseWorkerUnreachable)},
	{"sending to worker ", fixed(CauseWorkerError)},
	{"landing the object from ", fixed(CauseLandingFailed)},
	{"worker ", legacyWorker},
}

func fixed(c Cause) func(string) Cause { return func(string) Cause { return c } }

func legacyPreprocess(rest string) Cause {
	if strings.Contains(rest, " for dispatch") {
		return CausePreprocessFailed
	}
	return CauseOther
}

// legacyScheduler reads "scheduler <addr> refused: <code>" and "scheduler <addr>: <error>".
func legacyScheduler(rest string) Cause {
	if _, code, ok := strings.Cut(rest, " refused: "); ok {
		return refusedByName(schedulerRefusedPrefix, code)
	}
	if _, after, ok := strings.Cut(rest, ": refused "); ok { // a wire.Refusal inside an error
		code, _, _ := strings.Cut(after, ":")
		return refusedByName(schedulerRefusedPrefix, code)
	}
	if strings.Contains(rest, ": dialling ") {
		return CauseSchedulerUnreachable
	}
	return CauseSchedulerError
}

// legacyWorker reads "worker <addr>: <what happened>".
func legacyWorker(rest string) Cause {
	switch {
	case strings.Contains(rest, ": the compiler exited "):
		return CauseRemoteFailed
	case strings.Contains(rest, ": the compile printed diagnostics"):
		return CauseRemoteDiagnostics
	}
	// A wire.Refusal prints as "refused <code>: <message>".
	if _, after, ok := strings.Cut(rest, ": refused "); ok {
		code, _, _ := strings.Cut(after, ":")
		return refusedByName(workerRefusedPrefix, code)
	}
	switch {
	case strings.Contains(rest, "compile reply unauthenticated"):
		return CauseReplyUnverified
	case strings.Contains(rest, "i/o timeout"):
		return CauseWorkerTimeout
	}
	return CauseWorkerError
}

func refusedByName(prefix, name string) Cause {
	c := Cause(prefix + strings.TrimSpace(name))
	if c.Known() {
		return c
	}
	return Cause(prefix + unrecognisedCode)
}
