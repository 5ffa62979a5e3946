package store

import "fmt"

// BuildStatus is a build's state. The numbers are pinned by gradient-server §9 and stored as
// is.
type BuildStatus uint8

const (
	BuildCreated          BuildStatus = 0 // waiting for dependencies
	BuildQueued           BuildStatus = 1 // startable
	BuildBuilding         BuildStatus = 2 // claimed by a worker (an open assignment exists)
	BuildCompleted        BuildStatus = 3
	BuildFailedPermanent  BuildStatus = 4
	BuildAborted          BuildStatus = 5
	BuildDependencyFailed BuildStatus = 6
	BuildSubstituted      BuildStatus = 7
	BuildFailedTransient  BuildStatus = 8 // failed, retried once NotBefore has passed (gradient-server §6.4)
	BuildFailedTimeout    BuildStatus = 9
)

var buildStatusNames = [...]string{"Created", "Queued", "Building", "Completed", "FailedPermanent",
	"Aborted", "DependencyFailed", "Substituted", "FailedTransient", "FailedTimeout"}

func (s BuildStatus) String() string { return enumName(buildStatusNames[:], uint8(s)) }

// Terminal reports whether the build will not run again on its own.
func (s BuildStatus) Terminal() bool {
	switch s {
	case BuildCreated, BuildQueued, BuildBuilding, BuildFailedTransient:
		return false
	}
	return true
}

// Succeeded reports whether the build's outputs are available to dependents.
func (s BuildStatus) Succeeded() bool { return s == BuildCompleted || s == BuildSubstituted }

// EvaluationStatus is an evaluation's state, pinned by gradient-server §9.
type EvaluationStatus uint8

const (
	EvalQueued               EvaluationStatus = 0
	EvalEvaluatingFlake      EvaluationStatus = 1
	EvalEvaluatingDerivation EvaluationStatus = 2
	EvalBuilding             EvaluationStatus = 3 // the flake job finished; its builds run
	EvalWaiting              EvaluationStatus = 4
	EvalCompleted            EvaluationStatus = 5
	EvalFailed               EvaluationStatus = 6
	EvalAborted              EvaluationStatus = 7
	EvalFetching             EvaluationStatus = 8
)

var evalStatusNames = [...]string{"Queued", "EvaluatingFlake", "EvaluatingDerivation", "Building",
	"Waiting", "Completed", "Failed", "Aborted", "Fetching"}

func (s EvaluationStatus) String() string { return enumName(evalStatusNames[:], uint8(s)) }

// Terminal reports whether the evaluation is finished.
func (s EvaluationStatus) Terminal() bool {
	return s == EvalCompleted || s == EvalFailed || s == EvalAborted
}

// Interrupted reports whether the status means a flake job was running: what recovery
// (gradient-server §6.6) and a lost worker (gradient-server §6.5) put back in the queue.
func (s EvaluationStatus) Interrupted() bool {
	return s == EvalFetching || s == EvalEvaluatingFlake || s == EvalEvaluatingDerivation
}

// AttemptOutcome is a build attempt's result, pinned by gradient-server §9.
type AttemptOutcome uint8

const (
	AttemptRunning     AttemptOutcome = 0
	AttemptBuilt       AttemptOutcome = 1
	AttemptSubstituted AttemptOutcome = 2
	AttemptFailed      AttemptOutcome = 3
	AttemptAborted     AttemptOutcome = 4
)

var attemptOutcomeNames = [...]string{"Running", "Built", "Substituted", "Failed", "Aborted"}

func (o AttemptOutcome) String() string { return enumName(attemptOutcomeNames[:], uint8(o)) }

// FailureKind is the failure a JobFailed reports, in wire.BuildFailureKind's order
// (gradient-server §6.4).
type FailureKind uint8

const (
	// FailTransient: retry up to Policy.MaxBuildAttempts with doubling backoff
	// (FailedTransient meanwhile), then FailedPermanent with the cascade.
	FailTransient FailureKind = iota
	// FailPermanent: FailedPermanent; every build needing it becomes DependencyFailed.
	FailPermanent
	// FailTimeout: FailedTimeout, cascading like FailPermanent.
	FailTimeout
	// FailSubstituteUnavailable: re-queue without using an attempt.
	FailSubstituteUnavailable
	// FailInputsUnavailable: demote the missing paths' cache rows, re-queue the builds that
	// produced them, retry; FailedPermanent after Policy.InputsUnavailableLimit loops.
	FailInputsUnavailable
	// FailCorruptEvalCache: re-queue (the server purges the eval-cache blob).
	FailCorruptEvalCache
	// FailAborted: Aborted, no cascade.
	FailAborted
	// FailCanceled: the worker stopped; re-queue without using an attempt.
	FailCanceled
)

var failureKindNames = [...]string{"Transient", "Permanent", "Timeout", "SubstituteUnavailable",
	"InputsUnavailable", "CorruptEvalCache", "Aborted", "Canceled"}

func (k FailureKind) String() string { return enumName(failureKindNames[:], uint8(k)) }

// MessageLevel is an evaluation message's level, in wire.EvalMessageLevel's order.
type MessageLevel uint8

const (
	LevelError MessageLevel = iota
	LevelWarning
	LevelNotice
)

var levelNames = [...]string{"Error", "Warning", "Notice"}

func (l MessageLevel) String() string { return enumName(levelNames[:], uint8(l)) }

// AssignmentOutcome is how an assignment (dispatched_job row) closed; "" while open.
type AssignmentOutcome string

const (
	OutcomeOpen      AssignmentOutcome = ""
	OutcomeCompleted AssignmentOutcome = "completed"
	OutcomeFailed    AssignmentOutcome = "failed"
	OutcomeAbandoned AssignmentOutcome = "abandoned" // lost worker, restart, server abort
	OutcomeDeclined  AssignmentOutcome = "declined"
)

func enumName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("Unknown(%d)", v)
}
